/* graft ppl MODEL --text FILE [--ctx N] */
#include <math.h>
#include <stdio.h>

#include "cli/common.h"
#include "commands.h"
#include "data/text_tokens.h"
#include "eval/perplexity.h"
#include "student/student_io.h"

int cmd_ppl(int argc, char **argv) {
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
                           "graft ppl MODEL --text FILE [--ctx N] [--json]", &co);
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = cli_setup("ppl", &co))) return rc;
    if (!text) {
        fprintf(stderr, "graft ppl: --text FILE is required\n");
        return 2;
    }
    if (student_folder_detect(pos[0])) return eval_path_ppl("ppl", pos[0], text, ctx, &co);
    model m;
    if (cli_load_model("ppl", pos[0], &co, &m) != 0) return 1;
    if (!m.tok) {
        fprintf(stderr, "graft ppl: %s has no tokenizer (pass --tokenizer PATH)\n", pos[0]);
        model_free(&m);
        return 1;
    }
    if (ctx == 0) ctx = m.cfg.max_seq > 0 ? m.cfg.max_seq : 2048;
    int_vec ids = {0};
    double nll = 0;
    long count = 0;
    if (text_file_tokens(m.tok, text, true, &ids) != 0 || eval_nll(&m, ids.data, ids.len, ctx, &nll, &count, NULL) != 0) {
        rc = cli_fail("ppl");
    } else if (co.json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "tokens", (double)count);
        cJSON_AddNumberToObject(o, "nll", nll);
        cJSON_AddNumberToObject(o, "ppl", exp(nll / count));
        cJSON_AddNumberToObject(o, "ctx", ctx);
        cli_print_json(o);
    } else {
        printf("tokens %ld  nll %.4f nats  (%.4f per token)  perplexity %.4f  [ctx %d]\n", count, nll, nll / count,
               exp(nll / count), ctx);
    }
    int_vec_free(&ids);
    model_free(&m);
    return rc;
}
