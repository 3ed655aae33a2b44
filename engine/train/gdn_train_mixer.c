#include "train/gdn_train_mixer.h"

#include <string.h>

int gdn_train_mixer_init(gdn_train_mixer *gm, const gdn_config *c) {
    memset(gm, 0, sizeof *gm);
    if (gdn_config_check(c) != 0) return -1;
    gm->cfg = *c;
    gdn_params_alloc(&gm->p, c);
    gdn_params_alloc(&gm->g, c);
    return 0;
}

void gdn_train_mixer_free(gdn_train_mixer *gm) {
    gdn_params_free(&gm->p);
    gdn_params_free(&gm->g);
    if (gm->cache_T) gdn_cache_free(&gm->cache);
    memset(gm, 0, sizeof *gm);
}

static int fwd(void *ud, int T, const float *xn, float *out) {
    gdn_train_mixer *gm = ud;
    if (gm->cache_T != T) {
        if (gm->cache_T) gdn_cache_free(&gm->cache);
        gdn_cache_alloc(&gm->cache, &gm->cfg, 1, T);
        gm->cache_T = T;
    }
    gdn_forward(&gm->cfg, &gm->p, &gm->cache, xn, out);
    return 0;
}

static int bwd(void *ud, int T, const float *xn, const float *dout, float *dxn, bool want_param_grads) {
    gdn_train_mixer *gm = ud;
    (void)want_param_grads; /* gdn_backward always accumulates; frozen blocks are never stepped */
    if (gm->cache_T != T) return -1;
    gdn_backward(&gm->cfg, &gm->p, &gm->cache, xn, dout, dxn, &gm->g);
    return 0;
}

void gdn_train_mixer_bind(gdn_train_mixer *gm, train_mixer *out) {
    memset(out, 0, sizeof *out);
    out->forward = fwd;
    out->backward = bwd;
    out->params = gm->p.block;
    out->grads = gm->g.block;
    out->n_params = gm->p.n;
    out->ud = gm;
}
