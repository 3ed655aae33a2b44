/* graft eval MODEL|STUDENT --text FILE [--ctx N]: perplexity of a teacher or
 * of a student folder (which `graft ppl` also accepts). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sys/stat.h>

#include "cli/common.h"
#include "method/mem_check.h"
#include "commands.h"
#include "core/error.h"
#include "data/text_tokens.h"
#include "eval/perplexity.h"
#include "student/calib_split.h"
#include "student/report_json.h"
#include "student/student_io.h"

/* split_windows > 0: only the evaluation slice of the calibration split of
 * text (docs/method.md "Data split": what convert, ablate and the workbench's
 * Results score), with split_windows windows of ctx tokens. */
static int eval_path_ppl_split(const char *cmd, const char *path, const char *text, int ctx, int split_windows,
                               const common_opts *co);

int eval_path_ppl(const char *cmd, const char *path, const char *text, int ctx, const common_opts *co) {
    return eval_path_ppl_split(cmd, path, text, ctx, 0, co);
}

/* eval_nll: one sequence of up to ctx tokens at a time (ctx 0: the model's
 * context), never more than the text has (tokens <= bytes + BOS) */
typedef struct {
    int ctx;
    long long text_bytes;
    int n_gdn;            /* a student folder's GDN layers */
    student_settings set;
} eval_plan;

static void eval_fill(mem_job *j, void *ud) {
    const eval_plan *p = ud;
    long long T = p->ctx > 0 ? p->ctx : j->cfg->max_seq > 0 ? j->cfg->max_seq : 2048;
    if (p->text_bytes >= 0 && T > p->text_bytes + 1) T = p->text_bytes + 1;
    if (T < 2) T = 2;
    if (p->n_gdn > 0) cli_mem_gdn(j, &p->set);
    j->gdn_blocks = p->n_gdn;
    cli_mem_eval(j, 0, (int)T, p->n_gdn);
}

static int eval_path_ppl_split(const char *cmd, const char *path, const char *text, int ctx, int split_windows,
                               const common_opts *co) {
    student s = {0};
    model teacher = {0};
    const bool is_student = student_folder_detect(path);
    struct stat tb;
    eval_plan plan = {split_windows > 0 && ctx == 0 ? 256 : ctx, stat(text, &tb) == 0 ? (long long)tb.st_size : -1, 0, {0}};
    if (is_student && student_folder_peek(path, &plan.n_gdn, &plan.set) != 0) return cli_fail(cmd);
    cli_mem_plan(eval_fill, &plan, "lower --ctx");
    model *m;
    if (is_student) {
        if (cli_load_student(cmd, path, co, &s) != 0) return 1;
        m = s.m;
    } else {
        if (cli_load_model(cmd, path, co, &teacher) != 0) return 1;
        m = &teacher;
    }
    int rc = 0;
    int_vec ids = {0};
    double nll = 0;
    long count = 0;
    token_split sp = {0};
    if (split_windows > 0) {
        split_spec spec;
        split_spec_default(&spec);
        if (ctx > 0) spec.ctx = ctx;
        spec.eval_windows = split_windows;
        ctx = spec.ctx;
        if (m->tok && token_split_make(&sp, m->tok, text, text, &spec) == 0) {
            for (size_t i = 0; i < sp.eval.len; i++) int_vec_push(&ids, sp.eval.data[i]);
        } else if (m->tok) {
            rc = cli_fail(cmd);
        }
    }
    if (ctx == 0) ctx = m->cfg.max_seq > 0 ? m->cfg.max_seq : 2048;
    if (rc) {
    } else if (!m->tok) {
        gf_fail("%s has no tokenizer (pass --tokenizer PATH)", path);
        rc = cli_fail(cmd);
    } else if ((split_windows == 0 && text_file_tokens(m->tok, text, true, &ids) != 0) ||
               (is_student ? student_eval_nll(&s, ids.data, ids.len, ctx, &nll, &count, NULL)
                           : eval_nll(m, ids.data, ids.len, ctx, &nll, &count, NULL)) != 0) {
        rc = cli_fail(cmd);
    } else if (co->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", path);
        cJSON_AddStringToObject(o, "kind", is_student ? "student" : "teacher");
        cJSON_AddNumberToObject(o, "tokens", (double)count);
        cJSON_AddNumberToObject(o, "nll", nll);
        cJSON_AddNumberToObject(o, "ppl", exp(nll / count));
        cJSON_AddNumberToObject(o, "ctx", ctx);
        if (split_windows > 0) {
            cJSON_AddStringToObject(o, "slice", "evaluation");
            cJSON_AddNumberToObject(o, "eval_begin", (double)sp.eval_begin);
            cJSON_AddNumberToObject(o, "eval_end", (double)sp.eval_end);
        }
        if (is_student) {
            cJSON *gl = cJSON_AddArrayToObject(o, "gdn_layers");
            for (int l = 0; l < s.L; l++)
                if (s.is_gdn[l]) cJSON_AddItemToArray(gl, cJSON_CreateNumber(l));
            cJSON_AddItemToObject(o, "half_life", half_life_summary_json(student_half_life_summary(&s, NULL)));
            cJSON_AddStringToObject(o, "query_scale", gdn_scale_name(s.gcfg.scale_mode));
            cJSON_AddStringToObject(o, "init", student_init_name(s.set.init));
            cJSON_AddStringToObject(o, "sigma_fit", sigma_fit_name(s.set.sigma_fit));
        }
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
    } else {
        printf("tokens %ld  nll %.4f nats  (%.4f per token)  perplexity %.4f  [ctx %d]", count, nll, nll / count,
               exp(nll / count), ctx);
        if (is_student)
            printf("  [student: %d of %d layers GDN, init %s, query scale %s]", student_n_gdn(&s), s.L,
                   student_init_name(s.set.init), gdn_scale_name(s.gcfg.scale_mode));
        printf("\n");
    }
    int_vec_free(&ids);
    token_split_free(&sp);
    if (is_student) student_free(&s);
    else model_free(&teacher);
    return rc;
}

int cmd_eval(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_EVAL, argc, argv, &done);
    if (rc || done) return rc;
    common_opts co = r.co;
    const char **pos = r.pos;
    const char *text = r.u.eval.text;
    const int ctx = r.u.eval.ctx, eval_windows = r.u.eval.eval_windows;
    const bool split = r.u.eval.split;
    if ((rc = cli_setup("eval", &co))) return rc;
    cli_ctx_plan(split && ctx == 0 ? 256 : ctx, &co);
    return eval_path_ppl_split("eval", pos[0], text, ctx, split ? eval_windows : 0, &co);
}
