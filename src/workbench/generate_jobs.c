#include "workbench/generate_jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "eval/bench_decode.h"
#include "eval/generate.h"
#include "jobs/job.h"
#include "method/artifact.h"
#include "student/student_io.h"
#include "workbench/wb_event.h"

/* Everything the job needs, copied on the UI thread: it never reads app_state. */
typedef struct {
    const model *m;          /* the loaded teacher (a teacher request), else NULL */
    gf_backend *be;          /* the workbench's (the Settings' device); NULL: the default */
    char student[256];       /* the student folder, "" for the teacher */
    char prompt[GEN_PROMPT_MAX];
    int max_new;
    double temperature;      /* 0: greedy */
    long seed;
    double w_load, w_generate, w_measure; /* phase weights */
} gen_arg;

#define GEN_MEASURE_STEPS 16 /* decode steps timed per model after the generation */

typedef struct {
    job_ctx *ctx;
    double t0;               /* when generating began */
    int max_new;
} gen_stream;

/* Text to the UI in chunks that fit an event; progress once per token. */
static void send_text(void *ud, const char *text, int context, int generated) {
    gen_stream *gs = ud;
    const size_t len = strlen(text);
    wb_event e = {.kind = WB_GEN_TEXT};
    const size_t room = sizeof e.u.gen_text.text;
    size_t at = 0;
    do {
        size_t n = len - at < room ? len - at : room;
        e.u.gen_text.context_tokens = context;
        e.u.gen_text.generated = generated;
        e.u.gen_text.seconds = job_now() - gs->t0;
        e.u.gen_text.is_prompt = generated == 0;
        e.u.gen_text.len = (int)n;
        memcpy(e.u.gen_text.text, text + at, n);
        wb_emit(gs->ctx, &e);
        at += n;
    } while (at < len);
    if (generated > 0) job_progress(gs->ctx, generated, gs->max_new, "tokens");
}

/* After the generation: the model, and for a student its teacher too, decode
 * again with a cache of the generation's context (at most the model's): a
 * prefill, a warm-up step and GEN_MEASURE_STEPS timed greedy steps that end
 * where the generation ended; speed and the memory per sequence the decode
 * run allocated go to the box. */
static int measure_decode(job_ctx *ctx, transformer *run, transformer *teacher, bool student, int max_seq,
                          int context) {
    job_begin_phase(ctx, "measure");
    if (max_seq > 0 && context > max_seq) context = max_seq;
    const int prefill = context - GEN_MEASURE_STEPS - 1;
    if (prefill < 1) return 0; /* too short a context for the timed steps: nothing measured */
    const decode_bench_opts o = {prefill, 1, GEN_MEASURE_STEPS, 0, 1, job_cancel_flag(ctx)};
    decode_bench_point pm, pt = {0};
    if (decode_bench_run(run, &o, &pm) != 0) return -1;
    if (student && decode_bench_run(teacher, &o, &pt) != 0) return -1;
    wb_event e = {.kind = WB_GEN_MEASURED};
    e.u.gen_measured.context = context;
    e.u.gen_measured.tok_s_model = pm.decode_tok_s;
    e.u.gen_measured.mem_model = (long long)(pm.kv_bytes_per_seq + pm.state_bytes_per_seq);
    e.u.gen_measured.has_teacher = student;
    e.u.gen_measured.tok_s_teacher = pt.decode_tok_s;
    e.u.gen_measured.mem_teacher = (long long)(pt.kv_bytes_per_seq + pt.state_bytes_per_seq);
    wb_emit(ctx, &e);
    return 0;
}

static int generate_job(job_ctx *ctx, void *argp) {
    gen_arg *a = argp;
    student s = {0};
    transformer tf = {0}, full = {0};
    generated_text out = {0};
    const model *m = a->m;
    transformer *run = &tf;
    int rc = -1;
    const job_phase phases[] = {{"load", a->w_load}, {"generate", a->w_generate}, {"measure", a->w_measure}};
    job_set_phases(ctx, phases, 3);
    if (a->student[0]) {
        job_progress(ctx, 0, 1, "load");
        const model_load_opts lo = {.tokenizer_path = NULL, .be = a->be}; /* where the teacher and every job live */
        if (student_load_with(&s, a->student, &lo, NULL) != 0) goto done;
        m = s.m;
        run = &s.tf;
        if (job_cancelled(ctx)) {
            gf_fail("cancelled");
            goto done;
        }
    } else if (tf_view(&tf, m, NULL, NULL, NULL) != 0) {
        goto done;
    }
    if (!m->tok) {
        gf_fail("%s has no tokenizer", a->student[0] ? a->student : "the teacher");
        goto done;
    }
    if (tf_view(&full, m, NULL, NULL, NULL) != 0) goto done; /* the teacher: every layer attention */
    wb_event e = {.kind = WB_GEN_MEMORY};
    e.u.gen_memory.kv_model = (long long)tf_kv_bytes_per_token(run);
    e.u.gen_memory.kv_teacher = (long long)tf_kv_bytes_per_token(&full);
    e.u.gen_memory.state_bytes = (long long)tf_state_bytes(run);
    e.u.gen_memory.n_layers = m->cfg.n_layers;
    e.u.gen_memory.n_gdn = tf_n_gdn(run);
    e.u.gen_memory.max_context = m->cfg.max_seq;
    wb_emit(ctx, &e);
    job_begin_phase(ctx, "generate");
    gen_stream gs = {ctx, job_now(), a->max_new};
    const generate_opts go = {a->max_new, a->temperature, (uint64_t)a->seed, true, NULL, NULL, job_cancel_flag(ctx)};
    rc = generate_text(run, m, a->prompt, &go, send_text, &gs, &out); /* its Log line: results_generate_done */
    if (rc == 0)
        rc = measure_decode(ctx, run, &full, a->student[0] != 0, m->cfg.max_seq,
                            out.prompt_tokens + (out.bos ? 1 : 0) + out.generated);
done:
    generated_text_free(&out);
    tf_free(&tf);
    tf_free(&full);
    if (a->student[0]) student_free(&s);
    free(a);
    return rc;
}

/* Phase weights: reading the folder, then every token through every weight. */
static double file_bytes(const char *dir, const char *leaf) {
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, leaf);
    return stat(path, &sb) == 0 ? (double)sb.st_size : 0;
}

int results_start_generate(workbench *wb, app_state *st, job_runner *jr) {
    teacher_state *t = app_cur(st);
    if (!t) return gf_fail("no teacher: open one on 1 Teacher");
    const gen_request *r = &t->gen.req;
    if (r->student[0] && !student_folder_detect(r->student))
        return gf_fail("the student folder %s is gone or is not a student (Enter on Results writes it again)",
                       r->student);
    /* the folder must still hold what the row's request made */
    if (r->student[0] && r->digest[0] && artifact_check(r->student, "config.json", r->digest) != 0) return -1;
    if (!r->student[0] && !wb_ready(wb, st)) return -1;
    if (r->max_new < 1 || r->max_new > GEN_MAX_NEW) return gf_fail("tokens must be 1 to %d", GEN_MAX_NEW);
    if (r->seed < 1) return gf_fail("the seed must be >= 1, got %ld", (long)r->seed);
    gen_arg *a = gf_calloc(1, sizeof *a);
    a->m = r->student[0] ? NULL : wb->m;
    a->be = wb->be;
    snprintf(a->student, sizeof a->student, "%s", r->student);
    snprintf(a->prompt, sizeof a->prompt, "%s", r->prompt);
    a->max_new = r->max_new;
    a->temperature = r->sampled ? r->temp_tenths / 10.0 : 0;
    a->seed = r->seed; /* the box's own (1 first, as graft generate's), not --seed: that one builds students */
    /* a decode step reads every weight once: 2 flops per parameter (float32 folders: 4 bytes each) */
    const double bytes = r->student[0] ? file_bytes(r->student, "model.safetensors") : 0;
    const double params = r->student[0] ? bytes / 4 : (double)model_param_count(&wb->m->cfg);
    a->w_load = r->student[0] ? bytes / 5e8 + 1e-3 : 1e-9;
    a->w_generate = (double)a->max_new * 2.0 * params / 2e10 + 1e-3;
    /* the measure: the context again and the timed steps, twice for a student (it and its teacher) */
    a->w_measure = (r->student[0] ? 2.0 : 1.0) * (double)(a->max_new + GEN_MEASURE_STEPS) * 2.0 * params / 2e10 + 1e-3;
    if (wb_start(st, jr, "generate", generate_job, a, t) != 0) {
        free(a);
        return -1;
    }
    char dev[32];
    wb_device_of(wb->be, dev, sizeof dev);
    gen_begin(&t->gen, st->job.id, t->model_arg[0] ? t->model_arg : t->key, dev);
    return 0;
}

void results_generate_done(app_state *st, teacher_state *owner, const event *ev) {
    if (!owner) return;
    gen_state *g = &owner->gen;
    if (g->job_id != ev->job_id) return;
    g->finished = ev->kind == EV_DONE;
    char cmd[4096], rate[160];
    gen_command(&g->ran, g->model_arg, g->device, cmd, sizeof cmd);
    gen_rate_line(g, 1000, rate, sizeof rate);
    const char *how = ev->kind == EV_DONE ? "" : ev->kind == EV_CANCELLED ? " (cancelled)" : " (failed)";
    size_t n = strlen(cmd) + strlen(rate) + sizeof g->ran.label + 64;
    char *line = gf_malloc(n); /* longer than app_log's lines: the prompt is in it whole */
    snprintf(line, n, "generate from %s%s: %s; headless: %s", g->ran.label, how, rate[0] ? rate : "no tokens", cmd);
    wb_log_add(&st->log, LOG_INFO, line);
    free(line);
}
