/* GDN layer configuration: defaults, validation, derived sizes, names. */
#include "gdn/gdn.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

void gdn_config_default(gdn_config *c, int D, int H, int head_dim) {
    memset(c, 0, sizeof *c);
    c->D = D;
    c->H = H;
    c->dk = head_dim;
    c->dv = head_dim;
    c->chunk = 64;
    c->scale_mode = GDN_SCALE_INV_SQRT_DK;
    c->form = GDN_FORM_CHUNKED;
    c->norm_eps = GDN_NORM_EPS;
}

int gdn_config_check(const gdn_config *c) {
    if (c->D <= 0 || c->H <= 0 || c->dk <= 0 || c->dv <= 0)
        return gf_fail("gdn: sizes must be positive (D %d, H %d, dk %d, dv %d)", c->D, c->H,
                       c->dk, c->dv);
    if (c->chunk != 16 && c->chunk != 32 && c->chunk != 64)
        return gf_fail("gdn: chunk must be 16, 32 or 64 (got %d)", c->chunk);
    if (c->scale_mode != GDN_SCALE_INV_SQRT_DK && c->scale_mode != GDN_SCALE_NONE)
        return gf_fail("gdn: unknown query scale mode %d", (int)c->scale_mode);
    if (c->form != GDN_FORM_CHUNKED && c->form != GDN_FORM_RECURRENT)
        return gf_fail("gdn: unknown recurrence form %d", (int)c->form);
    if (!(c->norm_eps > 0))
        return gf_fail("gdn: norm_eps must be positive (got %g)", c->norm_eps);
    return 0;
}

double gdn_query_scale(const gdn_config *c) {
    return c->scale_mode == GDN_SCALE_NONE ? 1.0 : 1.0 / sqrt((double)c->dk);
}

const char *gdn_scale_name(gdn_scale_mode m) {
    return m == GDN_SCALE_NONE ? "none" : "dk^-1/2";
}

const char *gdn_form_name(gdn_form f) {
    return f == GDN_FORM_RECURRENT ? "recurrent" : "chunked";
}

int gdn_in_width(const gdn_config *c) { return 2 * c->H * c->dk + 2 * c->H * c->dv + 2 * c->H; }

int gdn_qkv_width(const gdn_config *c) { return 2 * c->H * c->dk + c->H * c->dv; }

size_t gdn_param_count(const gdn_config *c) {
    size_t D = (size_t)c->D, qkv = (size_t)gdn_qkv_width(c);
    size_t n = (size_t)gdn_in_width(c) * D;                   /* wq wk wv wg wa wb */
    if (c->qkv_bias) n += qkv;                                 /* bq bk bv */
    if (c->conv) n += qkv * GDN_CONV_K;                        /* conv_q conv_k conv_v */
    n += 2 * (size_t)c->H + (size_t)c->dv;                     /* A_log dt_bias w_norm */
    n += D * (size_t)c->H * (size_t)c->dv;                     /* wo */
    return n;
}

void gdn_core_shape_from(gdn_core_shape *s, const gdn_config *c, int B, int T) {
    s->B = B;
    s->T = T;
    s->H = c->H;
    s->dk = c->dk;
    s->dv = c->dv;
    s->chunk = c->chunk;
    s->scale = gdn_query_scale(c);
    s->form = c->form;
}

void gdn_gqa_expand(void *dst, const void *src, size_t elem, int kv_heads, int group, int hd,
                    int D) {
    size_t head = (size_t)hd * (size_t)D * elem;
    for (int h = 0; h < kv_heads; h++)
        for (int r = 0; r < group; r++)
            memcpy((char *)dst + ((size_t)h * group + r) * head,
                   (const char *)src + (size_t)h * head, head);
}
