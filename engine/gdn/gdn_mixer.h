/* A GDN layer as a sequence mixer for the model forward pass (one sequence):
 * keeps the recurrent state between calls, so whole-sequence runs (pos0 = 0)
 * and token-by-token generation (pos0 = tokens so far) both work. Its run
 * function has the shape of model/forward.h's layer_mixer.fn. */
#ifndef GRAFT_GDN_MIXER_H
#define GRAFT_GDN_MIXER_H

#include "gdn/gdn.h"

typedef struct {
    gdn_config cfg;
    const gdn_params *p;  /* borrowed; must outlive the mixer */
    gdn_state st;         /* B = 1 */
    gdn_cache cache;      /* sized to the last call's T; cache.o holds its core output */
    int pos;              /* tokens the state has absorbed */
} gdn_mixer;

/* 0, or -1 with a message when the config is invalid. */
int gdn_mixer_init(gdn_mixer *m, const gdn_config *c, const gdn_params *p);
void gdn_mixer_free(gdn_mixer *m);

/* ud = gdn_mixer*. xn [T, D] -> out [T, D] (after Wo) for positions pos0 .. pos0+T-1.
 * pos0 == 0 starts a new sequence; otherwise pos0 must continue the state
 * (-1 with a message if not). `layer` is unused (one mixer per layer). */
int gdn_mixer_run(void *ud, int layer, int T, int pos0, const float *xn, float *out);

#endif
