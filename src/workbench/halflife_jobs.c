#include "workbench/halflife_jobs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "data/text_tokens.h"
#include "jobs/job.h"
#include "method/place_lock.h"
#include "student/report_json.h"
#include "student/student_io.h"

/* Everything a job needs, copied on the UI thread: it never reads app_state. */
typedef struct {
    const model *m;          /* the loaded teacher (its tokenizer when the student has none) */
    gf_backend *be;
    char student[256];
    char *corpus;
    halflife_request q;
    /* the workbench's teacher statistics on this corpus [L * H] (NULL: none), used when the
     * student's report.json has none (students the workbench writes do not carry them) */
    double *wb_all, *wb_no_sink;
    int wb_L, wb_H;
    /* a fix: the head, its new half-life (0: the no-sink distance), Stage 2 steps, evaluation windows */
    bool fix;
    int layer, head;
    double half_life;
    int steps, eval_windows;
} halflife_arg;

static void arg_free(halflife_arg *a) {
    free(a->corpus);
    free(a->wb_all);
    free(a->wb_no_sink);
    free(a);
}

/* A loaded student with its targets and the measured sequences of the corpus. */
typedef struct {
    student s;
    bool loaded;
    int_vec cut;
    double *all, *no_sink, *target;
    halflife_teacher teacher;
    const tokenizer *tok;
} hl_run;

static void hl_close(hl_run *r) {
    free(r->all);
    free(r->no_sink);
    free(r->target);
    free(r->cut.data);
    if (r->loaded) student_free(&r->s);
}

static int hl_open(job_ctx *ctx, const halflife_arg *a, hl_run *r) {
    memset(r, 0, sizeof *r);
    const model_load_opts lo = {.tokenizer_path = NULL, .be = a->be};
    if (student_load_with(&r->s, a->student, &lo, NULL) != 0) return -1;
    r->loaded = true;
    const int L = r->s.tf.cfg.n_layers, H = r->s.tf.gcfg.H;
    const size_t n = (size_t)L * (H > 0 ? H : 1);
    r->all = gf_malloc(n * sizeof *r->all), r->no_sink = gf_malloc(n * sizeof *r->all);
    r->target = gf_malloc(n * sizeof *r->all);
    char report[512];
    snprintf(report, sizeof report, "%s/report.json", a->student);
    const int found = halflife_teacher_read(report, L, H, r->all, r->no_sink);
    if (found < 0) return -1;
    if (found == 0 && a->wb_all && a->wb_L == L && a->wb_H == H) {
        memcpy(r->all, a->wb_all, n * sizeof *r->all);
        memcpy(r->no_sink, a->wb_no_sink, n * sizeof *r->all);
    } else if (found == 0) {
        job_log(ctx, "halflife: %s has no teacher attention statistics; no targets", report);
    }
    halflife_targets(&r->s.set, r->all, r->no_sink, n, r->target);
    r->teacher = (halflife_teacher){r->all, r->no_sink, r->target};
    r->tok = r->s.m->tok ? r->s.m->tok : a->m->tok;
    if (!r->tok) return gf_fail("%s has no tokenizer", a->student);
    int_vec ids = {0};
    int n_seqs = 0;
    const int rc = text_file_tokens(r->tok, a->corpus, false, &ids) != 0 ||
                           (cut_sequences(ids.data, ids.len, 0, tokenizer_bos(r->tok), a->q.ctx, a->q.seqs, &r->cut, &n_seqs) != 0 &&
                            gf_fail_prefix(a->corpus))
                       ? -1
                       : 0;
    free(ids.data);
    return rc;
}

static int halflife_job(job_ctx *ctx, void *argp) {
    halflife_arg *a = argp;
    hl_run r;
    halflife_result *res = gf_calloc(1, sizeof *res);
    progress_sink pr = job_sink(ctx);
    int rc = -1;
    if (hl_open(ctx, a, &r) == 0 && halflife_measure(&r.s.tf, r.cut.data, &a->q, &r.teacher, &pr, res) == 0) {
        job_set_result(ctx, res);
        res = NULL;
        rc = 0;
    }
    if (res) halflife_result_free(res);
    free(res);
    hl_close(&r);
    arg_free(a);
    return rc;
}

/* "<student>-fix-L2H5", then -2, -3 ... until the name is free: the original is never overwritten. */
static int fix_dir_for(const halflife_arg *a, char *dir, size_t n) {
    for (int k = 1; k < 1000; k++) {
        if (k == 1) snprintf(dir, n, "%s-fix-L%dH%d", a->student, a->layer, a->head);
        else snprintf(dir, n, "%s-fix-L%dH%d-%d", a->student, a->layer, a->head, k);
        if (access(dir, F_OK) != 0) return 0;
    }
    return gf_fail("%s-fix-L%dH%d: every name up to -999 is taken", a->student, a->layer, a->head);
}

/* fix_dir_for's folder, locked as graft halflife --fix --out locks its own;
 * a folder that appeared between the choice and the lock is not taken. */
static int claim_fix_dir(const halflife_arg *a, char *dir, size_t n, place_lock *lock) {
    if (fix_dir_for(a, dir, n) != 0 ||
        place_lock_take(lock, "student folder", dir, "wait for it to end, then fix again") != 0)
        return -1;
    if (access(dir, F_OK) == 0) {
        place_lock_release(lock);
        return gf_fail("%s appeared while it was being claimed; fix again for the next free name", dir);
    }
    return 0;
}

/* The fixed student, written as a new folder with the old report's teacher statistics. */
static int save_fixed(const hl_run *r, const halflife_arg *a, const char *dir) {
    cJSON *rep = student_report_json(&r->s);
    char path[512];
    snprintf(path, sizeof path, "%s/report.json", a->student);
    char *buf = access(path, R_OK) == 0 ? read_text_file(path, NULL) : NULL;
    cJSON *old = buf ? cJSON_Parse(buf) : NULL;
    free(buf);
    const cJSON *ts = cJSON_GetObjectItem(old, "teacher_attention_stats");
    if (ts) cJSON_AddItemToObject(rep, "teacher_attention_stats", cJSON_Duplicate(ts, 1));
    cJSON_Delete(old);
    char *tok_src = teacher_tokenizer_path(a->student, r->s.tf.cfg.vocab_size, NULL);
    const int rc = student_save(&r->s, dir, tok_src, rep);
    free(tok_src);
    cJSON_Delete(rep);
    return rc;
}

static int halflife_fix_job(job_ctx *ctx, void *argp) {
    halflife_arg *a = argp;
    hl_run r;
    halflife_fix_result *res = gf_calloc(1, sizeof *res);
    place_lock lock = {NULL, -1};
    progress_sink pr = job_sink(ctx);
    token_split sp = {0};
    int rc = -1;
    const job_phase phases[] = {{"before", 1}, {"fix", 4}, {"after", 1}};
    job_set_phases(ctx, phases, 3);
    if (hl_open(ctx, a, &r) != 0 || halflife_measure(&r.s.tf, r.cut.data, &a->q, &r.teacher, &pr, &res->before) != 0)
        goto done;
    res->fix = (halflife_change){a->layer, a->head, a->half_life, 0};
    if (!(a->half_life > 0)) { /* the no-sink distance, through Stage 1's clamp */
        student_settings ns = r.s.set;
        ns.distance = DECAY_DISTANCE_NO_SINK, ns.half_life = 0;
        const int H = r.s.tf.gcfg.H;
        if (a->layer < 0 || a->layer >= r.s.L || a->head < 0 || a->head >= H) {
            gf_fail("layer %d head %d: not a head of %s", a->layer, a->head, a->student);
            goto done;
        }
        const size_t k = (size_t)a->layer * H + a->head;
        halflife_targets(&ns, r.all + k, r.no_sink + k, 1, &res->fix.half_life);
        if (!(res->fix.half_life > 0)) {
            gf_fail("layer %d head %d: no teacher distance without the first key (Enter on 3 Stats computes them)",
                    a->layer, a->head);
            goto done;
        }
    }
    job_begin_phase(ctx, "fix");
    split_spec spec;
    split_spec_default(&spec);
    spec.eval_windows = a->eval_windows;
    r.s.set.steps = a->steps;
    if (token_split_make(&sp, r.tok, a->corpus, a->corpus, &spec) != 0 ||
        halflife_fix_run(&r.s, &res->fix, 1, &sp, spec.ctx, &pr, &res->out) != 0)
        goto done;
    job_begin_phase(ctx, "after");
    if (halflife_measure(&r.s.tf, r.cut.data, &a->q, &r.teacher, &pr, &res->after) != 0 ||
        claim_fix_dir(a, res->dir, sizeof res->dir, &lock) != 0 || save_fixed(&r, a, res->dir) != 0)
        goto done;
    job_set_result(ctx, res);
    res = NULL;
    rc = 0;
done:
    if (res) {
        halflife_result_free(&res->before);
        halflife_result_free(&res->after);
        free(res);
    }
    place_lock_release(&lock);
    token_split_free(&sp);
    hl_close(&r);
    arg_free(a);
    return rc;
}

bool halflife_pick_student(const teacher_state *t, long sel_seq, halflife_view_request *out) {
    const result_row *pick = NULL;
    for (int i = 0; i < t->n_results; i++)
        if (t->results[i].seq == sel_seq && t->results[i].student[0]) pick = &t->results[i];
    for (int i = t->n_results - 1; !pick && i >= 0; i--)
        if (t->results[i].student[0]) pick = &t->results[i];
    if (!pick) return false;
    snprintf(out->student, sizeof out->student, "%s", pick->student);
    snprintf(out->init, sizeof out->init, "%s", pick->init[0] ? pick->init : "student");
    return true;
}

/* The teacher statistics the Stats screen holds for this corpus, copied for the job. */
static void copy_teacher_stats(const teacher_state *t, const char *corpus, halflife_arg *a) {
    int te = -1;
    for (int i = 0; i < t->n_inits; i++)
        if (!strcmp(t->inits[i].name, "teacher")) te = i;
    if (te < 0 || strcmp(t->stats_corpus, corpus) || !teacher_has_metric(t, te, MET_MEAN_DIST) ||
        !teacher_has_metric(t, te, MET_DIST_NOSINK))
        return;
    const size_t n = (size_t)t->n_layers * t->n_heads;
    a->wb_all = gf_malloc(n * sizeof *a->wb_all);
    a->wb_no_sink = gf_malloc(n * sizeof *a->wb_no_sink);
    memcpy(a->wb_all, t->inits[te].m[MET_MEAN_DIST], n * sizeof *a->wb_all);
    memcpy(a->wb_no_sink, t->inits[te].m[MET_DIST_NOSINK], n * sizeof *a->wb_no_sink);
    a->wb_L = t->n_layers, a->wb_H = t->n_heads;
}

/* The argument of a job on student (checked), or NULL with a one-line error. */
static halflife_arg *make_arg(workbench *wb, const teacher_state *t, const char *student) {
    if (!wb->corpus) return gf_fail("no corpus: start graft with --text FILE or set GRAFT_TEXT"), NULL;
    if (!student[0])
        return gf_fail("no student to measure: Enter on 7 Results builds one (the selected row's is measured)"), NULL;
    if (!student_folder_detect(student))
        return gf_fail("the student folder %s is gone or is not a student (Enter on Results writes it again)", student),
               NULL;
    halflife_arg *a = gf_calloc(1, sizeof *a);
    a->m = wb->m;
    a->be = wb->be;
    snprintf(a->student, sizeof a->student, "%s", student);
    a->corpus = gf_strdup(wb->corpus);
    halflife_request_default(&a->q);
    a->q.ctx = wb->stats_ctx;
    a->q.seqs = wb->stats_seqs;
    copy_teacher_stats(t, wb->corpus, a);
    if (halflife_request_check(&a->q) != 0) {
        arg_free(a);
        return NULL;
    }
    return a;
}

int stats_start_halflife(workbench *wb, app_state *st, job_runner *jr) {
    teacher_state *t = wb_ready(wb, st);
    if (!t) return -1;
    halflife_arg *a = make_arg(wb, t, t->hl.req.student);
    if (!a) return -1;
    if (wb_start(st, jr, "halflife", halflife_job, a, t) != 0) {
        arg_free(a);
        return -1;
    }
    t->hl.ran = t->hl.req;
    return 0;
}

int calib_start_halflife_fix(workbench *wb, app_state *st, job_runner *jr) {
    teacher_state *t = wb_ready(wb, st);
    if (!t) return -1;
    if (!t->hl.have) return gf_fail("no measured student: h on 3 Stats measures one first");
    halflife_arg *a = make_arg(wb, t, t->hl.ran.student);
    if (!a) return -1;
    a->fix = true;
    a->layer = t->hl.fix_req.layer, a->head = t->hl.fix_req.head, a->half_life = t->hl.fix_req.half_life;
    a->steps = st->settings.stage2_steps;
    a->eval_windows = st->settings.eval_windows > 0 ? st->settings.eval_windows : 32;
    if (wb_start(st, jr, "halflife-fix", halflife_fix_job, a, t) != 0) {
        arg_free(a);
        return -1;
    }
    return 0;
}

/* The measured heads into the heat maps of the init the student was built as. */
static void fill_metrics(teacher_state *t, const halflife_view *v) {
    const int init = teacher_init_index(t, v->ran.init);
    double *p50 = teacher_metric(t, init, MET_HALFLIFE_DATA), *ratio = teacher_metric(t, init, MET_HL_LOG2_RATIO);
    if (!p50 || !ratio) return;
    const size_t cells = (size_t)t->n_layers * t->n_heads;
    for (size_t i = 0; i < cells; i++) p50[i] = ratio[i] = NAN; /* attention layers stay blank */
    for (int i = 0; i < v->r.n_heads; i++) {
        const halflife_head *h = &v->r.heads[i];
        if (h->layer < 0 || h->layer >= t->n_layers || h->head < 0 || h->head >= t->n_heads) continue;
        p50[(size_t)h->layer * t->n_heads + h->head] = h->p50;
        ratio[(size_t)h->layer * t->n_heads + h->head] = halflife_log2_ratio(h);
    }
}

void stats_halflife_done(app_state *st, teacher_state *owner, const event *ev) {
    if (!owner) {
        if (ev->kind == EV_DONE && ev->result) {
            halflife_result_free(ev->result);
            free(ev->result);
        }
        return;
    }
    halflife_view *v = &owner->hl;
    if (ev->kind == EV_DONE && ev->result) {
        halflife_view_take(v, ev->result);
        free(ev->result);
        fill_metrics(owner, v);
    }
    char line[1400];
    const char *how = ev->kind == EV_DONE ? "" : ev->kind == EV_CANCELLED ? " (cancelled)" : " (failed)";
    if (ev->kind == EV_DONE)
        snprintf(line, sizeof line, "halflife: %s: %d GDN heads, %d flagged; headless: graft halflife %s --text %s --ctx %d --seqs %d --json",
                 v->ran.init, v->r.n_heads, v->n_flagged, v->ran.student, st->corpus, v->r.ctx, v->r.seqs);
    else
        snprintf(line, sizeof line, "halflife%s: %s; headless: graft halflife %s --text %s --json", how, ev->text,
                 v->ran.student, st->corpus);
    wb_log_add(&st->log, LOG_INFO, line);
}

void calib_halflife_fix_done(app_state *st, teacher_state *owner, const event *ev) {
    halflife_fix_result *f = ev->kind == EV_DONE ? ev->result : NULL;
    if (!owner) {
        if (f) {
            halflife_result_free(&f->before);
            halflife_result_free(&f->after);
            free(f);
        }
        return;
    }
    halflife_view *v = &owner->hl;
    char line[1600];
    if (f) {
        halflife_view_take_fix(v, f);
        snprintf(line, sizeof line,
                 "halflife fix: layer %d head %d to %.4g tokens, Stage 2 of layer %d (%d steps): perplexity %.4f -> %.4f; "
                 "written to %s; headless: graft halflife %s --text %s --fix %d:%d=%.6g --steps %d --calib %s --out DIR",
                 v->fix.layer, v->fix.head, v->fix.half_life, v->fix.layer, st->settings.stage2_steps,
                 v->fix_out.ppl_before, v->fix_out.ppl_after, v->fix_dir, v->ran.student, st->corpus, v->fix.layer,
                 v->fix.head, v->fix.half_life, st->settings.stage2_steps, st->corpus);
    } else {
        snprintf(line, sizeof line, "halflife fix%s: %s", ev->kind == EV_CANCELLED ? " (cancelled)" : " (failed)", ev->text);
    }
    wb_log_add(&st->log, LOG_INFO, line);
}
