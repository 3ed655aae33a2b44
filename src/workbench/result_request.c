#include "workbench/result_request.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "student/student.h"
#include "workbench/import_runs.h"
#include "workbench/recover_jobs.h"

/* what stands in the command for what an imported row's JSON does not name: the student folders of a race
 * of folders, the text of a run made before graft recorded it */
#define FOLDERS_NOT_NAMED "STUDENT_DIR..."
#define TEXT_NOT_NAMED "TEXT"

static bool folder_race(const result_row *r) { return r->kind == RUN_RACE && r->source[0] && !strcmp(r->strategy, "folder"); }

/* Stage 1 options of the row's build: --stage1 / --distance / --half-life / --sigma-fit */
static void stage1_of(const result_row *r, method_cli *mo, result_req_text *txt) {
    if (r->has_stage1) stage1_choice_to_cli(&r->stage1, mo, &txt->s1);
}

int result_request(const result_row *r, const char *model_arg, request *q, result_req_text *txt) {
    memset(txt, 0, sizeof *txt);
    snprintf(txt->corpus, sizeof txt->corpus, "%s", import_text_unknown(r) ? TEXT_NOT_NAMED : r->corpus);
    snprintf(txt->student, sizeof txt->student, "%s", r->student);
    snprintf(txt->device, sizeof txt->device, "%s", r->device);
    snprintf(txt->strategy, sizeof txt->strategy, "%s", r->strategy);
    snprintf(txt->init, sizeof txt->init, "%s", r->init);
    switch (r->kind) {
    case RUN_EVALUATE: /* evaluate_eval_request: the folder's student measured as the job did */
        if (!r->student[0]) return gf_fail("no student folder was written");
        request_init(q, REQ_EVAL);
        q->pos[q->n_pos++] = txt->student;
        q->u.eval.text = txt->corpus;
        q->u.eval.split = true;
        q->u.eval.eval_windows = r->eval_windows;
        break;
    case RUN_ABLATE: { /* this one row of the table */
        request_init(q, REQ_ABLATE);
        q->pos[q->n_pos++] = model_arg;
        ablate_req *a = &q->u.ablate;
        a->calib = a->eval = txt->corpus;
        a->strat_list = txt->strategy;
        snprintf(txt->keep, sizeof txt->keep, "%g", r->keep);
        a->keep_list = txt->keep;
        a->init_list = txt->init;
        a->mo.steps = r->stage2_steps;
        a->mo.split.eval_windows = r->eval_windows;
        if (r->keep_best_heldout) a->mo.keep_best = "heldout";
        stage1_of(r, &a->mo, txt);
        break;
    }
    case RUN_RACE: { /* the race that made both its rows (recover_jobs.c builds its request here) */
        request_init(q, REQ_RACE);
        q->pos[q->n_pos++] = model_arg;
        if (folder_race(r)) q->pos[q->n_pos++] = FOLDERS_NOT_NAMED;
        race_req *a = &q->u.race;
        a->tc.data = txt->corpus;
        if (r->ctx > 0) a->tc.to.ctx = r->ctx;
        if (!r->source[0]) a->tc.to.batch = RECOVER_BATCH;
        if (r->race_tokens > 0) a->tc.to.tokens = r->race_tokens;
        a->tc.to.lr_mixer = r->race_lr_mixer;
        a->tc.to.lr_rest = r->race_lr_rest;
        a->tc.keep = r->keep;
        if (!folder_race(r)) { /* a race of folders builds nothing: no strategy, no Stage 1 */
            if (r->strategy[0] && strcmp(r->strategy, "uniform")) a->tc.strategy = txt->strategy;
            if (r->race_inits[0] && strcmp(r->race_inits, RACE_DEFAULT_INITS)) { /* the default goes unsaid */
                snprintf(txt->inits, sizeof txt->inits, "%s", r->race_inits);
                a->inits = txt->inits;
            }
            stage1_of(r, &a->mo, txt);
        }
        break;
    }
    case RUN_KIND_COUNT: return gf_fail("a results row of no known kind");
    }
    q->co.json = true;
    if (r->seed >= 0 && r->kind != RUN_EVALUATE) q->co.seed = r->seed; /* eval samples nothing: no seed */
    if (txt->device[0]) q->co.device = txt->device;
    return 0;
}

void result_command_note(const result_row *r, char *buf, size_t n) {
    if (n) buf[0] = 0;
    if (folder_race(r) || import_text_unknown(r)) {
        snprintf(buf, n, "   # the JSON does not name %s%s%s", folder_race(r) ? "the student folders" : "",
                 folder_race(r) && import_text_unknown(r) ? " or " : "", import_text_unknown(r) ? "the text" : "");
    } else if (r->kind == RUN_EVALUATE) { /* how its folder was built: the Stage 1 options, the request (its config records it) */
        char s1[128] = "", req[40] = "";
        if (r->has_stage1) stage1_choice_flags(&r->stage1, s1, sizeof s1);
        if (r->digest[0]) snprintf(req, sizeof req, " by request %s", r->digest);
        if (s1[0] || req[0]) snprintf(buf, n, "   # built%s%s%s", s1[0] ? " with" : "", s1, req);
    }
}

void result_command(const result_row *r, const char *model_arg, char *buf, size_t n) {
    request q;
    result_req_text txt;
    if (result_request(r, model_arg, &q, &txt) != 0) {
        gf_clear_error();
        snprintf(buf, n, "(no student folder was written)");
        return;
    }
    request_command(&q, buf, n);
    const size_t at = strlen(buf);
    if (at < n) result_command_note(r, buf + at, n - at);
}
