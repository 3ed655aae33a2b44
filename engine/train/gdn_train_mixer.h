/* A GDN layer (engine/gdn) as a train_mixer: forward and backward through
 * gdn_forward / gdn_backward for one sequence (B = 1), parameters and
 * gradients in gdn_params blocks. */
#ifndef GRAFT_TRAIN_GDN_TRAIN_MIXER_H
#define GRAFT_TRAIN_GDN_TRAIN_MIXER_H

#include "gdn/gdn.h"
#include "train/train_model.h"

typedef struct {
    gdn_config cfg;
    gdn_params p;     /* parameters (zeroed by init; the caller fills them) */
    gdn_params g;     /* gradients */
    gdn_cache cache;  /* for the current sequence length */
    int cache_T;
} gdn_train_mixer;

/* 0 or -1 when the config is invalid. */
int gdn_train_mixer_init(gdn_train_mixer *gm, const gdn_config *c);
void gdn_train_mixer_free(gdn_train_mixer *gm);
/* Fills a train_mixer that forwards to gm (which must outlive it). */
void gdn_train_mixer_bind(gdn_train_mixer *gm, train_mixer *out);

#endif
