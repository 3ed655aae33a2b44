/* `graft` with no command: on a terminal, the workbench on the default teacher;
 * otherwise (a pipe, a script, CI) the default teacher's summary, a greedy
 * sample and its attention statistics as text. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/common.h"
#include "cli/stats_report.h"
#include "commands.h"
#include "data/text_tokens.h"
#include "hub/default_teacher.h"
#include "eval/generate.h"
#include "stats/collect.h"

int cmd_default(int argc, char **argv) {
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && !getenv("GRAFT_NO_TUI")) {
        char *tui_argv[] = {"tui", NULL};
        return cmd_tui(1, tui_argv);
    }
    (void)argc;
    (void)argv;
    char *path = default_teacher_path();
    if (!path) return cli_fail("");
    common_opts co;
    common_opts_default(&co);
    model m;
    int rc = cli_load_model("", path, &co, &m);
    free(path);
    if (rc != 0) return 1;
    model_summary_print(&m);
    if (m.tok) {
        int bos = tokenizer_bos(m.tok);
        int_vec out = {0};
        generate_opts go = {48, 0, 1, true, NULL, NULL, NULL};
        if (bos >= 0 && generate(&m, &bos, 1, &go, &out) == 0) {
            int_vec all = {0};
            int_vec_push(&all, bos);
            for (size_t i = 0; i < out.len; i++) int_vec_push(&all, out.data[i]);
            char *s = tokenizer_decode(m.tok, all.data, all.len, NULL);
            printf("\ngreedy sample: %s\n", s);
            free(s);
            int_vec_free(&all);
        }
        int_vec_free(&out);
        char *text = default_text_path();
        int_vec ids = {0}, cut = {0};
        int n_seqs = 0;
        attn_stats st;
        attn_stats_init(&st, m.cfg.n_layers, m.cfg.n_heads);
        if (text && text_file_tokens(m.tok, text, false, &ids) == 0 &&
            cut_sequences(ids.data, ids.len, 0, bos, 256, 4, &cut, &n_seqs) == 0 &&
            collect_attn_stats(&m, cut.data, n_seqs, 256, &st, NULL) == 0) {
            printf("\nattention statistics over %d x 256 tokens of %s\n\n", n_seqs, text);
            attn_stats_print(&st);
        }
        attn_stats_free(&st);
        int_vec_free(&ids);
        int_vec_free(&cut);
        free(text);
    }
    model_free(&m);
    return 0;
}
