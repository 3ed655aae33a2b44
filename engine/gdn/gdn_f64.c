/* double instantiation of the GDN templates: the same code, for gradient checks
 * and as the reference the float32 path is compared against. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "core/error.h"
#include "gdn/gdn.h"

#define real double
#define SFX(name) name##_f64
#define GEMM cblas_dgemm
#define TRSM cblas_dtrsm
#include "gdn/gdn_params_tmpl.h"
#include "gdn/gdn_core_tmpl.h"
#include "gdn/gdn_layer_tmpl.h"
