/* The trainable tensors of a train_model as a flat list, each in a parameter
 * group with its own learning rate (METHOD.md 9: attention and GDN vs the rest). */
#ifndef GRAFT_TRAIN_PARAMS_H
#define GRAFT_TRAIN_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "train/train_model.h"

typedef enum { PGROUP_MIXER = 0, /* attention projections, q/k norms, GDN layers */
               PGROUP_REST = 1   /* embeddings, RMSNorms, MLPs, LM head */ } param_group;

typedef struct {
    char name[48];     /* "layers.3.wq", "layers.5.gdn", "tok_embed", ... */
    float *p, *g;      /* [n] parameters and gradients */
    size_t n;
    param_group group;
    bool is_gdn;       /* a mixer block (trained in phase align) */
} param_tensor;

typedef struct {
    param_tensor *t;
    int n;
    size_t total; /* floats over all tensors */
} param_list;

/* Every tensor of tm in a fixed order (embedding, layers, final norm, LM head
 * unless tied); attention tensors of mixer layers are left out (unused). */
void param_list_build(param_list *pl, train_model *tm);
void param_list_free(param_list *pl);

#endif
