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

#define GDN_P_DESC_(a, b, d, field_, name_, rows_, cols_, taps_, when_, group_, rank_, doc_)                \
    {#field_, name_, GDN_DIM_##rows_, GDN_DIM_##cols_, GDN_DIM_##taps_, GDN_WHEN_##when_, GDN_GROUP_##group_, \
     rank_, doc_},
const gdn_param_desc gdn_param_descs[GDN_P_COUNT] = {GDN_PARAM_LIST(GDN_P_DESC_, _, _, _)};
#undef GDN_P_DESC_

gdn_lr gdn_group_lr(gdn_group g) {
    switch (g) {
    case GDN_GROUP_QKV_W: case GDN_GROUP_QKV_BIAS: return GDN_LR_QKV;
    case GDN_GROUP_GATE_W: case GDN_GROUP_CONV: case GDN_GROUP_DECAY: return GDN_LR_GATES;
    case GDN_GROUP_FROZEN: break;
    }
    return GDN_LR_FROZEN;
}

size_t gdn_dim_size(const gdn_config *c, gdn_dim d) {
    switch (d) {
    case GDN_DIM_D: return (size_t)c->D;
    case GDN_DIM_H: return (size_t)c->H;
    case GDN_DIM_HK: return (size_t)c->H * c->dk;
    case GDN_DIM_HV: return (size_t)c->H * c->dv;
    case GDN_DIM_DV: return (size_t)c->dv;
    case GDN_DIM_CONV_K: return GDN_CONV_K;
    case GDN_DIM_ONE: return 1;
    }
    return 0;
}

int gdn_param_present(const gdn_config *c, gdn_param_id i) {
    switch (gdn_param_descs[i].when) {
    case GDN_WHEN_ALWAYS: return 1;
    case GDN_WHEN_BIAS: return c->qkv_bias != 0;
    case GDN_WHEN_CONV: return c->conv != 0;
    }
    return 0;
}

size_t gdn_param_size(const gdn_config *c, gdn_param_id i) {
    const gdn_param_desc *d = &gdn_param_descs[i];
    return gdn_param_present(c, i) ? gdn_dim_size(c, d->rows) * gdn_dim_size(c, d->cols) * gdn_dim_size(c, d->taps)
                                   : 0;
}

size_t gdn_param_offset(const gdn_config *c, gdn_param_id i) {
    size_t off = 0;
    for (int j = 0; j < (int)i; j++) off += gdn_param_size(c, (gdn_param_id)j);
    return off;
}

size_t gdn_param_count(const gdn_config *c) { return gdn_param_offset(c, GDN_P_COUNT); }

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
