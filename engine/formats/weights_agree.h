/* A teacher's config against its weights: the numbers a config states that
 * the tensors also show (layer count, hidden size, heads, feed-forward size).
 * The loaders check these before the per-tensor shapes, so that a config
 * which is not the weights' is refused as such: one line naming the file, the
 * config field, its value and what the weights hold, rather than the first
 * tensor that happens to look wrong (or, for extra layers, nothing at all). */
#ifndef GRAFT_FORMATS_WEIGHTS_AGREE_H
#define GRAFT_FORMATS_WEIGHTS_AGREE_H

#include "core/error.h"

/* N when name is "<prefix>N.<rest>" (N a decimal layer index), else -1. */
int tensor_layer(const char *name, const char *prefix);

/* Always -1, with the error "<file>: <field> = <value>, but <what the weights
 * hold, from fmt>". */
int config_disagrees(const char *file, const char *field, long long value, const char *fmt, ...)
    GF_PRINTF(4, 5);

/* The rows of a matrix against heads x head size: 0 when they agree, else -1
 * with config_disagrees' line naming the tensor and its rows. */
int heads_agree(const char *file, const char *field, int heads, int head_dim, const char *tensor,
                unsigned long long rows);

#endif
