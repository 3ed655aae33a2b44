/* float32 instantiation of the GDN templates: the production path. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "core/error.h"
#include "gdn/gdn.h"

#define real float
#define SFX(name) name
#define GEMM cblas_sgemm
#define TRSM cblas_strsm
#include "gdn/gdn_params_tmpl.h"
#include "gdn/gdn_core_tmpl.h"
#include "gdn/gdn_layer_tmpl.h"
