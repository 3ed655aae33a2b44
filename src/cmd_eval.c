/* graft eval MODEL|STUDENT --text FILE [--ctx N]: perplexity of a teacher or
 * of a student folder (which `graft ppl` also accepts). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/common.h"
#include "commands.h"
#include "core/error.h"
#include "data/text_tokens.h"
#include "eval/perplexity.h"
#include "student/report_json.h"
#include "student/student_io.h"

int eval_path_ppl(const char *cmd, const char *path, const char *text, int ctx, const common_opts *co) {
    student s = {0};
    model teacher = {0};
    const bool is_student = student_folder_detect(path);
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
    if (ctx == 0) ctx = m->cfg.max_seq > 0 ? m->cfg.max_seq : 2048;
    if (!m->tok) {
        gf_fail("%s has no tokenizer (pass --tokenizer PATH)", path);
        rc = cli_fail(cmd);
    } else if (text_file_tokens(m->tok, text, true, &ids) != 0 ||
               eval_nll_mixed(m, is_student ? s.mixers : NULL, ids.data, ids.len, ctx, &nll, &count, NULL) != 0) {
        rc = cli_fail(cmd);
    } else if (co->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", path);
        cJSON_AddStringToObject(o, "kind", is_student ? "student" : "teacher");
        cJSON_AddNumberToObject(o, "tokens", (double)count);
        cJSON_AddNumberToObject(o, "nll", nll);
        cJSON_AddNumberToObject(o, "ppl", exp(nll / count));
        cJSON_AddNumberToObject(o, "ctx", ctx);
        if (is_student) {
            cJSON *gl = cJSON_AddArrayToObject(o, "gdn_layers");
            for (int l = 0; l < s.L; l++)
                if (s.is_gdn[l]) cJSON_AddItemToArray(gl, cJSON_CreateNumber(l));
            cJSON_AddItemToObject(o, "half_life", half_life_summary_json(student_half_life_summary(&s, NULL)));
            cJSON_AddStringToObject(o, "query_scale", gdn_scale_name(s.gcfg.scale_mode));
            cJSON_AddStringToObject(o, "init", student_init_name(s.set.init));
        }
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
    if (is_student) student_free(&s);
    else model_free(&teacher);
    return rc;
}

int cmd_eval(int argc, char **argv) {
    common_opts co;
    common_opts_default(&co);
    const char *text = NULL;
    int ctx = 0;
    opt_spec specs[] = {
        {"text", OPT_STR, &text, "text file, encoded as its bytes are, BOS first"},
        {"ctx", OPT_INT, &ctx, "window length (default: the model's context)"},
        COMMON_OPTS(co),
    };
    const char *pos[1];
    int np, rc = cli_parse(argc, argv, specs, sizeof specs / sizeof *specs, pos, 1, 1, &np,
                           "graft eval MODEL|STUDENT --text FILE [--ctx N] [--json]", &co);
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = cli_setup("eval", &co))) return rc;
    if (!text) {
        fprintf(stderr, "graft eval: --text FILE is required\n");
        return 2;
    }
    return eval_path_ppl("eval", pos[0], text, ctx, &co);
}
