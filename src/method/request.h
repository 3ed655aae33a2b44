/* Requests: what a person asks graft to do, one struct per operation (stats,
 * select, convert, eval, ablate, race, train, generate, recall, halflife, ppl,
 * inspect, bench-decode, download), the same for the command line and the
 * workbench.
 *
 * A request is its positional arguments and its options; the options are one
 * table (request_bind) bound to the request's fields, and that table is the
 * whole truth about them: the command line parses argv with it, the workbench
 * fills the same fields from its screens, request_command prints a request as
 * the headless command that makes it (the options that differ from their
 * defaults), and request_parse reads that command back into the same request.
 * request_check is the one validation of each operation: the same limits and
 * the same messages whichever face made the request. */
#ifndef GRAFT_METHOD_REQUEST_H
#define GRAFT_METHOD_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "eval/recall.h"
#include "halflife/halflife.h"
#include "method/args.h"
#include "method/common_opts.h"
#include "method/method_opts.h"
#include "method/race_run.h"
#include "method/train_cli.h"

typedef enum {
    REQ_STATS, REQ_SELECT, REQ_CONVERT, REQ_EVAL, REQ_ABLATE, REQ_RACE, REQ_TRAIN, REQ_GENERATE, REQ_RECALL, REQ_HALFLIFE,
    REQ_PPL, REQ_INSPECT, REQ_BENCH_DECODE, REQ_DOWNLOAD,
    REQ_KIND_COUNT
} req_kind;

#define REQ_MAX_POS (RACE_MAX_RUNS + 1) /* race: MODEL and up to RACE_MAX_RUNS student folders */
#define REQ_MAX_OPTS 72
#define REQ_MAX_SIZES 16 /* bench-decode: contexts, batch sizes */

typedef struct {
    const char *text;
    int ctx, seqs;
} stats_req;

typedef struct {
    method_cli mo;
    const char *strategy, *init, *text, *calib;
    double keep; /* NaN: not given */
} select_req;

typedef struct {
    method_cli mo;
    const char *strategy, *init, *calib, *text, *out;
    double keep; /* NaN: not given */
    bool force;  /* replace a folder another request made */
} convert_req;

typedef struct {
    const char *text;
    int ctx, eval_windows;
    bool split;
} eval_req;

typedef struct {
    method_cli mo;
    const char *calib, *eval, *keep_list, *strat_list, *init_list;
    bool subsets;
} ablate_req;

/* graft race without --inits: the baseline, then the paper's method */
#define RACE_DEFAULT_INITS "random,taylor-calibrate"

typedef struct {
    train_cli tc;
    method_cli mo; /* Stage 1 options of the builder */
    const char *inits, *calib, *text, *ckpt_dir;
    bool resume, force;
} race_req;

typedef struct {
    train_cli tc;
    const char *ckpt, *out;
    bool resume, force;
} train_req;

typedef struct {
    const char *prompt;
    int n;
    double temp;
    bool ignore_eos;
} generate_req;

typedef struct {
    const char *tasks, *lengths, *depths, *haystack, *chat, *dump;
    int samples, batch;
} recall_req;

typedef struct {
    halflife_request q;  /* ctx, seqs (the rest: the engine's defaults) */
    const char *text, *stats, *out, *calib;
    str_list ckpts, fixes;
    int eval_windows, fix_steps;
} halflife_req;

typedef struct {
    const char *text;
    int ctx; /* 0: the model's context */
} ppl_req;

typedef struct {
    int ctx, batch; /* of the memory estimates (ctx 0: 2048, at most the model's context) */
} inspect_req;

typedef struct {
    const char *contexts, *batches; /* size lists, k = 1024 ("1k,8k,32k"; request_sizes) */
    int tokens, prefill_chunk;
} bench_decode_req;

typedef struct {
    str_list include;     /* globs of the files to fetch (none: the model's files) */
    const char *revision; /* NULL: the REPO@REV's, else main */
    bool quiet, events;   /* no progress / progress as JSON lines on stderr */
} download_req;

typedef struct {
    req_kind kind;
    const char *pos[REQ_MAX_POS]; /* MODEL (or STUDENT), then race's student folders */
    int n_pos;
    common_opts co;
    int n_ranks, n_gpus; /* --ranks / --gpus (the commands that run as several ranks) */
    union {
        stats_req stats;
        select_req select;
        convert_req convert;
        eval_req eval;
        ablate_req ablate;
        race_req race;
        train_req train;
        generate_req generate;
        recall_req recall;
        halflife_req halflife;
        ppl_req ppl;
        inspect_req inspect;
        bench_decode_req bench_decode;
        download_req download;
    } u;
} request;

/* "convert"; NULL past the last kind. */
const char *req_kind_name(req_kind k);
/* The usage line of the command ("graft convert MODEL --keep R ..."). */
const char *request_usage(req_kind k);
/* Positional arguments: at least *min, at most *max. */
void request_positional(req_kind k, int *min, int *max);

/* A request of kind k with every default. */
void request_init(request *r, req_kind k);
/* The option table bound to r's fields, in the order the command's --help
 * lists them; returns how many (at most REQ_MAX_OPTS). */
int request_bind(request *r, opt_spec *specs);

/* Parses argv[1..argc) (argv[0]: the command name) into r (request_init'ed
 * first, of kind k). Strings point into argv. 0, or -1 with a one-line error
 * (unknown option, a value of the wrong type, too many positional arguments).
 * --help is recorded in r->co.help; too few positionals is request_check's. */
int request_parse(request *r, req_kind k, int argc, char **argv);

/* The one validation of an operation: required options, names that must
 * parse, numbers finite and in range (the range in the message). 0, or -1
 * with a one-line error. */
int request_check(const request *r);

/* The headless command: "graft convert 'MODEL' --strategy uniform ...", the
 * options that differ from their defaults, in table order, quoted for a POSIX
 * shell where needed. Cut (and -1) when it does not fit in n; 0 otherwise. */
int request_command(const request *r, char *buf, size_t n);

/* Splits a command line as a POSIX shell splits words (single and double
 * quotes, backslashes; no expansions) into *argv (one allocation, free(*argv)).
 * 0, or -1 with an error for an unterminated quote. */
int request_split(const char *line, int *argc, char ***argv);

/* Reads a headless command ("graft KIND ...") back into a request; argv (from
 * request_split) must outlive r. 0, or -1 with an error. */
int request_from_command(request *r, int argc, char **argv);

/* "1k,8k,32k" / "512,2048": positive sizes (k = 1024, at most 2^24) into
 * out[0..max). Their count, or -1 (a word that is not a size, too many). */
int request_sizes(const char *s, int *out, int max);

/* A recall request as the engine's recall_request (lists parsed). 0, or -1 with an error. */
int recall_req_to_engine(const request *r, recall_request *rq);

/* True when a and b have the same kind, positionals and option values
 * (strings compared by content). */
bool request_equal(const request *a, const request *b);

#endif
