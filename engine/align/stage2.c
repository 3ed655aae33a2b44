#include "align/stage2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "gdn/gdn_layer.h"
#include "backend/arena.h"

typedef struct {
    size_t off, n; /* into the parameter block */
    double lr;
} trained_span;

/* The trained spans of the block: neighbouring parameters of one optimizer
 * group (gdn_param_descs) are one span; frozen ones are left out. */
static int trained_spans(const gdn_config *c, const student_settings *set, trained_span *out) {
    int k = 0;
    gdn_group last = GDN_GROUP_FROZEN;
    for (int i = 0; i < GDN_P_COUNT; i++) {
        const gdn_group g = gdn_param_descs[i].group;
        const size_t n = gdn_param_size(c, (gdn_param_id)i);
        if (!n || gdn_group_lr(g) == GDN_LR_FROZEN) continue;
        if (k > 0 && g == last && out[k - 1].off + out[k - 1].n == gdn_param_offset(c, (gdn_param_id)i)) {
            out[k - 1].n += n;
            continue;
        }
        const double lr = gdn_group_lr(g) == GDN_LR_QKV ? set->lr_qkv : set->lr_gates;
        out[k++] = (trained_span){gdn_param_offset(c, (gdn_param_id)i), n, lr};
        last = g;
    }
    return k;
}

/* The device side of one layer's training: one allocation. */
typedef struct {
    gf_buf arena;
    gf_buf x, target, y, dy;   /* [N, D] ACT */
    gf_buf hx, htarget, hy;    /* held-out [Nh, D] */
    gdn_acts a, ha;
    gdn_scratch s;
    gf_buf master, grad, m, v, best; /* F32 [n] */
    gf_buf loss;               /* F64 [3]: loss, sum of squares of the gradient, held-out loss */
} stage2_bufs;

static void carve(stage2_bufs *b, arena *ar, const gdn_config *c, const align_set *cal, const align_set *held,
                  gf_dtype act, bool keeps_wy, bool own_master) {
    const size_t D = (size_t)c->D, N = (size_t)cal->B * cal->T, n = gdn_param_count(c);
    b->x = arena_take(ar, N * D, act);
    b->target = arena_take(ar, N * D, act);
    b->y = arena_take(ar, N * D, act);
    b->dy = arena_take(ar, N * D, act);
    gdn_acts_take(&b->a, ar, c, cal->B, cal->T, gdn_keep_for(true, keeps_wy), act);
    gdn_scratch_take(&b->s, ar, c, cal->B, cal->T, act);
    if (held) {
        const size_t Nh = (size_t)held->B * held->T;
        b->hx = arena_take(ar, Nh * D, act);
        b->htarget = arena_take(ar, Nh * D, act);
        b->hy = arena_take(ar, Nh * D, act);
        gdn_acts_take(&b->ha, ar, c, held->B, held->T, GDN_KEEP_NOTHING, act);
    }
    b->master = own_master ? arena_take(ar, n, GF_F32) : gf_none();
    b->grad = arena_take(ar, n, GF_F32);
    b->m = arena_take(ar, n, GF_F32);
    b->v = arena_take(ar, n, GF_F32);
    b->best = arena_take(ar, n, GF_F32);
    b->loss = arena_take(ar, 3, GF_F64);
}

static int open_bufs(stage2_bufs *b, gf_backend *be, const gdn_config *c, const align_set *cal, const align_set *held) {
    memset(b, 0, sizeof *b);
    const bool own_master = be_act(be) != GF_F32;
    arena ar = {gf_none(), 0};
    carve(b, &ar, c, cal, held, be_act(be), be_gdn_keeps_wy(be), own_master);
    if (be_alloc(be, &b->arena, (ar.off + 3) / 4, GF_F32) != 0) return gf_fail_prefix("stage 2");
    ar = (arena){b->arena, 0};
    carve(b, &ar, c, cal, held, be_act(be), be_gdn_keeps_wy(be), own_master);
    const size_t D = (size_t)c->D, N = (size_t)cal->B * cal->T;
    be_upload(be, b->x, cal->x, GF_F32, N * D);
    be_upload(be, b->target, cal->target, GF_F32, N * D);
    if (held) {
        const size_t Nh = (size_t)held->B * held->T;
        be_upload(be, b->hx, held->x, GF_F32, Nh * D);
        be_upload(be, b->htarget, held->target, GF_F32, Nh * D);
    }
    return 0;
}

size_t stage2_device_bytes(const gdn_config *c, int B, int T, int held_B, int held_T, gf_dtype act, bool keeps_wy) {
    stage2_bufs b;
    arena ar = {gf_none(), 0};
    const align_set cal = {NULL, NULL, B, T}, held = {NULL, NULL, held_B, held_T};
    carve(&b, &ar, c, &cal, held_B > 0 ? &held : NULL, act, keeps_wy, act != GF_F32);
    return ar.off;
}

/* Mean squared error of the layer's output y against target over n entries;
 * writes dy (gf_none: no gradient). */
static int mse(gf_backend *be, gf_buf loss, gf_buf dy, gf_buf y, gf_buf target, size_t n, double *out) {
    be_zero(be, loss, 1);
    be_mse(be, loss, dy, y, target, n, (float)(1.0 / (double)n));
    double s = NAN;
    if (be_download(be, &s, GF_F64, loss, 1) != 0) return -1;
    *out = s / (double)n;
    return 0;
}

double gdn_layer_mse(gf_backend *be, const gdn_config *c, gf_buf block, const align_set *set) {
    stage2_bufs b;
    if (open_bufs(&b, be, c, set, NULL) != 0) return NAN;
    gdn_weights w;
    gdn_weights_bind(&w, c, block);
    gdn_acts a = b.a;
    gdn_layer_forward(be, c, &w, &a, b.x, b.y, gf_none(), NULL);
    double l = NAN;
    if (mse(be, b.loss, gf_none(), b.y, b.target, (size_t)set->B * set->T * c->D, &l) != 0) l = NAN;
    be_free(be, &b.arena);
    return l;
}

int stage2_align(gf_backend *be, const student_settings *set, const gdn_config *c, gf_buf block, const align_set *cal,
                 const align_set *held, stage2_result *r, const progress_sink *progress, bool report,
                 const stage2_observer *obs, int layer) {
    const double t0 = clock_now_s();
    const int steps = set->steps;
    if (steps < 0) return gf_fail("stage 2 steps must be >= 0, got %d", steps);
    if (held && held->B <= 0) held = NULL;
    r->steps = steps;
    r->loss = gf_calloc((size_t)steps + 1, sizeof(float));
    r->heldout = held ? gf_calloc((size_t)steps + 1, sizeof(float)) : NULL;
    r->best_heldout = NAN;
    stage2_bufs b;
    if (open_bufs(&b, be, c, cal, held) != 0) return -1;
    const size_t n = gdn_param_count(c);
    const gf_buf master = gf_is_none(b.master) ? block : b.master; /* ACT is F32: the block is the master */
    if (!gf_same(master, block)) be_copy(be, master, block, n);
    be_zero(be, b.m, n);
    be_zero(be, b.v, n);
    be_copy(be, b.best, master, n);
    gdn_weights w, g;
    gdn_weights_bind(&w, c, block);
    gdn_weights_bind(&g, c, b.grad);
    g.w_norm = g.wo = gf_none(); /* frozen: not computed */
    trained_span spans[GDN_P_COUNT];
    const int nspan = trained_spans(c, set, spans);
    const size_t N = (size_t)cal->B * cal->T * c->D, Nh = held ? (size_t)held->B * held->T * c->D : 0;
    double best_key = INFINITY;
    int rc = 0;
    /* One download a step: the losses and the gradient's sum of squares come back together
     * after the backward (the master weights do not change before the update, so the
     * keep-best copy taken then is still the state the losses measured). */
    gf_buf sq = gf_at(b.loss, 1), hl = gf_at(b.loss, 2);
    for (int step = 0; step <= steps && rc == 0; step++) {
        if (progress_cancelled(progress)) {
            rc = gf_fail("cancelled");
            break;
        }
        const bool last = step == steps;
        be_zero(be, b.loss, 3);
        gdn_layer_forward(be, c, &w, &b.a, b.x, b.y, gf_none(), NULL);
        be_mse(be, b.loss, b.dy, b.y, b.target, N, (float)(1.0 / (double)N));
        if (held) {
            gdn_layer_forward(be, c, &w, &b.ha, b.hx, b.hy, gf_none(), NULL);
            be_mse(be, hl, gf_none(), b.hy, b.htarget, Nh, (float)(1.0 / (double)Nh));
        }
        if (!last) {
            if (progress_cancelled(progress)) { /* the backward is the longest part of a step: look first */
                rc = gf_fail("cancelled");
                break;
            }
            be_zero(be, b.grad, n);
            gdn_layer_backward(be, c, &w, &g, &b.a, &b.s, b.x, b.dy, gf_none(), false, true);
            for (int i = 0; i < nspan; i++) be_sumsq(be, sq, gf_at(b.grad, spans[i].off), spans[i].n);
        }
        double sums[3] = {NAN, NAN, NAN};
        if ((rc = be_download(be, sums, GF_F64, b.loss, 3)) != 0) break;
        const double loss = sums[0] / (double)N, hloss = held ? sums[2] / (double)Nh : NAN;
        r->loss[step] = (float)loss;
        if (held) r->heldout[step] = (float)hloss;
        if (obs && obs->on_step) obs->on_step(obs->ud, layer, step, loss, hloss);
        const double key = set->keep_best == KEEP_BEST_HELDOUT && held ? hloss : loss;
        if (key < best_key) {
            best_key = key;
            r->best_step = step;
            r->best_loss = loss;
            r->best_heldout = hloss;
            be_copy(be, b.best, master, n);
        }
        if (last) break;
        const double coef = set->clip / (sqrt(sums[1]) + 1e-6);
        for (int i = 0; i < nspan; i++) {
            const gf_adamw h = {(float)spans[i].lr, 0.9f, 0.999f, 1e-8f, (float)set->weight_decay, step + 1,
                                coef < 1.0 ? (float)coef : 1.0f};
            be_adamw(be, gf_at(master, spans[i].off), !gf_same(master, block) ? gf_at(block, spans[i].off) : gf_none(),
                     gf_at(b.grad, spans[i].off), gf_at(b.m, spans[i].off), gf_at(b.v, spans[i].off), spans[i].n, &h);
        }
        if (report) progress_report(progress, "align", step, steps);
        rc = be_check(be);
    }
    be_copy(be, block, b.best, n);
    if (rc == 0) rc = be_sync(be);
    be_free(be, &b.arena);
    r->seconds = clock_now_s() - t0;
    return rc;
}
