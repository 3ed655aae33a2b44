/* Stage 1 of Taylor-Calibrate (METHOD.md section 5): analytic calibration of
 * one converted layer from teacher statistics, no training. Only the
 * components in s->set.stage1 run, in this order, each on the parameters the
 * earlier ones left (a component not chosen keeps the default init's tensors):
 *
 *   1. decay:       A_log = 0; dt_bias_h = softplus^-1(clamp(ln 2 / d_h, 1e-3, 5)),
 *                   d_h the mean distance, or without the sink (set.distance);
 *                   set.half_life = N > 0: dt_bias_h = softplus^-1(ln 2 / N), no clamp
 *   2. write gate:  beta*_h = 0.3 + 0.4 c_h; row h of Wb rescaled
 *                   reference:  Wb[h] <- logit(beta*)/sqrt(D) * Wb[h] / mean|Wb[h]|
 *                   mean-logit: Wb[h] <- Wb[h] * logit(beta*) / mean_t(Wb[h] . x_t)
 *                               (a head whose mean logit is below 1e-8 in size
 *                               falls back to `reference`; counted in the result)
 *   3. value scale: o = the GDN core output (before o_norm) on the calibration
 *                   input with the parameters so far, query scale 1 (set.sigma_fit
 *                   reference, the reference code) or the forward's (scaled);
 *                   sigma*_h = sum(tc_h . o_h) / sum(o_h . o_h),
 *                   clamped to [0.1, 10]; rows of Wv (and bv when kept) for head h
 *                   multiplied by sigma*_h
 *   4. output gate: alpha* = damping * RMS(tc) / RMS(silu(Wv x + bv)), with the
 *                   sigma-scaled Wv; RMS(tc) = mean over (sequence, token, head) of
 *                   each head vector's RMS, the denominator a global RMS; Wg <- alpha* Wv.
 *
 * set.sigma_fit gated (a graft variant) moves the value scale after the output
 * gate: Wv is left alone, sigma*_h is fitted by the same least squares on
 * n_h = RMSNorm(o_h) * w_norm * silu(Wg x)_h (what Wo reads; forward's query
 * scale), clamped to [0.1, 10], and multiplies Wg's rows for head h.
 */
#ifndef GRAFT_CALIBRATE_STAGE1_H
#define GRAFT_CALIBRATE_STAGE1_H

#include "calibrate/capture.h"
#include "student/student.h"

/* Applies Stage 1's chosen components to layer l's parameters p (already
 * default-initialized) and fills r (allocated with layer_report_alloc); the
 * statistics are filled whatever the components, a skipped component's values are NaN.
 * progress (may be NULL): its cancel flag is looked at between components and
 * inside the output gate's pass; -1 with "cancelled" then (p is left part-way). */
int stage1_apply(const student *s, int l, gdn_params *p, const teacher_capture *cal, stage1_result *r,
                 const progress_sink *progress);

#endif
