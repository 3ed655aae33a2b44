#include "method/opt_limits.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/error.h"

/* One row per option name; an option of the same name means the same thing
 * in every command. Upper bounds are generous: they keep numbers sane (a
 * count that fits an int, a rate that is a rate), the memory check and
 * the model's positions bound the rest. */
#define CLOSED(n, lo, hi, note) {NULL, n, lo, hi, false, false, note}
#define OPEN_LO(n, lo, hi, note) {NULL, n, lo, hi, true, false, note}
#define OPEN(n, lo, hi, note) {NULL, n, lo, hi, true, true, note}
static const opt_limit limits[] = {
    /* shared */
    CLOSED("threads", 0, 65536, "0: every core; more than there are is capped"),
    CLOSED("seed", 0, 9007199254740991.0, NULL),
    CLOSED("ranks", 1, 4096, NULL),
    CLOSED("gpus", 1, 4096, NULL),
    /* sequences and counts */
    CLOSED("ctx", 2, 1048576, "at most the model's positions"),
    CLOSED("batch", 1, 65536, NULL),
    CLOSED("accum", 1, 65536, NULL),
    CLOSED("tokens", 1, 1e15, NULL),
    CLOSED("seqs", 0, 1048576, "0: every complete one"),
    CLOSED("n", 0, 1048576, NULL),
    CLOSED("calib-seqs", 1, 1048576, NULL),
    CLOSED("heldout-seqs", 0, 1048576, NULL),
    CLOSED("select-windows", 0, 1048576, NULL),
    CLOSED("eval-windows", 0, 1048576, "0: to the end"),
    CLOSED("eval-seqs", 0, 1048576, "0: all"),
    CLOSED("eval-every", 0, 1e12, "0: at the end"),
    CLOSED("ckpt-every", 0, 1e12, "0: at the end"),
    CLOSED("log-every", 0, 1e12, "0: none"),
    CLOSED("steps", 0, 10000000, NULL),
    CLOSED("chunk", 16, 64, "16, 32 or 64"),
    CLOSED("samples", 1, 1048576, NULL),
    CLOSED("recall-samples", 1, 1048576, NULL),
    CLOSED("recall-every", 0, 1e12, "0: none"),
    CLOSED("prefill-chunk", 1, 1048576, NULL),
    {"recall", "batch", 0, 65536, false, false, "0: 1 on the CPU, what fits on a GPU"},
    /* ratios and rates */
    OPEN("keep", 0, 1, NULL),
    /* absurd learning rates stay allowed: the trainer stops on the non-finite loss they cause */
    CLOSED("lr-mixer", 0, 1e30, "0 freezes"),
    CLOSED("lr-rest", 0, 1e30, "0 freezes"),
    CLOSED("warmup-frac", 0, 1, NULL),
    CLOSED("min-lr-ratio", 0, 1, NULL),
    CLOSED("clip", 0, 1e6, "0: off"),
    CLOSED("wd", 0, 1, NULL),
    OPEN_LO("temperature", 0, 100, NULL),
    CLOSED("temp", 0, 100, "0: greedy"),
    CLOSED("eval-frac", 0, 0.5, NULL),
    CLOSED("noise", 0, 100, NULL),
    OPEN_LO("damping", 0, 1e6, NULL),
};

const opt_limit *opt_limits_table(int *n) {
    *n = (int)(sizeof limits / sizeof limits[0]);
    return limits;
}

static const char *current_cmd;

void opt_limits_command(const char *cmd) { current_cmd = cmd; }

const opt_limit *opt_limit_find(const char *name) {
    const opt_limit *common = NULL;
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        if (strcmp(limits[i].name, name) != 0) continue;
        if (!limits[i].cmd) common = &limits[i];
        else if (current_cmd && strcmp(limits[i].cmd, current_cmd) == 0) return &limits[i];
    }
    return common;
}

static bool inside(const opt_limit *l, double x) {
    /* each comparison is true only for numbers, so NaN is outside */
    const bool above_lo = l->lo_open ? x > l->lo : x >= l->lo;
    const bool below_hi = l->hi_open ? x < l->hi : x <= l->hi;
    return above_lo && below_hi;
}

int opt_check(const char *name, double x) {
    const opt_limit *l = opt_limit_find(name);
    if (!l) {
        if (!isfinite(x)) return gf_fail("--%s must be a finite number, got %g", name, x);
        return 0;
    }
    if (isfinite(x) && inside(l, x)) return 0;
    return gf_fail("--%s must be in %c%.15g, %.15g%c%s%s%s, got %.15g", name, l->lo_open ? '(' : '[', l->lo, l->hi,
                   l->hi_open ? ')' : ']', l->note ? " (" : "", l->note ? l->note : "", l->note ? ")" : "", x);
}

int opt_threads_available(void) {
    const int n = omp_get_num_procs(); /* the processors of this process's affinity mask */
    return n > 0 ? n : 1;
}

int opt_threads_cap(int threads, bool *capped) {
    const int n = opt_threads_available();
    *capped = threads > n;
    return *capped ? n : threads;
}

int opt_check_ctx(int ctx, int max_pos, bool extrapolate) {
    if (!(ctx >= 1)) return gf_fail("--ctx must be at least 1, got %d", ctx);
    if (max_pos <= 0 || ctx <= max_pos || extrapolate) return 0;
    return gf_fail("--ctx %d is beyond the model's %d positions (max_position_embeddings); lower --ctx, or pass "
                   "--" OPT_EXTRAPOLATE_NAME " to extrapolate: RoPE then rotates positions %d..%d, past the range "
                   "the model was trained on, and its quality there is not guaranteed",
                   ctx, max_pos, max_pos, ctx - 1);
}
