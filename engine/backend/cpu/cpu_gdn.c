/* The Gated DeltaNet ops of the CPU backend: the float32 instantiation of the
 * GDN templates (the same source is compiled for double in gdn_ref_f64.c, the
 * reference the tests check against). */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/gdn_parts.h"
#include "core/error.h"

#define real float
#define SFX(name) name##_f32
#define GEMM cblas_sgemm
#define TRSM cblas_strsm
#include "backend/cpu/gdn_core_tmpl.h"
#include "backend/cpu/gdn_parts_tmpl.h"

static gdn_core_dims core_shape(const gf_gdn_shape *s) {
    gdn_core_dims c = {s->B, s->T, s->H, s->dk, s->dv, s->chunk, s->scale, s->recurrent};
    return c;
}

static gdn_part_dims part_dims(const gf_gdn_dims *d) {
    gdn_part_dims p = {d->B, d->T, d->D, d->H, d->dk, d->dv, d->conv, d->norm_eps};
    return p;
}

static float *opt(gf_buf b) { return gf_is_none(b) ? NULL : cpu_f(b); }

/* The CPU's backward recomputes each chunk token by token: a checkpoint with
 * room for WY products (be_gdn_keeps_wy is false here) is a caller's mistake. */
static bool no_kept_wy(gf_backend *be, const gf_gdn_shape *s, const char *op) {
    if (s->keep_wy) be_set_error(be, "%s: the CPU backend keeps no WY products (keep_wy)", op);
    return !s->keep_wy;
}

void cpu_gdn_core(gf_backend *be, gf_buf o, gf_buf ckpt, gf_buf state, gf_buf q, gf_buf k, gf_buf v, gf_buf g,
                  gf_buf beta, const gf_gdn_shape *s) {
    if (!no_kept_wy(be, s, "gdn_core")) return;
    gdn_core_dims cs = core_shape(s);
    const int nt = be_threads(be);
    float *work = cpu_scratch(be, (size_t)nt * core_work_f32(&cs) * sizeof(float), "gdn core");
    if (!work) return;
    core_forward_w_f32(&cs, cpu_f(q), cpu_f(k), cpu_f(v), cpu_f(g), cpu_f(beta), cpu_f(o), opt(ckpt), opt(state), nt,
                       work);
    free(work);
}

void cpu_gdn_core_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf d_o,
                           gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt, const gf_gdn_shape *s) {
    if (!no_kept_wy(be, s, "gdn_core_backward")) return;
    gdn_core_dims cs = core_shape(s);
    const int nt = be_threads(be);
    float *work = cpu_scratch(be, (size_t)nt * core_work_f32(&cs) * sizeof(float), "gdn core backward");
    if (!work) return;
    core_backward_w_f32(&cs, cpu_f(q), cpu_f(k), cpu_f(v), cpu_f(g), cpu_f(beta), cpu_f(ckpt), cpu_f(d_o), cpu_f(dq),
                        cpu_f(dk), cpu_f(dv), cpu_f(dg), cpu_f(dbeta), nt, work);
    free(work);
}

void cpu_gdn_prep(gf_backend *be, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta,
                  gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,
                  const gf_gdn_dims *d) {
    gdn_part_dims pd = part_dims(d);
    gdn_prep_part_f32(&pd, cpu_f(proj), opt(bqkv), d->conv ? cpu_f(conv_w) : NULL, opt(conv_tail), cpu_f(a_log),
                      cpu_f(dt_bias), cpu_f(qkv_pre), cpu_f(q), cpu_f(k), cpu_f(v), cpu_f(g), cpu_f(beta),
                      be_threads(be));
}

void cpu_gdn_prep_backward(gf_backend *be, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w, gf_buf da_log, gf_buf ddt_bias,
                           gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf proj, gf_buf qkv_pre,
                           gf_buf q, gf_buf k, gf_buf g, gf_buf beta, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,
                           const gf_gdn_dims *d) {
    gdn_part_dims pd = part_dims(d);
    gdn_cols pc = gdn_cols_of(&pd);
    float *dC = cpu_scratch(be, (size_t)d->B * d->T * pc.qkv * sizeof(float), "gdn prep backward");
    if (!dC) return;
    gdn_prep_backward_part_f32(&pd, cpu_f(proj), cpu_f(qkv_pre), cpu_f(q), cpu_f(k), cpu_f(g), cpu_f(beta),
                               d->conv ? cpu_f(conv_w) : NULL, cpu_f(a_log), cpu_f(dt_bias), cpu_f(dq), cpu_f(dk),
                               cpu_f(dv), cpu_f(dg), cpu_f(dbeta), cpu_f(dproj), opt(dbqkv),
                               d->conv ? opt(dconv_w) : NULL, opt(da_log), opt(ddt_bias), dC, be_threads(be));
    free(dC);
}

void cpu_gdn_gated_norm(gf_backend *be, gf_buf z, gf_buf rstd, gf_buf o, gf_buf proj, gf_buf w_norm,
                        const gf_gdn_dims *d) {
    gdn_part_dims pd = part_dims(d);
    gdn_gated_norm_part_f32(&pd, cpu_f(o), cpu_f(proj), cpu_f(w_norm), cpu_f(z), opt(rstd), be_threads(be));
}

void cpu_gdn_gated_norm_backward(gf_backend *be, gf_buf d_o, gf_buf dproj, gf_buf dw_norm, gf_buf dz, gf_buf o,
                                 gf_buf rstd, gf_buf proj, gf_buf w_norm, const gf_gdn_dims *d) {
    gdn_part_dims pd = part_dims(d);
    float *work = cpu_scratch(be, gated_norm_work_f32(&pd) * sizeof(float), "gdn gated norm backward");
    if (!work) return;
    gdn_gated_norm_backward_part_f32(&pd, cpu_f(dz), cpu_f(o), cpu_f(rstd), cpu_f(proj), cpu_f(w_norm), cpu_f(d_o),
                                     cpu_f(dproj), opt(dw_norm), work, be_threads(be));
    free(work);
}
