/* Token slices a conversion reads, cut from one or two text files so that
 * calibration and evaluation never overlap (docs/method.md, "Data split").
 *
 * From the calibration file's token stream (no BOS; each sequence gets BOS
 * from cut_sequences):
 *   calibration   n_calib sequences of ctx tokens from token 0
 *   align held-out n_heldout sequences of ctx tokens right after them
 * From the evaluation file (the same stream when both name the same file — same device and inode;
 * then it starts after the held-out sequences):
 *   selection     BOS + sel_windows * (ctx - 1) tokens (ar / ga-s2 scores)
 *   evaluation    BOS + up to eval_windows * (ctx - 1) tokens, starting at the
 *                 later of the stream's midpoint and the end of the selection
 *                 slice (eval_windows 0: to the end of the text)
 * Each slice is scored in windows of ctx tokens by eval_nll. */
#ifndef GRAFT_STUDENT_CALIB_SPLIT_H
#define GRAFT_STUDENT_CALIB_SPLIT_H

#include <stddef.h>

#include "core/vec.h"
#include "tokenizer/tokenizer.h"

typedef struct {
    int ctx, n_calib, n_heldout, sel_windows, eval_windows;
} split_spec;

typedef struct {
    int_vec calib;    /* n_calib * ctx */
    int n_calib;
    int_vec heldout;  /* n_heldout * ctx (may be fewer when the text is short: 0 sequences) */
    int n_heldout;
    int_vec select;   /* BOS + tokens */
    int_vec eval;     /* BOS + tokens */
    size_t calib_tokens_total, eval_tokens_total;   /* stream lengths */
    size_t heldout_end, select_begin, select_end, eval_begin, eval_end; /* stream offsets */
    int same_file;
} token_split;

void split_spec_default(split_spec *s); /* ctx 256, 4 calib, 1 held-out, 8 selection, 64 eval windows */

/* eval_path may be NULL (then no selection / evaluation slices). Fails with
 * a one-line error when the calibration text is shorter than one sequence or
 * the evaluation text has no room left. */
int token_split_make(token_split *out, const tokenizer *tok, const char *calib_path, const char *eval_path,
                     const split_spec *spec);
void token_split_free(token_split *s);

#endif
