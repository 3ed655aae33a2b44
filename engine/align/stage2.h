/* Stage 2 of Taylor-Calibrate (METHOD.md section 6): per-layer local alignment.
 *
 * Teacher-forced: the GDN layer reads x = the teacher's input_layernorm output
 * at layer l and is trained so that its output (after Wo) matches the teacher
 * attention block's output after o_proj; loss = mean squared error over all
 * N x D entries. Full batch (all calibration sequences at once, B = n_seqs),
 * `steps` AdamW steps (betas 0.9/0.999, eps 1e-8, weight decay on every
 * trained tensor), lr_qkv for Wq, Wk, Wv (+ biases), lr_gates for Wa, Wb, Wg,
 * A_log, dt_bias (+ conv); Wo and w_norm frozen (their gradients are not
 * computed); the global gradient norm over the trained tensors clipped at
 * `clip` (coefficient clip / (norm + 1e-6), as torch.nn.utils.clip_grad_norm_).
 *
 * Curves: loss[i] (and heldout[i]) is the loss of the state before update i,
 * i = 0 .. steps-1, and loss[steps] that of the final state; the state with the
 * lowest loss (or held-out loss, keep_best = heldout) is kept. */
#ifndef GRAFT_ALIGN_STAGE2_H
#define GRAFT_ALIGN_STAGE2_H

#include "student/student.h"

typedef struct {
    const float *x, *target; /* host [B*T, D] */
    int B, T;
} align_set;

/* Optional per-step observer (the workbench's live curves). on_step runs on
 * the thread training `layer` (layers train as parallel tasks), so it must be
 * thread-safe; heldout is NaN without held-out tokens. step counts the loss of
 * the state before update `step`, as the curves do (0 .. steps). */
typedef struct {
    void (*on_step)(void *ud, int layer, int step, double loss, double heldout);
    void *ud;
} stage2_observer;

/* Trains the layer whose parameters are block (ACT, gdn_param_count(c)
 * elements, on be) in place. held may be NULL (or have B = 0). r->loss etc.
 * are allocated here. progress (may be NULL) is polled for cancellation and,
 * when report is set, told each step. obs may be NULL; `layer` is passed on. */
int stage2_align(gf_backend *be, const student_settings *set, const gdn_config *c, gf_buf block, const align_set *cal,
                 const align_set *held, stage2_result *r, const progress_sink *progress, bool report,
                 const stage2_observer *obs, int layer);

/* The bytes one layer's Stage 2 allocates on a backend of compute type act
 * (B x T calibration rows, held_B x held_T held-out rows; keeps_wy: the
 * backend's be_gdn_keeps_wy). */
size_t stage2_device_bytes(const gdn_config *c, int B, int T, int held_B, int held_T, gf_dtype act, bool keeps_wy);

/* Mean squared error of the layer on a set (no training); NaN on failure. */
double gdn_layer_mse(gf_backend *be, const gdn_config *c, gf_buf block, const align_set *set);

#endif
