/* Taylor-Calibrate on the CUDA backend against the same conversion on the CPU
 * backend (the float32 reference), on the qwen2 fixture (layer 1 converted)
 * and on stories260K (layers 2 and 4, head dim 8): the teacher capture and
 * Stage 1 (per-head mean distance, entropy, concentration, dt_bias, beta*,
 * sigma*, and alpha*), the 300-step Stage 2 curve of every converted layer
 * (calibration loss before each step and after the last, and the held-out
 * curve), and the converted student's perplexity on other tokens. Both sides
 * see the same token ids (no tokenizer: the fixture has none).
 *
 * Tolerances, fp32 (two float32 computations, other summation orders):
 *   Stage 1 quantities 1e-4 relative L2 per quantity and layer (the statistics
 *     are sums over ~1e3 rows, ~1e-6 relative each; sigma* is a least-squares
 *     ratio of such sums), alpha* 1e-4 relative;
 *   Stage 2: every point of both curves within 2e-3 of the CPU's point,
 *     relative (AdamW turns a relative gradient difference e into update
 *     differences of the same order; over 300 steps of this smooth regression
 *     they stay ~1e-4; 2e-3 leaves room, and a wrong kernel moves the curve by
 *     far more);
 *   perplexity 1e-3 relative.
 * bf16 (every activation and the Stage 2 compute copy rounded to 8 bits):
 *   Stage 1 3e-2 relative L2 (the teacher statistics' bf16 tolerance of
 *   test_cuda_model); Stage 2: the final (kept) loss within 10 % of the CPU's,
 *   and lower than the first point; perplexity 5e-2 relative.
 *   build/gpu/test_cuda_convert        (make test-gpu)
 *   GRAFT_GPU_TEST_DEVICE=cpu ...      the program checked without a GPU
 * Exit 0 passed, 1 failed, 77 no GPU / no CUDA in the build. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "calibrate/capture.h"
#include "core/error.h"
#include "formats/model_load.h"
#include "model/model.h"
#include "convert/build.h"
#include "student/student.h"
#include "tests/gpu/gpu_result.h"


enum { SEQS = 4, T = 64, EVAL_TOKENS = 1024, STEPS = 300 };

typedef struct {
    int L, H;
    layer_report *rep; /* [L], copied out of the student */
    bool *conv;        /* [L] */
    double ppl;
} conv_out;

/* Deep copy of the report arrays we compare (the student frees its own). */
static void keep_report(layer_report *dst, const layer_report *src, int H) {
    layer_report_alloc(dst, H, src->layer);
    const size_t hb = (size_t)H * sizeof(double);
    memcpy(dst->s1.dist, src->s1.dist, hb);
    memcpy(dst->s1.entropy, src->s1.entropy, hb);
    memcpy(dst->s1.conc, src->s1.conc, hb);
    memcpy(dst->s1.dt_bias, src->s1.dt_bias, hb);
    memcpy(dst->s1.beta_star, src->s1.beta_star, hb);
    memcpy(dst->s1.sigma_star, src->s1.sigma_star, hb);
    dst->s1.alpha_star = src->s1.alpha_star;
    dst->s2.steps = src->s2.steps;
    dst->s2.best_loss = src->s2.best_loss;
    dst->s2.loss = malloc((size_t)(src->s2.steps + 1) * sizeof(float));
    dst->s2.heldout = malloc((size_t)(src->s2.steps + 1) * sizeof(float));
    memcpy(dst->s2.loss, src->s2.loss, (size_t)(src->s2.steps + 1) * sizeof(float));
    if (src->s2.heldout) memcpy(dst->s2.heldout, src->s2.heldout, (size_t)(src->s2.steps + 1) * sizeof(float));
    else for (int i = 0; i <= src->s2.steps; i++) dst->s2.heldout[i] = NAN;
}

static int convert(gf_backend *be, const char *path, const bool *mask, const int *cal_ids, const int *held_ids,
                   const int *eval_ids, conv_out *out) {
    model m;
    const model_load_opts lo = {NULL, be};
    if (model_load(&m, path, &lo) != 0) return -1;
    teacher_capture cal, held;
    memset(&cal, 0, sizeof cal), memset(&held, 0, sizeof held);
    int rc = teacher_capture_run(&cal, &m, cal_ids, SEQS, T, 1, NULL);
    if (rc == 0) rc = teacher_capture_run(&held, &m, held_ids, 1, T, 0, NULL);
    student s;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_TAYLOR_CALIBRATE;
    set.steps = STEPS;
    bool have_s = false;
    if (rc == 0) rc = student_init_empty(&s, &m, &set), have_s = rc == 0;
    if (rc == 0) rc = student_build_layers(&s, mask, &cal, &held, NULL);
    if (rc == 0) rc = student_set_gdn(&s, mask);
    double nll = 0;
    long count = 0;
    if (rc == 0) rc = student_eval_nll(&s, eval_ids, EVAL_TOKENS, T, &nll, &count, NULL);
    if (rc == 0) {
        out->L = m.cfg.n_layers, out->H = m.cfg.n_heads;
        out->ppl = exp(nll / (double)count);
        out->rep = calloc((size_t)out->L, sizeof *out->rep);
        out->conv = calloc((size_t)out->L, sizeof *out->conv);
        for (int l = 0; l < out->L; l++)
            if (mask[l]) {
                keep_report(&out->rep[l], &s.rep[l], out->H);
                out->conv[l] = true;
            }
    }
    if (have_s) student_free(&s);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    model_free(&m);
    return rc;
}

static void conv_out_free(conv_out *o) {
    for (int l = 0; o->conv && l < o->L; l++)
        if (o->conv[l]) layer_report_free(&o->rep[l]);
    free(o->rep);
    free(o->conv);
}

static void compare(const char *mode, const char *name, bool f32, const conv_out *g, const conv_out *c) {
    const double t1 = f32 ? 1e-4 : 3e-2;
    for (int l = 0; l < c->L; l++) {
        if (!c->conv[l]) continue;
        const stage1_result *a = &g->rep[l].s1, *b = &c->rep[l].s1;
        const double *qa[6] = {a->dist, a->entropy, a->conc, a->dt_bias, a->beta_star, a->sigma_star};
        const double *qb[6] = {b->dist, b->entropy, b->conc, b->dt_bias, b->beta_star, b->sigma_star};
        static const char *qn[6] = {"mean distance", "entropy", "concentration", "dt_bias", "beta*", "sigma*"};
        for (int k = 0; k < 6; k++) {
            const double e = rel_l2(qa[k], qb[k], c->H);
            result(e <= t1, "%-5s %-12s layer %d Stage 1 %-14s rel L2 %.2e (%.0e)", mode, name, l, qn[k], e, t1);
        }
        const double ea = fabs(a->alpha_star - b->alpha_star) / fabs(b->alpha_star);
        result(isfinite(ea) && ea <= t1, "%-5s %-12s layer %d Stage 1 alpha* %.6g vs %.6g: rel %.2e (%.0e)", mode, name,
               l, a->alpha_star, b->alpha_star, ea, t1);
        const stage2_result *x = &g->rep[l].s2, *y = &c->rep[l].s2;
        if (f32) {
            double worst = 0, worst_h = 0;
            for (int i = 0; i <= y->steps; i++) {
                const double e = fabs((double)x->loss[i] - y->loss[i]) / fabs((double)y->loss[i]);
                worst = isfinite(e) ? fmax(worst, e) : INFINITY;
                const double h = fabs((double)x->heldout[i] - y->heldout[i]) / fabs((double)y->heldout[i]);
                worst_h = isfinite(h) ? fmax(worst_h, h) : INFINITY;
            }
            result(x->steps == y->steps && worst <= 2e-3 && worst_h <= 2e-3,
                   "%-5s %-12s layer %d Stage 2 %d steps: loss %.5g -> %.5g (CPU %.5g -> %.5g), worst point rel %.2e, "
                   "held-out %.2e (2e-3)", mode, name, l, y->steps, x->loss[0], x->loss[x->steps], y->loss[0],
                   y->loss[y->steps], worst, worst_h);
        } else {
            const double e = fabs(x->best_loss - y->best_loss) / fabs(y->best_loss);
            result(isfinite(e) && e <= 0.1 && x->best_loss < x->loss[0],
                   "%-5s %-12s layer %d Stage 2 %d steps: kept loss %.5g (CPU %.5g, rel %.2e, 1e-1), first %.5g",
                   mode, name, l, x->steps, x->best_loss, y->best_loss, e, x->loss[0]);
        }
    }
    const double tp = f32 ? 1e-3 : 5e-2, ep = fabs(g->ppl - c->ppl) / c->ppl;
    result(isfinite(ep) && ep <= tp, "%-5s %-12s student perplexity %.5f vs CPU %.5f: rel %.2e (%.0e)", mode, name,
           g->ppl, c->ppl, ep, tp);
}

/* Low ids more often (like a tokenizer's frequent tokens): uniform below a uniform cap. */
static int next_id(unsigned *s, int vocab) {
    *s = *s * 1103515245u + 12345u;
    const int cap = 1 + (int)((*s >> 8) % (unsigned)vocab);
    *s = *s * 1103515245u + 12345u;
    return (int)((*s >> 16) % (unsigned)cap);
}

static void one_case(gf_backend *gpu, gf_backend *cpu, const char *mode, const char *name, const char *path,
                     const bool *mask, int vocab_cap) {
    int cal[SEQS * T], held[T], ev[EVAL_TOKENS];
    unsigned s = 777;
    /* BOS starts each sequence */
    for (int i = 0; i < SEQS * T; i++) cal[i] = i % T == 0 ? 1 : next_id(&s, vocab_cap);
    for (int i = 0; i < T; i++) held[i] = i == 0 ? 1 : next_id(&s, vocab_cap);
    for (int i = 0; i < EVAL_TOKENS; i++) ev[i] = i == 0 ? 1 : next_id(&s, vocab_cap);
    conv_out g, c;
    memset(&g, 0, sizeof g), memset(&c, 0, sizeof c);
    if (convert(gpu, path, mask, cal, held, ev, &g) != 0 || convert(cpu, path, mask, cal, held, ev, &c) != 0)
        result(false, "%-5s %-12s conversion: %s", mode, name, gf_last_error());
    else
        compare(mode, name, be_act(gpu) == GF_F32, &g, &c);
    conv_out_free(&g);
    conv_out_free(&c);
}

/* GRAFT_CUDA_TASKS: Stage 2's layers one at a time on one task stream convert as on the CPU, with
 * the fp32 tolerances above; a count outside 1..GF_DEVICE_TASKS_MAX fails at open, naming the variable. */
static void task_streams(gf_backend *cpu, const char *path, const bool *mask) {
    setenv("GRAFT_CUDA_TASKS", "1", 1);
    const char *mode;
    gf_backend *be = open_device_or_skip(true, 1, &mode);
    if (!be) return;
    result(be_tasks_at_once(be) == 1, "GRAFT_CUDA_TASKS=1: %d task streams", be_tasks_at_once(be));
    one_case(be, cpu, mode, "stories260K, GRAFT_CUDA_TASKS=1", path, mask, 512);
    be_close(be);
    static const char *const bad[] = {"0", "17", "4x", "-1"};
    for (int i = 0; i < 4; i++) {
        char why[512];
        const bool refused = gpu_open_refused("GRAFT_CUDA_TASKS", bad[i], true, "GRAFT_CUDA_TASKS", why, sizeof why);
        result(refused, "GRAFT_CUDA_TASKS=%s refused at open: %s", bad[i], why);
    }
    unsetenv("GRAFT_CUDA_TASKS");
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const gf_backend_opts co = {"cpu", 0, false};
    gf_backend *cpu = NULL;
    if (be_open(&cpu, &co) != 0) {
        fprintf(stderr, "cpu backend: %s\n", gf_last_error());
        return 1;
    }
    const char *root = getenv("GRAFT_ROOT"), *shared = getenv("GRAFT_SHARED");
    char qwen2[4096], stories[4096];
    snprintf(qwen2, sizeof qwen2, "%s/tests/fixtures/hf/qwen2", root ? root : ".");
    snprintf(stories, sizeof stories, "%s/models/tinyllamas/stories260K/stories260K.bin", shared ? shared : "../shared");
    const bool m_qwen2[2] = {false, true}, m_stories[5] = {false, false, true, false, true};
    bool on_gpu = false;
    for (int fp32 = 1; fp32 >= 0; fp32--) {
        const char *mode;
        gf_backend *be = open_device_or_skip(fp32 != 0, 1, &mode);
        if (!be) {
            be_close(cpu);
            return 77;
        }
        one_case(be, cpu, mode, "qwen2", qwen2, m_qwen2, 143);
        one_case(be, cpu, mode, "stories260K", stories, m_stories, 512);
        on_gpu = !be_is_host(be);
        be_close(be);
        if (!on_gpu) break; /* GRAFT_GPU_TEST_DEVICE=cpu: no bf16 mode, no task streams there */
    }
    if (on_gpu) task_streams(cpu, stories, m_stories);
    be_close(cpu);
    return result_summary();
}
