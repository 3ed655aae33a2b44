#include "method/evaluate.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "eval/perplexity.h"
#include "student/report_json.h"

static double ppl_of(double nll, long count) { return count > 0 ? exp(nll / (double)count) : NAN; }

int method_evaluate_run(const request *r, model *m, const convert_target *t, const method_hooks *h, evaluate_result *res) {
    memset(res, 0, sizeof *res);
    const convert_req *q = &r->u.convert;
    if (!q->text) return gf_fail("build and evaluate needs --text: the file whose evaluation slice is scored");
    if (method_convert_run(r, m, h, &res->build) != 0) return -1;
    const token_split *sp = &res->build.sp;
    const int ctx = q->mo.split.ctx;
    double nll;
    long cnt;
    method_phase(h, "teacher ppl");
    if (eval_nll(m, sp->eval.data, sp->eval.len, ctx, &nll, &cnt, &h->progress) != 0) return -1;
    res->teacher_ppl = ppl_of(nll, cnt);
    method_phase(h, "student ppl");
    if (student_eval_nll(&res->build.s, sp->eval.data, sp->eval.len, ctx, &nll, &cnt, &h->progress) != 0) return -1;
    res->ppl = ppl_of(nll, cnt);
    res->tokens = cnt;
    res->hl = student_half_life_summary(&res->build.s, NULL);
    cJSON *rep = convert_report_json(r, &res->build);
    cJSON_AddStringToObject(rep, "strategy", q->strategy);
    cJSON *ev = cJSON_AddObjectToObject(rep, "workbench_eval");
    cJSON_AddStringToObject(ev, "text", q->text);
    cJSON_AddNumberToObject(ev, "ctx", ctx);
    cJSON_AddNumberToObject(ev, "eval_windows", q->mo.split.eval_windows);
    cJSON_AddNumberToObject(ev, "tokens", (double)cnt);
    cJSON_AddNumberToObject(ev, "ppl", res->ppl);
    cJSON_AddNumberToObject(ev, "teacher_ppl", res->teacher_ppl);
    const int rc = method_convert_save(r, m, t, &res->build, rep);
    cJSON_Delete(rep);
    return rc;
}

void evaluate_result_free(evaluate_result *res) { convert_result_free(&res->build); }

void evaluate_eval_request(const request *convert, const char *dir, request *eval) {
    request_init(eval, REQ_EVAL);
    eval->pos[0] = dir;
    eval->n_pos = 1;
    eval->u.eval.text = convert->u.convert.text;
    eval->u.eval.split = true;
    eval->u.eval.eval_windows = convert->u.convert.mo.split.eval_windows;
    eval->co.device = convert->co.device;
    eval->co.json = true;
}
