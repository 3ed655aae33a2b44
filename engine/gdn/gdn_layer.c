/* One GDN layer composed of backend ops (see gdn_layer.h). */
#include "gdn/gdn_layer.h"

#include <string.h>

#include "core/error.h"

void gdn_weights_bind(gdn_weights *w, const gdn_config *c, gf_buf block) {
    memset(w, 0, sizeof *w);
    if (gf_is_none(block)) return;
#define AT(id) (gdn_param_present(c, id) ? gf_at(block, gdn_param_offset(c, id)) : gf_none())
    w->win = AT(GDN_P_wq); /* wq..wb: the fused input projection */
    w->bqkv = AT(GDN_P_bq);
    w->conv = AT(GDN_P_conv_q);
    w->a_log = AT(GDN_P_a_log);
    w->dt_bias = AT(GDN_P_dt_bias);
    w->w_norm = AT(GDN_P_w_norm);
    w->wo = AT(GDN_P_wo);
#undef AT
}

static gf_gdn_shape shape_of(const gdn_config *c, int B, int T, bool keep_wy);

void gdn_acts_take(gdn_acts *a, arena *ar, const gdn_config *c, int B, int T, gdn_keep keep, gf_dtype act) {
    const size_t N = (size_t)B * T, H = (size_t)c->H, hk = H * c->dk, hv = H * c->dv;
    a->B = B, a->T = T;
    a->proj = arena_take(ar, N * gdn_in_width(c), act);
    a->qkv_pre = arena_take(ar, N * gdn_qkv_width(c), act);
    a->q = arena_take(ar, N * hk, act);
    a->k = arena_take(ar, N * hk, act);
    a->v = arena_take(ar, N * hv, act);
    a->o = arena_take(ar, N * hv, act);
    a->z = arena_take(ar, N * hv, act);
    a->g = arena_take(ar, N * H, GF_F32);
    a->beta = arena_take(ar, N * H, GF_F32);
    a->rstd = arena_take(ar, N * H, GF_F32);
    a->keep_wy = keep == GDN_KEEP_STATES_WY;
    const gf_gdn_shape s = shape_of(c, B, T, a->keep_wy);
    a->ckpt = keep != GDN_KEEP_NOTHING ? arena_take(ar, gf_gdn_ckpt_floats(&s, act), GF_F32) : gf_none();
}

void gdn_scratch_take(gdn_scratch *s, arena *ar, const gdn_config *c, int B, int T, gf_dtype act) {
    const size_t N = (size_t)B * T, H = (size_t)c->H, hk = H * c->dk, hv = H * c->dv;
    s->dz = arena_take(ar, N * hv, act);
    s->dproj = arena_take(ar, N * gdn_in_width(c), act);
    s->dq = arena_take(ar, N * hk, act);
    s->dk = arena_take(ar, N * hk, act);
    s->dv = arena_take(ar, N * hv, act);
    s->dg = arena_take(ar, N * H, GF_F32);
    s->dbeta = arena_take(ar, N * H, GF_F32);
}

void gdn_state_take(gdn_state *s, arena *ar, const gdn_config *c, int B, gf_dtype act) {
    s->S = arena_take(ar, (size_t)B * c->H * c->dv * c->dk, GF_F32);
    s->tail = c->conv ? arena_take(ar, (size_t)B * (GDN_CONV_K - 1) * gdn_qkv_width(c), act) : gf_none();
}

void gdn_state_zero(gf_backend *be, const gdn_state *s, const gdn_config *c, int B) {
    be_zero(be, s->S, (size_t)B * c->H * c->dv * c->dk);
    if (!gf_is_none(s->tail)) be_zero(be, s->tail, (size_t)B * (GDN_CONV_K - 1) * gdn_qkv_width(c));
}

static gf_gdn_dims dims_of(const gdn_config *c, int B, int T) {
    gf_gdn_dims d = {B, T, c->D, c->H, c->dk, c->dv, c->conv != 0, (float)c->norm_eps};
    return d;
}

static gf_gdn_shape shape_of(const gdn_config *c, int B, int T, bool keep_wy) {
    gf_gdn_shape s = {B, T, c->H, c->dk, c->dv, c->chunk, (float)gdn_query_scale(c), c->form == GDN_FORM_RECURRENT,
                      keep_wy};
    return s;
}

void gdn_layer_forward(gf_backend *be, const gdn_config *c, const gdn_weights *w, const gdn_acts *a, gf_buf x,
                       gf_buf y, gf_buf y_add, const gdn_state *st) {
    const int B = a->B, T = a->T, N = B * T, D = c->D, hv = c->H * c->dv;
    const gf_gdn_dims d = dims_of(c, B, T);
    const gf_gdn_shape s = shape_of(c, B, T, a->keep_wy);
    be_linear(be, a->proj, x, w->win, gf_none(), N, D, gdn_in_width(c), false);
    be_gdn_prep(be, a->qkv_pre, a->q, a->k, a->v, a->g, a->beta, st ? st->tail : gf_none(), a->proj, w->bqkv, w->conv,
                w->a_log, w->dt_bias, &d);
    be_gdn_core(be, a->o, a->ckpt, st ? st->S : gf_none(), a->q, a->k, a->v, a->g, a->beta, &s);
    be_gdn_gated_norm(be, a->z, a->rstd, a->o, a->proj, w->w_norm, &d);
    be_linear_add(be, y, a->z, w->wo, gf_none(), N, hv, D, y_add);
}

void gdn_layer_backward(gf_backend *be, const gdn_config *c, const gdn_weights *w, const gdn_weights *g,
                        const gdn_acts *a, const gdn_scratch *s, gf_buf x, gf_buf dy, gf_buf dx, bool accumulate_dx,
                        bool accumulate_dW) {
    const int B = a->B, T = a->T, N = B * T, D = c->D, hv = c->H * c->dv;
    const gf_gdn_dims d = dims_of(c, B, T);
    const gf_gdn_shape sh = shape_of(c, B, T, a->keep_wy);
    /* y = z Wo^T */
    be_linear_backward(be, s->dz, g->wo, gf_none(), dy, a->z, w->wo, N, hv, D, false, accumulate_dW);
    be_gdn_gated_norm_backward(be, s->dz, s->dproj, g->w_norm, s->dz, a->o, a->rstd, a->proj, w->w_norm, &d);
    be_gdn_core_backward(be, s->dq, s->dk, s->dv, s->dg, s->dbeta, s->dz, a->q, a->k, a->v, a->g, a->beta, a->ckpt,
                         &sh);
    be_gdn_prep_backward(be, s->dproj, g->bqkv, g->conv, g->a_log, g->dt_bias, s->dq, s->dk, s->dv, s->dg, s->dbeta,
                         a->proj, a->qkv_pre, a->q, a->k, a->g, a->beta, w->conv, w->a_log, w->dt_bias, &d);
    /* proj = x W_in^T */
    be_linear_backward(be, dx, g->win, gf_none(), s->dproj, x, w->win, N, D, gdn_in_width(c), accumulate_dx,
                       accumulate_dW);
}

int gdn_layer_run_host(gf_backend *be, const gdn_config *c, const gdn_params *p, const float *x, int B, int T,
                       float *y, float *o) {
    const size_t N = (size_t)B * T, D = (size_t)c->D;
    const gf_dtype act = be_act(be);
    arena ar = {gf_none(), 0};
    gf_buf block, xb, yb;
    gdn_acts a;
    for (int pass = 0; pass < 2; pass++) {
        block = arena_take(&ar, p->n, act);
        xb = arena_take(&ar, N * D, act);
        yb = arena_take(&ar, N * D, act);
        gdn_acts_take(&a, &ar, c, B, T, GDN_KEEP_NOTHING, act);
        if (pass) break;
        gf_buf all;
        if (be_alloc(be, &all, (ar.off + 3) / 4, GF_F32) != 0) return gf_fail_prefix("a GDN layer");
        ar = (arena){all, 0};
    }
    gdn_weights w;
    gdn_weights_bind(&w, c, block);
    be_upload(be, block, p->block, GF_F32, p->n);
    be_upload(be, xb, x, GF_F32, N * D);
    gdn_layer_forward(be, c, &w, &a, xb, yb, gf_none(), NULL);
    int rc = 0;
    if (y) rc = be_download(be, y, GF_F32, yb, N * D);
    if (o && rc == 0) rc = be_download(be, o, GF_F32, a.o, N * (size_t)c->H * c->dv);
    if (rc == 0) rc = be_sync(be);
    gf_buf base = ar.base;
    be_free(be, &base);
    return rc;
}
