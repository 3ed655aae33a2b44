/* The range of every numeric option, in one table (opt_limits.c), and the
 * checks that read it. args_parse applies them to every number it parses;
 * code that takes the same values another way (a request file, a settings
 * form) calls opt_check with the option's name. Every check is written so
 * that NaN fails it, and every refusal names the option, its range and the
 * value ("--clip must be in [0, 1000000], got nan"). */
#ifndef GRAFT_METHOD_OPT_LIMITS_H
#define GRAFT_METHOD_OPT_LIMITS_H

#include <stdbool.h>

typedef struct {
    const char *cmd;        /* the command the row is for; NULL: every command without its own row */
    const char *name;       /* option name without "--" */
    double lo, hi;          /* the bounds */
    bool lo_open, hi_open;  /* true: the bound itself is outside the range */
    const char *note;       /* what a special value means ("0: off"), or NULL */
} opt_limit;

/* The command whose rows opt_limit_find prefers (cli_parse sets it; NULL: none). */
void opt_limits_command(const char *cmd);

/* The whole table: *n rows. */
const opt_limit *opt_limits_table(int *n);
/* The row of an option for the current command (its own row, else the
 * common one), or NULL when it has none (then only finiteness is checked). */
const opt_limit *opt_limit_find(const char *name);

/* 0 when x is finite and inside the range of option `name`; else -1 with
 * "--NAME must be in [lo, hi] (note), got X" (or "must be a finite number"). */
int opt_check(const char *name, double x);

/* The highest --threads that makes sense here: the processors this process
 * may run on (at least 1). */
int opt_threads_available(void);

/* threads capped at opt_threads_available(); *capped tells whether it was. */
int opt_threads_cap(int threads, bool *capped);

/* --ctx against a model's positions: 0 when ctx is within 1..max_pos (or the
 * model names no maximum, max_pos <= 0), or when extrapolate is set; else -1
 * with a line naming --ctx, the model's max_position_embeddings and the
 * --extrapolate-positions flag. */
int opt_check_ctx(int ctx, int max_pos, bool extrapolate);

/* The flag that lets --ctx go past the model's trained positions, and what it means. */
#define OPT_EXTRAPOLATE_NAME "extrapolate-positions"
#define OPT_EXTRAPOLATE_HELP                                                                      \
    "allow --ctx beyond the model's max_position_embeddings (extrapolation): RoPE rotates positions " \
    "past the range the model was trained on; quality there is not guaranteed"

#endif
