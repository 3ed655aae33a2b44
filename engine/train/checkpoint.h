/* Training checkpoints: everything needed to continue a run bit-exactly.
 * Written atomically (core/atomic_file.h: a temporary sibling, fsync, rename,
 * fsync of the folder), so a crash or SIGKILL at any moment leaves either the
 * previous or the new file.
 *
 * Layout (little-endian, as the host writes it):
 *   "GRAFTCK3"  u64 options_hash  i64 step  i64 tokens  i64 data_cursor  u64 seed
 *   u32 n_tensors, u64 block elements, then u64 offset and u64 size of each tensor
 *   u32 n_curve, then n_curve x (f64 tokens, f64 loss)
 *   u32 n_eval,  then n_eval  x (f64 tokens, f64 eval ppl)
 *   [32] SHA-256 of every byte above (the header: a flipped step counter is caught)
 *   the flat F32 blocks (engine/model/layout.h): master parameters, first
 *   moments, second moments, each tensor's slot after the other (a slot runs
 *   from its offset to the next tensor's: the padding goes with it)
 *   [3 x n_tensors x 32] SHA-256 of each slot of each block, in that order
 *   [32] SHA-256 of that table
 * Reading verifies all of them; a mismatch is refused with the bytes of the
 * file it covers ("tensor layers.3.wq (first moments), bytes 4096..8191").
 * GRAFTCK2 files (no checksums) are refused: they cannot be verified. */
#ifndef GRAFT_TRAIN_CHECKPOINT_H
#define GRAFT_TRAIN_CHECKPOINT_H

#include <stdint.h>

#include "backend/backend.h"
#include "model/layout.h"

typedef struct {
    double *xy; /* [n, 2] */
    int n, cap;
} curve;

void curve_push(curve *c, double x, double y);
void curve_free(curve *c);

typedef struct {
    uint64_t options_hash; /* what must match to resume (shapes, data, schedule) */
    long step;             /* optimizer steps done */
    long tokens;           /* training tokens consumed */
    long data_cursor;      /* next training sequence index */
    uint64_t seed;
    curve loss;            /* (tokens, step loss) per step */
    curve eval;            /* (tokens, held-out perplexity) */
} train_state;

void train_state_free(train_state *s);

/* The blocks a checkpoint holds: F32 [pl->total] each, on be. */
typedef struct {
    gf_backend *be;
    const param_layout *pl;
    gf_buf master, m, v;
} train_blocks;

int checkpoint_write(const char *path, const train_state *s, const train_blocks *b);
/* Reads into s (curves allocated) and the blocks (m and v may be none: only
 * the master parameters are uploaded, as graft halflife does; every block is
 * still checked against its checksums). Fails with a clear message when the
 * file does not match the layout or a checksum (the blocks may then hold part
 * of the file: the caller gives up the run). */
int checkpoint_read(const char *path, train_state *s, const train_blocks *b);

#endif
