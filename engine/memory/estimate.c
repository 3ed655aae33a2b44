/* Backend memory a job needs (estimate.h): the allocators' own measures
 * added up per phase. */
#include "memory/estimate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align/stage2.h"
#include "core/error.h"
#include "gdn/gdn_layer.h"
#include "model/layout.h"

const char *mem_part_name(mem_part p) {
    static const char *const names[MEM_PART_COUNT] = {
        "weights", "gdn_layers", "activations", "kv_cache", "build", "train_blocks", "moments", "train_runs", "scratch"};
    return p >= 0 && p < MEM_PART_COUNT ? names[p] : "?";
}

void mem_job_init(mem_job *j, const model_config *cfg, gf_dtype act, bool device) {
    memset(j, 0, sizeof *j);
    j->cfg = cfg;
    j->act = act;
    j->device = device;
    j->teachers = 1;
    j->tasks = 1;
    gdn_config_default(&j->gcfg, cfg->dim, cfg->n_heads, cfg->head_dim);
}

/* kinds [L]: the first n layers GDN, the rest attention (sizes do not depend on which). */
static mixer_kind *kinds_with(const model_config *c, int n_gdn) {
    mixer_kind *k = gf_calloc((size_t)(c->n_layers > 0 ? c->n_layers : 1), sizeof *k);
    for (int l = 0; l < c->n_layers; l++) k[l] = l < n_gdn ? MIX_GDN : MIX_ATTN;
    return k;
}

/* Elements of a parameter block of this layout (alignment padding included). */
static int layout_elems(const model_config *c, const gdn_config *g, int n_gdn, size_t *out) {
    mixer_kind *k = kinds_with(c, n_gdn);
    param_layout pl;
    int rc = param_layout_build(&pl, c, k, n_gdn > 0 ? g : NULL);
    if (rc == 0) *out = pl.total;
    param_layout_free(&pl);
    free(k);
    return rc;
}

static size_t run_bytes(const mem_job *j, const tf_run_opts *o, int n_gdn) {
    mixer_kind *k = kinds_with(j->cfg, n_gdn);
    const size_t b = tf_run_measure(j->cfg, &j->gcfg, k, o, j->act, j->device);
    free(k);
    return b;
}

/* Stage 1 runs one layer at a time on the calibration rows (gdn_layer_run_host):
 * its block, x, y and the forward's activations. */
static size_t stage1_bytes(const mem_job *j) {
    arena ar = {gf_none(), 0};
    const size_t N = (size_t)j->build_B * j->build_T, D = (size_t)j->cfg->dim;
    gdn_acts a;
    arena_take(&ar, gdn_param_count(&j->gcfg), j->act);
    arena_take(&ar, N * D, j->act);
    arena_take(&ar, N * D, j->act);
    gdn_acts_take(&a, &ar, &j->gcfg, j->build_B, j->build_T, GDN_KEEP_NOTHING, j->act);
    return ar.off;
}

int mem_estimate_job(mem_estimate *out, const mem_job *j) {
    memset(out, 0, sizeof *out);
    const model_config *c = j->cfg;
    const size_t as = gf_dtype_size(j->act);
    const bool any_gdn = j->gdn_blocks > 0 || j->run_gdn[0] > 0 || j->run_gdn[1] > 0 || j->build_B > 0 || j->train_gdn > 0;
    if (any_gdn && gdn_config_check(&j->gcfg) != 0) return -1;
    size_t teacher_elems;
    if (layout_elems(c, &j->gcfg, 0, &teacher_elems) != 0) return -1;
    out->part[MEM_WEIGHTS] = (size_t)j->teachers * teacher_elems * as;
    out->part[MEM_GDN] = (size_t)j->gdn_blocks * gdn_param_count(&j->gcfg) * as;

    size_t run = 0, build = 0, train = 0;
    for (int i = 0; i < 2; i++) {
        const tf_run_opts *o = &j->run[i];
        if (o->B <= 0 || o->T <= 0) continue;
        const size_t b = run_bytes(j, o, j->run_gdn[i]);
        if (b <= run) continue;
        run = out->part[MEM_ACTIVATIONS] = b;
        const size_t S = (size_t)(o->S > o->T ? o->S : o->T);
        out->part[MEM_KV_CACHE] = (size_t)(c->n_layers - j->run_gdn[i]) * 2 * o->B * S * c->n_kv_heads * c->head_dim * as;
    }
    if (j->build_B > 0) {
        build = stage1_bytes(j);
        if (j->stage2) {
            const size_t s2 = (size_t)(j->tasks > 0 ? j->tasks : 1) *
                              stage2_device_bytes(&j->gcfg, j->build_B, j->build_T, j->held_B, j->held_T, j->act,
                                                 j->device);
            if (s2 > build) build = s2;
        }
        out->part[MEM_BUILD] = build;
    }
    if (j->train_B > 0) {
        size_t n;
        if (layout_elems(c, &j->gcfg, j->train_gdn, &n) != 0) return -1;
        /* tf_trainable: parameters (ACT), a float32 master unless ACT is float32, float32 gradients */
        out->part[MEM_TRAIN_BLOCKS] = n * (as + (j->act == GF_F32 ? 0 : 4) + 4);
        out->part[MEM_MOMENTS] = 2 * n * 4;
        /* the trainer's runs: the student's (training) and the teacher's, with the
         * logits in row chunks (tf_logit_rows); the evaluation run; the
         * align phase's two [N, D] buffers per GDN layer */
        const size_t N = (size_t)j->train_B * j->train_T;
        const tf_run_opts so = {.B = j->train_B, .T = j->train_T, .train = true, .recompute = j->recompute};
        const tf_run_opts to = {.B = j->train_B, .T = j->train_T};
        const tf_run_opts eo = {.B = j->eval_B > 0 ? j->eval_B : j->train_B, .T = j->train_T};
        size_t runs = run_bytes(j, &so, j->train_gdn) + run_bytes(j, &to, 0) + run_bytes(j, &eo, j->train_gdn);
        if (j->sample_B > 0) {
            const tf_run_opts gen = {.B = j->sample_B, .T = 1, .S = j->train_T, .decode = true, .logit_rows = j->sample_B};
            runs += run_bytes(j, &gen, 0);
        }
        const size_t per = (N * (size_t)c->dim + 15) / 16 * 16;
        runs += (2 * per * (size_t)(j->align ? j->train_gdn : 0) + 16) * as;
        out->part[MEM_TRAIN_RUNS] = runs;
        train = out->part[MEM_TRAIN_BLOCKS] + out->part[MEM_MOMENTS] + runs;
    }
    if (j->device) {
        out->part[MEM_SCRATCH] = MEM_SCRATCH_STREAMS * MEM_SCRATCH_STREAM + MEM_SCRATCH_STAGE + MEM_SCRATCH_KERNELS;
        if (j->train_B > 0) /* the attention backward's float32 dq, dk and dv accumulators */
            out->part[MEM_SCRATCH] +=
                (size_t)j->train_B * j->train_T * (c->n_heads + 2 * (size_t)c->n_kv_heads) * c->head_dim * 4;
    }
    size_t peak = 0;
    out->peak_phase = "load";
    if (run > peak) peak = run, out->peak_phase = "run";
    if (build > peak) peak = build, out->peak_phase = "build";
    if (train > peak) peak = train, out->peak_phase = "train";
    out->total = out->part[MEM_WEIGHTS] + out->part[MEM_GDN] + peak + out->part[MEM_SCRATCH];
    return 0;
}

void mem_format(char *buf, size_t n, size_t bytes) {
    const double b = (double)bytes;
    if (b >= 1e9) snprintf(buf, n, "%.1f GB", b / 1e9);
    else if (b >= 1e6) snprintf(buf, n, "%.1f MB", b / 1e6);
    else if (b >= 1e3) snprintf(buf, n, "%.1f kB", b / 1e3);
    else snprintf(buf, n, "%zu B", bytes);
}

int mem_check(size_t need, size_t free_bytes, const char *device, bool limit) {
    if (need <= free_bytes) return 0;
    char a[32], b[32];
    mem_format(a, sizeof a, need);
    mem_format(b, sizeof b, free_bytes);
    return gf_fail("needs %s on %s, %s %s", a, device, b, limit ? "allowed by GRAFT_MEM_LIMIT" : "free");
}

int mem_limit_from_env(size_t *out) {
    *out = 0;
    const char *s = getenv("GRAFT_MEM_LIMIT");
    if (!s || !*s) return 0;
    char *end;
    const double v = strtod(s, &end);
    double unit = 1;
    const char u = (char)toupper((unsigned char)*end);
    if (u == 'K' || u == 'M' || u == 'G' || u == 'T') {
        const int k = u == 'K' ? 1 : u == 'M' ? 2 : u == 'G' ? 3 : 4;
        const bool bin = end[1] == 'i' || end[1] == 'I';
        for (int i = 0; i < k; i++) unit *= bin ? 1024 : 1000;
        end += bin ? 2 : 1;
        if (toupper((unsigned char)*end) == 'B') end++;
    } else if (u == 'B') {
        end++;
    }
    if (end == s || *end || !(v > 0) || v * unit > 1e18)
        return gf_fail("GRAFT_MEM_LIMIT='%s': expected a size such as 40G, 512M or 1.5GiB", s);
    *out = (size_t)(v * unit);
    return 0;
}
