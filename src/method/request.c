#include "method/request.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"
#include "eval/recall_prompt.h"
#include "hub/repo_ref.h"
#include "method/ablate.h"
#include "select/select.h"
#include "student/student.h"

static const char *const kind_names[REQ_KIND_COUNT] = {"stats",  "select",   "convert", "eval",    "ablate",
                                                      "race",   "train",    "generate", "recall", "halflife",
                                                      "ppl",    "inspect",  "bench-decode", "download"};

static const char *const usages[REQ_KIND_COUNT] = {
    "graft stats MODEL --text FILE [--ctx N] [--seqs N] [--json]",
    "graft select MODEL --strategy S --keep R --text FILE [--json]",
    "graft convert MODEL --keep R --strategy S --init I --calib FILE [--out DIR] [--force] [--json]",
    "graft eval MODEL|STUDENT --text FILE [--ctx N] [--json]",
    "graft ablate MODEL --calib FILE --eval FILE [--keep LIST] [--strategy LIST] [--init LIST] [--json]",
    "graft race MODEL [STUDENT_DIR ...] [--inits A,B] [--keep R] [--strategy S] [--calib FILE] [--tokens N] [--json]",
    "graft train STUDENT --teacher MODEL [--data PATH] [--tokens N] [--ckpt FILE] [--json]",
    "graft generate MODEL|STUDENT [--prompt TEXT] [-n N] [--temp T] [--json]",
    "graft recall MODEL|STUDENT [--tasks LIST] [--lengths LIST] [--depths LIST] [--samples N] [--haystack FILE] [--json]",
    "graft halflife STUDENT [--text FILE] [--ctx N] [--seqs N] [--ckpt FILE]... [--json]",
    "graft ppl MODEL|STUDENT --text FILE [--ctx N] [--json]",
    "graft inspect MODEL [--ctx N] [--batch B] [--json]",
    "graft bench-decode MODEL|STUDENT [--contexts 1k,8k,32k] [--batch 1,16] [--tokens N] [--json]",
    "graft download ORG/NAME[@REV][:PATH] [--include GLOB]... [--revision REV] [--json] [--quiet]",
};

const char *req_kind_name(req_kind k) { return k >= 0 && k < REQ_KIND_COUNT ? kind_names[k] : NULL; }
const char *request_usage(req_kind k) { return k >= 0 && k < REQ_KIND_COUNT ? usages[k] : ""; }

void request_positional(req_kind k, int *min, int *max) {
    *min = 1;
    *max = k == REQ_RACE ? REQ_MAX_POS : 1;
}

void request_init(request *r, req_kind k) {
    memset(r, 0, sizeof *r);
    r->kind = k;
    common_opts_default(&r->co);
    r->n_ranks = 1;
    switch (k) {
    case REQ_STATS: r->u.stats = (stats_req){NULL, 256, 4}; break;
    case REQ_SELECT:
        method_cli_default(&r->u.select.mo);
        r->u.select.init = student_init_name(INIT_TAYLOR_CALIBRATE);
        r->u.select.keep = NAN;
        break;
    case REQ_CONVERT:
        method_cli_default(&r->u.convert.mo);
        r->u.convert.keep = NAN;
        break;
    case REQ_EVAL: r->u.eval = (eval_req){NULL, 0, 32, false}; break;
    case REQ_ABLATE:
        method_cli_default(&r->u.ablate.mo);
        r->u.ablate.keep_list = "0.25,0.5,0.75";
        r->u.ablate.strat_list = "uniform,ar,ga-s2";
        break;
    case REQ_RACE:
        train_cli_default(&r->u.race.tc);
        method_cli_default(&r->u.race.mo);
        break;
    case REQ_TRAIN: train_cli_default(&r->u.train.tc); break;
    case REQ_GENERATE: r->u.generate = (generate_req){"", 64, 0, false}; break;
    case REQ_RECALL:
        r->u.recall.chat = "auto";
        r->u.recall.samples = 4;
        break;
    case REQ_HALFLIFE:
        halflife_request_default(&r->u.halflife.q);
        r->u.halflife.eval_windows = 16;
        r->u.halflife.fix_steps = -1;
        break;
    case REQ_PPL: break;
    case REQ_INSPECT: r->u.inspect.batch = 4; break;
    case REQ_BENCH_DECODE: r->u.bench_decode = (bench_decode_req){"1k,8k,32k", "1,16", 64, 4096}; break;
    case REQ_DOWNLOAD: break;
    case REQ_KIND_COUNT: break;
    }
}

#define RANKS(r)                                                                                         \
    {"ranks", OPT_INT, &(r)->n_ranks, "run as N local ranks under mpirun, sharing the work (default 1)"}, \
    {"gpus", OPT_INT, &(r)->n_gpus, "run as N local ranks, one per GPU (--ranks N --device cuda)"}

static int put(opt_spec *dst, const opt_spec *src, int n) {
    GF_ASSERT(n <= REQ_MAX_OPTS);
    memcpy(dst, src, (size_t)n * sizeof *src);
    return n;
}
#define PUT(...)                                                          \
    do {                                                                  \
        const opt_spec t_[] = {__VA_ARGS__};                              \
        return put(specs, t_, (int)(sizeof t_ / sizeof *t_));            \
    } while (0)

int request_bind(request *r, opt_spec *specs) {
    switch (r->kind) {
    case REQ_STATS: {
        stats_req *q = &r->u.stats;
        PUT({"text", OPT_STR, &q->text, "calibration text file"},
            {"ctx", OPT_INT, &q->ctx, "tokens per sequence, BOS included (default 256)"},
            {"seqs", OPT_INT, &q->seqs, "sequences (default 4; 0 = every complete one)"}, RANKS(r), CTX_OPTS(r->co), COMMON_OPTS(r->co));
    }
    case REQ_SELECT: {
        select_req *q = &r->u.select;
        PUT({"strategy", OPT_STR, &q->strategy, "uniform | ar | ga-s2 | manual:0,3"},
            {"keep", OPT_DOUBLE, &q->keep, "retention ratio in (0, 1)"},
            {"text", OPT_STR, &q->text, "held-out text for ar / ga-s2 scores"},
            {"init", OPT_STR, &q->init, "ga-s2: initialization of the converted layers (default taylor-calibrate)"},
            {"calib", OPT_STR, &q->calib, "ga-s2: calibration text (default: the first part of --text; scores use a later part)"},
            METHOD_OPTS(q->mo), STAGE1_OPTS(q->mo), RANKS(r), CTX_OPTS(r->co), COMMON_OPTS(r->co));
    }
    case REQ_CONVERT: {
        convert_req *q = &r->u.convert;
        PUT({"keep", OPT_DOUBLE, &q->keep, "retention ratio in (0, 1): fraction of layers keeping attention"},
            {"strategy", OPT_STR, &q->strategy, "uniform | ar | ga-s2 | manual:0,3"},
            {"init", OPT_STR, &q->init, student_init_list(" | ")},
            {"calib", OPT_STR, &q->calib, "calibration text file"},
            {"text", OPT_STR, &q->text, "held-out text scoring ar / ga-s2 (default: the calibration file after its calibration part)"},
            {"out", OPT_STR, &q->out, "student folder to write (default: student-<teacher>-<init>-<digest of the request>)"},
            {"force", OPT_FLAG, &q->force, "replace a folder that another request made"},
            METHOD_OPTS(q->mo), STAGE1_OPTS(q->mo), RANKS(r), CTX_OPTS(r->co), COMMON_OPTS(r->co));
    }
    case REQ_EVAL: {
        eval_req *q = &r->u.eval;
        PUT({"text", OPT_STR, &q->text, "text file, encoded as its bytes are, BOS first"},
            {"ctx", OPT_INT, &q->ctx, "window length (default: the model's context; 256 with --split)"},
            {"split", OPT_FLAG, &q->split, "only the evaluation slice of the text's calibration split (as the workbench's Results)"},
            {"eval-windows", OPT_INT, &q->eval_windows, "with --split: evaluation windows (default 32, the workbench's)"},
            CTX_OPTS(r->co), COMMON_OPTS(r->co));
    }
    case REQ_ABLATE: {
        ablate_req *q = &r->u.ablate;
        PUT({"calib", OPT_STR, &q->calib, "calibration text file"},
            {"eval", OPT_STR, &q->eval, "held-out evaluation text (may be the same file: then split, see docs/method.md)"},
            {"keep", OPT_STR, &q->keep_list, "retention ratios, comma-separated (default 0.25,0.5,0.75)"},
            {"strategy", OPT_STR, &q->strat_list, "strategies, comma-separated (default uniform,ar,ga-s2; manual lists use + : manual:0+3)"},
            {"init", OPT_STR, &q->init_list, "initializations, comma-separated (default all six; taylor-calibrate with --stage1-subsets)"},
            METHOD_OPTS(q->mo), STAGE1_OPTS(q->mo),
            {"stage1-subsets", OPT_FLAG, &q->subsets, "Stage 1 rows: all, none, each component alone, each left out"},
            CTX_OPTS(r->co), COMMON_OPTS(r->co));
    }
    case REQ_RACE: {
        race_req *q = &r->u.race;
        PUT(TRAIN_CLI_OPTS(q->tc),
            {"inits", OPT_STR, &q->inits, "comma-separated initializations, the first is the baseline (default random,taylor-calibrate)"},
            {"calib", OPT_STR, &q->calib, "calibration text for building students (default: --data)"},
            {"text", OPT_STR, &q->text, "held-out text scoring ar / ga-s2 (default: the calibration file after its calibration part)"},
            {"ckpt-dir", OPT_STR, &q->ckpt_dir, "checkpoint each run to DIR/INIT.ckpt (at the end, every --ckpt-every steps, on SIGINT/SIGTERM)"},
            {"ckpt-every", OPT_LONG, &q->tc.to.ckpt_every, "with --ckpt-dir: checkpoint every N steps (default: at the end)"},
            {"resume", OPT_FLAG, &q->resume, "with --ckpt-dir: each run continues from its checkpoint (same options and seed)"},
            {"ckpt-keep", OPT_FLAG, &q->tc.to.ckpt_keep, "with --ckpt-dir: also keep every checkpoint as DIR/INIT.ckpt.step-N (graft halflife --ckpt)"},
            {"force", OPT_FLAG, &q->force, "use a --ckpt-dir that another race's request wrote"},
            STAGE1_OPTS(q->mo), RANKS(r), CTX_OPTS(r->co), COMMON_OPTS(r->co));
    }
    case REQ_TRAIN: {
        train_req *q = &r->u.train;
        PUT(TRAIN_CLI_OPTS(q->tc), {"ckpt", OPT_STR, &q->ckpt, "checkpoint file (written atomically; also on SIGINT/SIGTERM)"},
            {"ckpt-every", OPT_LONG, &q->tc.to.ckpt_every, "checkpoint every N steps (default: at the end)"},
            {"resume", OPT_FLAG, &q->resume, "continue from --ckpt when it exists (same options and seed)"},
            {"ckpt-keep", OPT_FLAG, &q->tc.to.ckpt_keep, "also keep every checkpoint as FILE.step-N (graft halflife --ckpt: the drift)"},
            {"out", OPT_STR, &q->out, "write the trained student folder here (STUDENT must be a student folder)"},
            {"force", OPT_FLAG, &q->force, "use a --ckpt, or replace an --out folder, that another request wrote"},
            {"log-windows", OPT_STR, &q->tc.to.window_log, "write the corpus windows of every step's global batch here"},
            RANKS(r), CTX_OPTS(r->co), COMMON_OPTS(r->co));
    }
    case REQ_GENERATE: {
        generate_req *q = &r->u.generate;
        PUT({"prompt", OPT_STR, &q->prompt, "text to continue (default: empty, start from BOS)"},
            {"n", OPT_INT, &q->n, "tokens to generate (default 64)"},
            {"temp", OPT_DOUBLE, &q->temp, "sampling temperature (default 0: greedy)"},
            {"ignore-eos", OPT_FLAG, &q->ignore_eos, "keep going past the end-of-text token"}, COMMON_OPTS(r->co));
    }
    case REQ_RECALL: {
        recall_req *q = &r->u.recall;
        PUT({"tasks", OPT_STR, &q->tasks, "passkey,niah-number,niah-word,multikey,multivalue,multiquery,vt or all (default all)"},
            {"lengths", OPT_STR, &q->lengths, "prompt lengths in the model's tokens, 4096 or 4k (default 1k,2k,4k)"},
            {"depths", OPT_STR, &q->depths, "where the asked needle goes, percent of the context (default 0,25,50,75,100)"},
            {"samples", OPT_INT, &q->samples, "prompts per task, length and depth (default 4)"},
            {"haystack", OPT_STR, &q->haystack, "a text file whose sentences fill the context (default: repeated filler)"},
            {"chat", OPT_STR, &q->chat, "auto (the tokenizer's template), none, chatml or llama3"},
            {"batch", OPT_INT, &q->batch, "prompts per forward (default 0: 1 on the CPU, what fits on a GPU)"},
            {"dump", OPT_STR, &q->dump, "write every sample (prompt ids, answers, output, score) as JSON lines to FILE"},
            COMMON_OPTS(r->co));
    }
    case REQ_HALFLIFE: {
        halflife_req *q = &r->u.halflife;
        PUT({"text", OPT_STR, &q->text, "text file (default: the calibration text named in STUDENT/report.json)"},
            {"ctx", OPT_INT, &q->q.ctx, "tokens per sequence, BOS included (default 256)"},
            {"seqs", OPT_INT, &q->q.seqs, "sequences (default 4)"},
            {"ckpt", OPT_STR_LIST, &q->ckpts, "a graft train checkpoint of STUDENT (repeatable: the drift over them)"},
            {"stats", OPT_STR, &q->stats, "teacher statistics: a report.json or graft stats --json file (default: STUDENT/report.json)"},
            {"fix", OPT_STR_LIST, &q->fixes, "L:H=N|no-sink|all|median|keep: set head H of layer L's idle half-life (median: scale its decay so the median meets the target; keep: no change), then Stage 2 of that layer alone (repeatable; needs --out)"},
            {"out", OPT_STR, &q->out, "with --fix: the fixed student folder to write"},
            {"calib", OPT_STR, &q->calib, "with --fix: calibration text for Stage 2 (default: the one in STUDENT/report.json)"},
            {"steps", OPT_INT, &q->fix_steps, "with --fix: Stage 2 steps (default: the student's own setting; 0: the decay change alone)"},
            {"eval-windows", OPT_INT, &q->eval_windows, "with --fix: perplexity windows of the calibration text's evaluation slice (default 16)"},
            CTX_OPTS(r->co), COMMON_OPTS(r->co));
    }
    case REQ_PPL: {
        ppl_req *q = &r->u.ppl;
        PUT({"text", OPT_STR, &q->text, "text file, encoded as its bytes are, BOS first"},
            {"ctx", OPT_INT, &q->ctx, "window length (default: the model's context)"}, CTX_OPTS(r->co), COMMON_OPTS(r->co));
    }
    case REQ_INSPECT: {
        inspect_req *q = &r->u.inspect;
        PUT({"ctx", OPT_INT, &q->ctx, "sequence length of the memory estimates (default: 2048, at most the model's context)"},
            {"batch", OPT_INT, &q->batch, "training batch of the memory estimate (default 4)"}, CTX_OPTS(r->co),
            COMMON_OPTS(r->co));
    }
    case REQ_BENCH_DECODE: {
        bench_decode_req *q = &r->u.bench_decode;
        PUT({"contexts", OPT_STR, &q->contexts, "prompt lengths, comma-separated, k = 1024 (default 1k,8k,32k)"},
            {"batch", OPT_STR, &q->batches, "sequences decoded together, comma-separated (default 1,16)"},
            {"tokens", OPT_INT, &q->tokens, "tokens decoded per sequence after the prefill (default 64)"},
            {"prefill-chunk", OPT_INT, &q->prefill_chunk, "positions per prefill call (default 4096)"}, COMMON_OPTS(r->co));
    }
    case REQ_DOWNLOAD: { /* no model is loaded: none of the shared options but --json and --help */
        download_req *q = &r->u.download;
        PUT({"include", OPT_STR_LIST, &q->include, "only files matching this glob (repeatable; fnmatch, '*' crosses '/')"},
            {"revision", OPT_STR, &q->revision, "branch, tag or commit (same as REPO@REV)"},
            {"json", OPT_FLAG, &r->co.json, "print {path, commit, files: [{name, size, sha256}]}"},
            {"quiet", OPT_FLAG, &q->quiet, "no progress on stderr"},
            {"events", OPT_FLAG, &q->events, "progress events as JSON lines on stderr (for scripts)"},
            {"help", OPT_FLAG, &r->co.help, "this help"});
    }
    case REQ_KIND_COUNT: break;
    }
    return 0;
}

int request_parse(request *r, req_kind k, int argc, char **argv) {
    request_init(r, k);
    opt_spec specs[REQ_MAX_OPTS];
    const int n = request_bind(r, specs);
    int lo, hi;
    request_positional(k, &lo, &hi);
    return args_parse(argc, argv, specs, n, r->pos, hi, &r->n_pos);
}

/* ---- equality and printing: a request against its kind's defaults, option by option ---- */

static bool str_eq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

static bool value_eq(const opt_spec *a, const opt_spec *b) {
    switch (a->kind) {
    case OPT_FLAG: return *(const bool *)a->dst == *(const bool *)b->dst;
    case OPT_INT: return *(const int *)a->dst == *(const int *)b->dst;
    case OPT_LONG: return *(const long *)a->dst == *(const long *)b->dst;
    case OPT_DOUBLE: {
        const double x = *(const double *)a->dst, y = *(const double *)b->dst;
        return x == y || (isnan(x) && isnan(y));
    }
    case OPT_STR: return str_eq(*(const char *const *)a->dst, *(const char *const *)b->dst);
    case OPT_STR_LIST: {
        const str_list *x = a->dst, *y = b->dst;
        if (x->n != y->n) return false;
        for (int i = 0; i < x->n; i++)
            if (!str_eq(x->items[i], y->items[i])) return false;
        return true;
    }
    }
    return false;
}

bool request_equal(const request *a, const request *b) {
    if (a->kind != b->kind || a->n_pos != b->n_pos) return false;
    for (int i = 0; i < a->n_pos; i++)
        if (!str_eq(a->pos[i], b->pos[i])) return false;
    request x = *a, y = *b; /* bind needs writable fields; copies keep a and b const */
    opt_spec sx[REQ_MAX_OPTS], sy[REQ_MAX_OPTS];
    const int n = request_bind(&x, sx);
    request_bind(&y, sy);
    for (int i = 0; i < n; i++)
        if (!value_eq(&sx[i], &sy[i])) return false;
    return true;
}

typedef struct {
    char *buf;
    size_t n, at;
    bool cut;
} out_buf;

static void add(out_buf *o, const char *s) {
    const size_t len = strlen(s);
    if (o->at + len + 1 > o->n) {
        o->cut = true;
        return;
    }
    memcpy(o->buf + o->at, s, len + 1);
    o->at += len;
}

static bool plain_word(const char *s) {
    if (!*s) return false;
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:+=@%-", *p)) return false;
    return true;
}

/* a word as a POSIX shell reads it back: bare when plain, else in single quotes ('\'' for a quote) */
static void add_word(out_buf *o, const char *s) {
    add(o, " ");
    if (plain_word(s)) {
        add(o, s);
        return;
    }
    add(o, "'");
    for (const char *p = s; *p; p++) {
        char c[2] = {*p, 0};
        add(o, *p == '\'' ? "'\\''" : c);
    }
    add(o, "'");
}

/* the shortest decimal that reads back as the same double */
static void format_double(double x, char *buf, size_t n) {
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, x);
        if (strtod(buf, NULL) == x) return;
    }
}

int request_command(const request *r, char *buf, size_t n) {
    out_buf o = {buf, n, 0, false};
    if (n) buf[0] = 0;
    add(&o, "graft ");
    add(&o, req_kind_name(r->kind));
    /* a positional argument that looks like an option goes after "--", behind the options */
    bool dashed = false;
    for (int i = 0; i < r->n_pos; i++) dashed |= r->pos[i][0] == '-' && r->pos[i][1];
    for (int i = 0; i < r->n_pos && !dashed; i++) add_word(&o, r->pos[i]);
    request x = *r, d;
    request_init(&d, r->kind);
    opt_spec sx[REQ_MAX_OPTS], sd[REQ_MAX_OPTS];
    const int ns = request_bind(&x, sx);
    request_bind(&d, sd);
    for (int i = 0; i < ns; i++) {
        const opt_spec *s = &sx[i];
        if (value_eq(s, &sd[i]) || !strcmp(s->name, "help")) continue;
        char v[64];
        const char *name = s->name;
        if (s->kind == OPT_STR && !*(const char *const *)s->dst) continue; /* NULL: not given (a default of "x" cleared) */
        if (s->kind == OPT_DOUBLE && isnan(*(const double *)s->dst)) continue; /* NaN: not given */
        if (s->kind == OPT_STR_LIST) {
            const str_list *l = s->dst;
            for (int j = 0; j < l->n; j++) {
                add(&o, " --");
                add(&o, name);
                add_word(&o, l->items[j]);
            }
            continue;
        }
        add(&o, strlen(name) == 1 ? " -" : " --");
        add(&o, name);
        switch (s->kind) {
        case OPT_FLAG: continue;
        case OPT_INT: snprintf(v, sizeof v, "%d", *(const int *)s->dst); break;
        case OPT_LONG: snprintf(v, sizeof v, "%ld", *(const long *)s->dst); break;
        case OPT_DOUBLE: format_double(*(const double *)s->dst, v, sizeof v); break;
        case OPT_STR: add_word(&o, *(const char *const *)s->dst); continue;
        case OPT_STR_LIST: continue;
        }
        add(&o, " ");
        add(&o, v);
    }
    if (dashed) {
        add(&o, " --");
        for (int i = 0; i < r->n_pos; i++) add_word(&o, r->pos[i]);
    }
    return o.cut ? -1 : 0;
}

int request_split(const char *line, int *argc, char ***argv) {
    const size_t len = strlen(line);
    /* at most len / 2 + 1 words; their text fits in len + one NUL each */
    const size_t max_words = len / 2 + 2;
    char **v = gf_malloc(max_words * sizeof *v + 2 * len + 2);
    char *out = (char *)(v + max_words);
    int n = 0;
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        v[n++] = out;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
            if (*p == '\'') {
                const char *e = strchr(p + 1, '\'');
                if (!e) goto unterminated;
                memcpy(out, p + 1, (size_t)(e - p - 1));
                out += e - p - 1;
                p = e + 1;
            } else if (*p == '"') {
                for (p++; *p && *p != '"'; p++) {
                    if (*p == '\\' && p[1] && strchr("\"\\$`", p[1])) p++;
                    *out++ = *p;
                }
                if (!*p) goto unterminated;
                p++;
            } else if (*p == '\\' && p[1]) {
                *out++ = p[1];
                p += 2;
            } else {
                *out++ = *p++;
            }
        }
        *out++ = 0;
    }
    v[n] = NULL;
    *argc = n;
    *argv = v;
    return 0;
unterminated:
    free(v);
    return gf_fail("unterminated quote in '%s'", line);
}

int request_from_command(request *r, int argc, char **argv) {
    if (argc < 2 || strcmp(argv[0], "graft") != 0) return gf_fail("not a graft command: it must begin with 'graft KIND'");
    for (int k = 0; k < REQ_KIND_COUNT; k++)
        if (!strcmp(argv[1], kind_names[k])) return request_parse(r, (req_kind)k, argc - 1, argv + 1);
    return gf_fail("unknown command '%s'", argv[1]);
}

/* ---- validation: one per operation ---- */

static int need_pos(const request *r) {
    int lo, hi;
    request_positional(r->kind, &lo, &hi);
    if (r->n_pos < lo) return gf_fail("missing argument (usage: %s)", request_usage(r->kind));
    return 0;
}

static int check_keep(double keep) {
    if (!(keep > 0 && keep < 1)) return gf_fail("retention ratio must be in (0, 1), got %g", keep);
    return 0;
}

static int check_common(const request *r) {
    if (!be_device_name_ok(r->co.device)) return gf_fail("unknown device '%s' (cpu or cuda[:N])", r->co.device ? r->co.device : "");
    if (r->co.threads < 0) return gf_fail("--threads must be >= 0, got %d", r->co.threads);
    if (r->n_ranks < 1) return gf_fail("--ranks must be >= 1, got %d", r->n_ranks);
    if (r->n_gpus < 0) return gf_fail("--gpus must be >= 0, got %d", r->n_gpus);
    return 0;
}

static int check_convert(const convert_req *q, long seed) {
    if (!q->strategy || !q->init || !q->calib) return gf_fail("--strategy, --init and --calib are required");
    strategy_spec ss;
    student_init init;
    student_settings set;
    if (strategy_parse(q->strategy, 0, &ss) != 0 || student_init_parse(q->init, &init) != 0 ||
        method_cli_settings(&q->mo, seed, init, &set) != 0 || method_cli_stage1_check(&q->mo, init) != 0)
        return -1;
    if (ss.kind != STRATEGY_MANUAL && isnan(q->keep)) return gf_fail("--keep R is required (a ratio in (0, 1))");
    if (!isnan(q->keep)) return check_keep(q->keep);
    return 0;
}

static int check_select(const select_req *q, long seed) {
    if (!q->strategy) return gf_fail("--strategy is required");
    strategy_spec ss;
    student_init init;
    student_settings set;
    if (strategy_parse(q->strategy, 0, &ss) != 0 || student_init_parse(q->init, &init) != 0 ||
        method_cli_settings(&q->mo, seed, init, &set) != 0 || method_cli_stage1_check(&q->mo, init) != 0)
        return -1;
    if (ss.kind != STRATEGY_MANUAL && check_keep(q->keep) != 0) return -1;
    if ((ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2) && !q->text)
        return gf_fail("--text FILE is required for %s", strategy_name(ss.kind));
    return 0;
}

int request_sizes(const char *s, int *out, int max) {
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s) return -1;
        if (*end == 'k' || *end == 'K') v *= 1024, end++;
        if (v < 1 || v > (1L << 24) || n == max || (*end && *end != ',')) return -1;
        out[n++] = (int)v;
        s = *end ? end + 1 : end;
    }
    return n;
}

static int check_bench_decode(const bench_decode_req *q) {
    int sizes[REQ_MAX_SIZES];
    if (request_sizes(q->contexts, sizes, REQ_MAX_SIZES) <= 0)
        return gf_fail("--contexts '%s': expected sizes like 1k,8k,32k", q->contexts);
    if (request_sizes(q->batches, sizes, REQ_MAX_SIZES) <= 0) return gf_fail("--batch '%s': expected sizes like 1,16", q->batches);
    if (q->tokens < 1) return gf_fail("--tokens must be >= 1, got %d", q->tokens);
    if (q->prefill_chunk < 1) return gf_fail("--prefill-chunk must be >= 1, got %d", q->prefill_chunk);
    return 0;
}

static int check_download(const request *r) {
    hub_ref ref;
    if (hub_parse_ref(r->pos[0], &ref) != 0) return -1;
    const char *rev = r->u.download.revision;
    if (rev && ref.has_revision && strcmp(rev, ref.revision) != 0)
        return gf_fail("both @%s and --revision %s given", ref.revision, rev);
    return 0;
}

int recall_req_to_engine(const request *r, recall_request *rq) {
    const recall_req *q = &r->u.recall;
    recall_request_default(rq);
    rq->samples = q->samples;
    rq->batch = q->batch;
    rq->seed = (uint64_t)r->co.seed;
    rq->haystack = q->haystack;
    if ((q->tasks && recall_parse_tasks(rq, q->tasks) != 0) || (q->lengths && recall_parse_lengths(rq, q->lengths) != 0) ||
        (q->depths && recall_parse_depths(rq, q->depths) != 0) || recall_chat_parse(q->chat, &rq->chat) != 0)
        return -1;
    return 0;
}

static int recall_req_check(const request *r) {
    recall_request rq;
    if (recall_req_to_engine(r, &rq) != 0) return -1;
    model_config any = {0}; /* counts only: positions are checked once the model is known */
    return recall_validate(&rq, &any);
}

int request_check(const request *r) {
    if (need_pos(r) != 0 || check_common(r) != 0) return -1;
    switch (r->kind) {
    case REQ_STATS:
        if (!r->u.stats.text) return gf_fail("--text FILE is required");
        if (r->u.stats.ctx < 2) return gf_fail("--ctx must be >= 2, got %d", r->u.stats.ctx);
        if (r->u.stats.seqs < 0) return gf_fail("--seqs must be >= 0 (0: every complete one), got %d", r->u.stats.seqs);
        return 0;
    case REQ_SELECT: return check_select(&r->u.select, r->co.seed);
    case REQ_CONVERT: return check_convert(&r->u.convert, r->co.seed);
    case REQ_EVAL:
        if (!r->u.eval.text) return gf_fail("--text FILE is required");
        if (r->u.eval.ctx < 0) return gf_fail("--ctx must be >= 0 (0: the model's context), got %d", r->u.eval.ctx);
        if (r->u.eval.split && r->u.eval.eval_windows < 1)
            return gf_fail("--eval-windows must be >= 1, got %d", r->u.eval.eval_windows);
        return 0;
    case REQ_ABLATE:
        if (!r->u.ablate.calib || !r->u.ablate.eval) return gf_fail("--calib FILE and --eval FILE are required");
        {
            ablate_plan *p = gf_malloc(sizeof *p); /* the lists, expanded as the run expands them */
            const int rc = ablate_plan_make(r, p);
            free(p);
            return rc;
        }
    case REQ_RACE:
        if (r->u.race.tc.to.ckpt_keep && !r->u.race.ckpt_dir) return gf_fail("--ckpt-keep needs --ckpt-dir DIR");
        if (r->u.race.resume && !r->u.race.ckpt_dir) return gf_fail("--resume needs --ckpt-dir DIR");
        return 0; /* the training options: train_cli_finish */
    case REQ_TRAIN:
        if ((r->u.train.resume || r->u.train.tc.to.ckpt_keep) && !r->u.train.ckpt)
            return gf_fail("--resume and --ckpt-keep need --ckpt FILE");
        return 0;
    case REQ_RECALL: return recall_req_check(r);
    case REQ_HALFLIFE: return 0; /* the statistics, checkpoints and fixes are checked as graft halflife reads them */
    case REQ_GENERATE:
        if (r->u.generate.n < 0) return gf_fail("-n must be >= 0, got %d", r->u.generate.n);
        if (!(r->u.generate.temp >= 0 && r->u.generate.temp <= 1e6))
            return gf_fail("--temp must be a number in [0, 1e6], got %g", r->u.generate.temp);
        return 0;
    case REQ_PPL:
        if (!r->u.ppl.text) return gf_fail("--text FILE is required");
        if (r->u.ppl.ctx < 0) return gf_fail("--ctx must be >= 0 (0: the model's context), got %d", r->u.ppl.ctx);
        return 0;
    case REQ_INSPECT:
        if (r->u.inspect.ctx < 0) return gf_fail("--ctx must be >= 2 (0: the default), got %d", r->u.inspect.ctx);
        if (r->u.inspect.batch < 1) return gf_fail("--batch must be >= 1, got %d", r->u.inspect.batch);
        return 0;
    case REQ_BENCH_DECODE: return check_bench_decode(&r->u.bench_decode);
    case REQ_DOWNLOAD: return check_download(r);
    case REQ_KIND_COUNT: break;
    }
    return gf_fail("unknown request");
}
