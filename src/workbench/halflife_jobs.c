#include "workbench/halflife_jobs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/text_tokens.h"
#include "jobs/job.h"
#include "student/student_io.h"

/* Everything the job needs, copied on the UI thread: it never reads app_state. */
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
} halflife_arg;

static int halflife_job(job_ctx *ctx, void *argp) {
    halflife_arg *a = argp;
    student s = {0};
    bool loaded = false;
    int_vec ids = {0}, cut = {0};
    double *all = NULL, *no_sink = NULL, *target = NULL;
    halflife_result *res = gf_calloc(1, sizeof *res);
    int rc = -1, n_seqs = 0;
    progress_sink pr = job_sink(ctx);
    const model_load_opts lo = {.tokenizer_path = NULL, .be = a->be};
    if (student_load_with(&s, a->student, &lo, NULL) != 0) goto done;
    loaded = true;
    const int L = s.tf.cfg.n_layers, H = s.tf.gcfg.H;
    const size_t n = (size_t)L * (H > 0 ? H : 1);
    all = gf_malloc(n * sizeof *all), no_sink = gf_malloc(n * sizeof *all), target = gf_malloc(n * sizeof *all);
    char report[512];
    snprintf(report, sizeof report, "%s/report.json", a->student);
    const int found = halflife_teacher_read(report, L, H, all, no_sink);
    if (found < 0) goto done;
    if (found == 0 && a->wb_all && a->wb_L == L && a->wb_H == H) {
        memcpy(all, a->wb_all, n * sizeof *all);
        memcpy(no_sink, a->wb_no_sink, n * sizeof *all);
    } else if (found == 0) {
        job_log(ctx, "halflife: %s has no teacher attention statistics; no targets", report);
    }
    halflife_targets(&s.set, all, no_sink, n, target);
    const halflife_teacher teacher = {all, no_sink, target};
    const tokenizer *tok = s.m->tok ? s.m->tok : a->m->tok;
    if (!tok) {
        gf_fail("%s has no tokenizer", a->student);
        goto done;
    }
    if (text_file_tokens(tok, a->corpus, false, &ids) != 0 ||
        cut_sequences(ids.data, ids.len, 0, tokenizer_bos(tok), a->q.ctx, a->q.seqs, &cut, &n_seqs) != 0)
        goto done;
    if (halflife_measure(&s.tf, cut.data, &a->q, &teacher, &pr, res) != 0) goto done;
    job_set_result(ctx, res);
    res = NULL;
    rc = 0;
done:
    if (res) halflife_result_free(res);
    free(res);
    free(all);
    free(no_sink);
    free(target);
    free(ids.data);
    free(cut.data);
    if (loaded) student_free(&s);
    free(a->corpus);
    free(a->wb_all);
    free(a->wb_no_sink);
    free(a);
    return rc;
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

int stats_start_halflife(workbench *wb, app_state *st, job_runner *jr) {
    teacher_state *t = wb_ready(wb, st);
    if (!t) return -1;
    if (!wb->corpus) return gf_fail("no corpus: start graft with --text FILE or set GRAFT_TEXT");
    const halflife_view_request *r = &t->hl.req;
    if (!r->student[0])
        return gf_fail("no student to measure: Enter on 7 Results builds one (the selected row's is measured)");
    if (!student_folder_detect(r->student))
        return gf_fail("the student folder %s is gone or is not a student (Enter on Results writes it again)",
                       r->student);
    halflife_arg *a = gf_calloc(1, sizeof *a);
    a->m = wb->m;
    a->be = wb->be;
    snprintf(a->student, sizeof a->student, "%s", r->student);
    a->corpus = gf_strdup(wb->corpus);
    halflife_request_default(&a->q);
    a->q.ctx = wb->stats_ctx;
    a->q.seqs = wb->stats_seqs;
    copy_teacher_stats(t, wb->corpus, a);
    if (halflife_request_check(&a->q) != 0 || wb_start(st, jr, "halflife", halflife_job, a, t) != 0) {
        free(a->wb_all);
        free(a->wb_no_sink);
        free(a->corpus);
        free(a);
        return -1;
    }
    t->hl.ran = *r;
    return 0;
}

/* The measured heads into the heat maps of the init the student was built as. */
static void fill_metrics(teacher_state *t, const halflife_view *v) {
    const int init = teacher_init_index(t, v->ran.init);
    double *p50 = teacher_metric(t, init, MET_HL_P50), *ratio = teacher_metric(t, init, MET_HL_LOG2_RATIO);
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
        snprintf(line, sizeof line, "halflife%s; headless: graft halflife %s --text %s --json", how, v->ran.student, st->corpus);
    wb_log_add(&st->log, LOG_INFO, line);
}
