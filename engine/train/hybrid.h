/* A hybrid student in memory for training: teacher-format weights (the
 * attention weights of converted layers are kept but unused) plus one GDN
 * mixer per converted layer.
 *
 * hybrid_random_gdn builds METHOD.md section 3's "random" student from a
 * teacher (weight transfer + default init of the new parameters). It is the
 * stand-in used by tests, benchmarks and `graft train --convert` until the
 * student builder (engine/student, `graft convert`) provides students; the
 * trainer only needs the weights and the mixers. */
#ifndef GRAFT_TRAIN_HYBRID_H
#define GRAFT_TRAIN_HYBRID_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "train/gdn_train_mixer.h"
#include "train/train_model.h"

typedef struct {
    model_config cfg;
    int n_layers;
    gdn_train_mixer *gdn;        /* [L]; gdn[l].p.block == NULL for attention layers */
    train_mixer *mixers;   /* [L] bound to gdn; .forward NULL for attention layers */
} hybrid_mixers;

/* convert[l] true: layer l becomes GDN (config gdn_config_default(D, H, hd), chunk 64).
 * Wq/Wk/Wv/Wo transferred from teacher weights w (GQA expanded), Wa, Wb, Wg ~ N(0, 0.02),
 * A_log = log U(0, 16), dt_bias = softplus^-1(dt), dt = exp U(ln 1e-3, ln 0.1) floored at 1e-4,
 * w_norm = 1. */
int hybrid_random_gdn(hybrid_mixers *h, const model_config *cfg, const model_weights *w, const bool *convert,
                      uint64_t seed);
void hybrid_mixers_free(hybrid_mixers *h);

/* "0,4,8" -> convert[] of L entries. -1 with an error on bad input. */
int parse_layer_list(const char *s, int L, bool *convert);

#endif
