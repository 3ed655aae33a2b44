/* graft ppl MODEL|STUDENT --text FILE [--ctx N]: perplexity (graft eval under
 * its older name): argv -> ppl request -> eval_path_ppl -> print. */
#include "cli/common.h"
#include "commands.h"

int cmd_ppl(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_PPL, argc, argv, &done);
    if (rc || done) return rc;
    if ((rc = cli_setup("ppl", &r.co))) return rc;
    cli_ctx_plan(r.u.ppl.ctx, &r.co);
    /* teachers and student folders alike: the same code as graft eval */
    return eval_path_ppl("ppl", r.pos[0], r.u.ppl.text, r.u.ppl.ctx, &r.co);
}
