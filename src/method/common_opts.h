/* The options every request shares (--json, --threads, --seed, --device,
 * --tokenizer, --help): part of each request, so that a request printed as
 * its headless command carries them, and parsed back gets them again. */
#ifndef GRAFT_METHOD_COMMON_OPTS_H
#define GRAFT_METHOD_COMMON_OPTS_H

#include <stdbool.h>

#include "method/args.h"
#include "method/opt_limits.h"

typedef struct {
    bool json;
    bool help;
    int threads;        /* 0 = all cores */
    long seed;
    const char *device; /* "cpu" (default) or "cuda[:N]" */
    const char *tokenizer;
    bool extrapolate_positions; /* CTX_OPTS: --ctx may pass the model's positions */
} common_opts;

#define COMMON_OPTS(o)                                                                          \
    {"json", OPT_FLAG, &(o).json, "print one JSON object on stdout"},                           \
    {"threads", OPT_INT, &(o).threads, "CPU threads (default: all cores)"},                     \
    {"seed", OPT_LONG, &(o).seed, "random seed (default 1)"},                                   \
    {"device", OPT_STR, &(o).device, "cpu (default) or cuda[:N]"},                              \
    {"tokenizer", OPT_STR, &(o).tokenizer, "tokenizer file (default: found beside the model)"}, \
    {"help", OPT_FLAG, &(o).help, "this help"}

/* Commands with --ctx: the flag that lets it pass the model's trained positions. */
#define CTX_OPTS(o) {OPT_EXTRAPOLATE_NAME, OPT_FLAG, &(o).extrapolate_positions, OPT_EXTRAPOLATE_HELP}

void common_opts_default(common_opts *o);

#endif
