/* A small declarative option parser shared by every command.
 * Options are --name VALUE or --name=VALUE; flags take no value.
 * Anything not starting with "--" (or a lone "-") is positional. */
#ifndef GRAFT_METHOD_ARGS_H
#define GRAFT_METHOD_ARGS_H

#include <stdbool.h>

typedef enum { OPT_FLAG, OPT_INT, OPT_LONG, OPT_DOUBLE, OPT_STR, OPT_STR_LIST } opt_kind;

typedef struct {
    const char *name;  /* without the leading "--"; "n" also matches "-n" */
    opt_kind kind;
    void *dst;         /* bool*, int*, long*, double*, const char**, str_list* */
    const char *help;
} opt_spec;

typedef struct {
    const char *items[64];
    int n;
} str_list;

/* Parses argv[1..argc) (argv[0] is the command name). Positional arguments go
 * to pos[0..max_pos); *n_pos gets their count. Returns 0, or -1 with a one-line
 * error ("unknown option --x", "--ctx needs an integer, got 'abc'"). */
int args_parse(int argc, char **argv, const opt_spec *specs, int n_specs,
               const char **pos, int max_pos, int *n_pos);

/* Prints "  --name  help" lines. */
void args_usage(const opt_spec *specs, int n_specs);

#endif
