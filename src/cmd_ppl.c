/* graft ppl MODEL|STUDENT --text FILE [--ctx N]: perplexity (graft eval under its older name). */
#include <stdio.h>

#include "cli/common.h"
#include "commands.h"

int cmd_ppl(int argc, char **argv) {
    common_opts co;
    common_opts_default(&co);
    const char *text = NULL;
    int ctx = 0;
    opt_spec specs[] = {
        {"text", OPT_STR, &text, "text file, encoded as its bytes are, BOS first"},
        {"ctx", OPT_INT, &ctx, "window length (default: the model's context)"},
        CTX_OPTS(co),
        COMMON_OPTS(co),
    };
    const char *pos[1];
    int np, rc = cli_parse(argc, argv, specs, sizeof specs / sizeof *specs, pos, 1, 1, &np,
                           "graft ppl MODEL|STUDENT --text FILE [--ctx N] [--json]", &co);
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = cli_setup("ppl", &co))) return rc;
    cli_ctx_plan(ctx, &co);
    if (!text) {
        fprintf(stderr, "graft ppl: --text FILE is required\n");
        return 2;
    }
    /* teachers and student folders alike: the same code as graft eval */
    return eval_path_ppl("ppl", pos[0], text, ctx, &co);
}
