/* Every subcommand: int cmd_x(int argc, char **argv), argv[0] being its name.
 * Returns the process exit status (0 ok, 1 runtime error, 2 usage error). */
#ifndef GRAFT_COMMANDS_H
#define GRAFT_COMMANDS_H

#include "cli/common.h"

typedef int (*command_fn)(int argc, char **argv);

typedef struct {
    const char *name;
    command_fn fn;
    const char *summary;
} command;

extern const command graft_commands[];
extern const int graft_n_commands;

int cmd_inspect(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_bench_decode(int argc, char **argv);
int cmd_ppl(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_halflife(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_race(int argc, char **argv);
int cmd_download(int argc, char **argv);
int cmd_select(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_recall(int argc, char **argv);
int cmd_ablate(int argc, char **argv);
int cmd_tui(int argc, char **argv);     /* ui/tui_cmd.c */
int cmd_default(int argc, char **argv); /* `graft` with no command */

/* Perplexity of a teacher or a student folder (cmd_eval.c; ppl uses it for students). */
int eval_path_ppl(const char *cmd, const char *path, const char *text, int ctx, const common_opts *co);

#endif
