/* GDN layer as a stateful sequence mixer (see gdn_mixer.h). */
#include "gdn/gdn_mixer.h"

#include <string.h>

#include "core/error.h"

int gdn_mixer_init(gdn_mixer *m, const gdn_config *c, const gdn_params *p) {
    memset(m, 0, sizeof *m);
    if (gdn_config_check(c) != 0) return -1;
    m->cfg = *c;
    m->p = p;
    gdn_state_alloc(&m->st, c, 1);
    return 0;
}

void gdn_mixer_free(gdn_mixer *m) {
    gdn_state_free(&m->st);
    if (m->cache.block) gdn_cache_free(&m->cache);
    memset(m, 0, sizeof *m);
}

int gdn_mixer_run(void *ud, int layer, int T, int pos0, const float *xn, float *out) {
    gdn_mixer *m = ud;
    (void)layer;
    if (T <= 0) return gf_fail("gdn layer: empty input");
    if (pos0 == 0) {
        gdn_state_reset(&m->st);
        m->pos = 0;
    } else if (pos0 != m->pos) {
        return gf_fail("gdn layer: position %d does not continue the recurrent state at %d", pos0,
                       m->pos);
    }
    if (!m->cache.block || m->cache.T != T) {
        if (m->cache.block) gdn_cache_free(&m->cache);
        gdn_cache_alloc(&m->cache, &m->cfg, 1, T);
    }
    gdn_forward_state(&m->cfg, m->p, &m->cache, xn, out, &m->st);
    m->pos = pos0 + T;
    return 0;
}
