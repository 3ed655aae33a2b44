/* Host parameters of a GDN layer: one zeroed block and its named views. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gdn/gdn.h"

void gdn_params_views(gdn_params *p, const gdn_config *c, float *block) {
    GDN_PARAMS_CARVE(p, c, block); /* sets every field */
}

void gdn_params_alloc(gdn_params *p, const gdn_config *c) {
    GF_ASSERT(gdn_config_check(c) == 0);
    gdn_params_views(p, c, gf_calloc(gdn_param_count(c), sizeof(float)));
}

void gdn_params_free(gdn_params *p) {
    free(p->block);
    memset(p, 0, sizeof *p);
}
