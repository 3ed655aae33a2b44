#include "train/hybrid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unif(uint64_t *s) { return ((double)(next(s) >> 11) + 0.5) / 9007199254740992.0; }
static double normal(uint64_t *s) { return sqrt(-2 * log(unif(s))) * cos(6.283185307179586 * unif(s)); }

int hybrid_random_gdn(hybrid_mixers *h, const model_config *cfg, const model_weights *w, const bool *convert,
                      uint64_t seed) {
    memset(h, 0, sizeof *h);
    const int L = cfg->n_layers, D = cfg->dim, H = cfg->n_heads, KV = cfg->n_kv_heads, hd = cfg->head_dim;
    h->cfg = *cfg;
    h->n_layers = L;
    h->gdn = gf_calloc((size_t)L, sizeof *h->gdn);
    h->mixers = gf_calloc((size_t)L, sizeof *h->mixers);
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 7;
    for (int l = 0; l < L; l++) {
        if (!convert[l]) continue;
        gdn_config gc;
        gdn_config_default(&gc, D, H, hd);
        if (gdn_train_mixer_init(&h->gdn[l], &gc) != 0) {
            hybrid_mixers_free(h);
            return -1;
        }
        gdn_params *p = &h->gdn[l].p;
        const layer_weights *lw = &w->layers[l];
        memcpy(p->wq, lw->wq, (size_t)H * hd * D * sizeof(float));
        gdn_gqa_expand(p->wk, lw->wk, sizeof(float), KV, H / KV, hd, D);
        gdn_gqa_expand(p->wv, lw->wv, sizeof(float), KV, H / KV, hd, D);
        memcpy(p->wo, lw->wo, (size_t)D * H * hd * sizeof(float));
        for (size_t i = 0; i < (size_t)H * hd * D; i++) p->wg[i] = (float)(0.02 * normal(&s));
        for (size_t i = 0; i < (size_t)H * D; i++) p->wa[i] = (float)(0.02 * normal(&s));
        for (size_t i = 0; i < (size_t)H * D; i++) p->wb[i] = (float)(0.02 * normal(&s));
        for (int i = 0; i < H; i++) {
            p->a_log[i] = (float)log(16.0 * unif(&s));
            double dt = exp(log(1e-3) + (log(0.1) - log(1e-3)) * unif(&s));
            if (dt < 1e-4) dt = 1e-4;
            p->dt_bias[i] = (float)(dt + log(-expm1(-dt)));
        }
        for (int i = 0; i < hd; i++) p->w_norm[i] = 1.0f;
        gdn_train_mixer_bind(&h->gdn[l], &h->mixers[l]);
    }
    return 0;
}

void hybrid_mixers_free(hybrid_mixers *h) {
    for (int l = 0; l < h->n_layers; l++)
        if (h->gdn[l].p.block) gdn_train_mixer_free(&h->gdn[l]);
    free(h->gdn);
    free(h->mixers);
    memset(h, 0, sizeof *h);
}

int parse_layer_list(const char *s, int L, bool *convert) {
    for (int l = 0; l < L; l++) convert[l] = false;
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= L) return gf_fail("layer list '%s': expected numbers 0..%d separated by commas", s, L - 1);
        convert[v] = true;
        p = end;
        if (*p == ',') p++;
        else if (*p) return gf_fail("layer list '%s': expected numbers 0..%d separated by commas", s, L - 1);
    }
    return 0;
}
