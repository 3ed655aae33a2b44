#include "method/method_opts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "method/opt_limits.h"
#include "jobs/progress_line.h"
#include "core/error.h"
#include "convert/build.h"

void method_cli_default(method_cli *o) {
    memset(o, 0, sizeof *o);
    o->write_gate = "reference";
    o->damping = 0.01;
    o->chunk = 64;
    o->steps = 300;
    o->keep_best = "train";
    o->distance = "all";
    o->sigma_fit = "reference";
    split_spec_default(&o->split);
}

int method_cli_settings(const method_cli *o, long seed, student_init init, student_settings *s) {
    student_settings_default(s);
    s->init = init;
    if (write_gate_parse(o->write_gate, &s->write_gate) != 0) return -1;
    if (!(o->damping > 0)) return gf_fail("--damping must be positive, got %g", o->damping);
    s->damping = o->damping;
    s->conv = o->conv;
    s->qkv_bias = o->qkv_bias;
    s->scale = o->no_scale ? GDN_SCALE_NONE : GDN_SCALE_INV_SQRT_DK;
    if (o->chunk != 16 && o->chunk != 32 && o->chunk != 64) return gf_fail("--chunk must be 16, 32 or 64, got %d", o->chunk);
    s->chunk = o->chunk;
    if (o->steps < 0) return gf_fail("--steps must be >= 0, got %d", o->steps);
    s->steps = o->steps;
    if (strcmp(o->keep_best, "train") == 0) s->keep_best = KEEP_BEST_TRAIN;
    else if (strcmp(o->keep_best, "heldout") == 0) s->keep_best = KEEP_BEST_HELDOUT;
    else return gf_fail("--keep-best must be train or heldout, got '%s'", o->keep_best);
    s->seed = (uint64_t)seed;
    if (o->stage1 && stage1_parts_parse(o->stage1, &s->stage1) != 0) return -1;
    if (decay_distance_parse(o->distance, &s->distance) != 0) return -1;
    if (sigma_fit_parse(o->sigma_fit, &s->sigma_fit) != 0) return -1;
    if (o->half_life && half_life_parse(o->half_life, &s->half_life) != 0) return -1;
    if (s->half_life > 0 && !(s->stage1 & STAGE1_DECAY))
        return gf_fail("--half-life sets the decay: it needs decay among the --stage1 components");
    if (opt_check("heldout-seqs", o->split.n_heldout) || opt_check("select-windows", o->split.sel_windows) ||
        opt_check("eval-windows", o->split.eval_windows))
        return -1;
    return 0;
}

int half_life_parse(const char *text, double *out) {
    char *end;
    const double v = strtod(text, &end);
    if (end == text || *end || !(v > 0 && v <= 1e9))
        return gf_fail("--half-life must be a number of tokens in (0, 1e9], got '%s'", text);
    *out = v;
    return 0;
}

bool method_cli_stage1_given(const method_cli *o) {
    return o->stage1 || o->half_life || strcmp(o->distance, "all") != 0 || strcmp(o->sigma_fit, "reference") != 0;
}

int method_cli_stage1_check(const method_cli *o, student_init init) {
    if (init_uses_stage1(init)) return 0;
    if (method_cli_stage1_given(o))
        return gf_fail("--stage1, --distance, --half-life and --sigma-fit choose Stage 1's parts: init %s has no Stage 1 "
                       "(taylor-only and taylor-calibrate do)", student_init_name(init));
    return 0;
}

static void report_tty(void *ud, const char *what, double done, double total) {
    char amount[64], line[256];
    snprintf(amount, sizeof amount, "%.0f/%.0f", done, total);
    progress_line_format(line, sizeof line, terminal_columns(stderr) - 1, what, total > 0 ? done / total : 0, amount,
                         "", NAN);
    fprintf(stderr, "\r\033[K%s", line);
    if (done >= total) fputc('\n', stderr);
    fflush(stderr);
}

progress_sink cli_progress(void) {
    progress_sink p = {0};
    if (isatty(2)) p.report = report_tty;
    return p;
}

void method_plan_fill(mem_job *j, void *ud) {
    const method_plan *p = ud;
    const int L = j->cfg->n_layers;
    int n = L, k = 0;
    strategy_spec ss;
    if (!p->all_layers && p->strategy && strategy_parse(p->strategy, L, &ss) == 0 && ss.kind == STRATEGY_MANUAL)
        n = L - ss.n_manual;
    else if (!p->all_layers && keep_count(p->keep, L, &k) == 0)
        n = L - k;
    gf_clear_error(); /* the command reports bad options itself */
    cli_mem_gdn(j, &p->set);
    j->gdn_blocks = (p->students > 0 ? p->students : 1) * n;
    cli_mem_capture(j, 0, p->sp);
    if (p->score) cli_mem_eval(j, 1, p->sp->ctx, n);
    if (init_uses_stage1(p->set.init) || init_uses_stage2(p->set.init))
        cli_mem_build(j, p->sp, init_uses_stage2(p->set.init), n);
}

int method_capture(const model *m, const token_split *sp, teacher_capture *cal, teacher_capture *held,
                   const progress_sink *pr) {
    memset(held, 0, sizeof *held);
    if (teacher_capture_run(cal, m, sp->calib.data, sp->n_calib, (int)(sp->calib.len / sp->n_calib), 1, pr) != 0)
        return -1;
    if (sp->n_heldout > 0 &&
        teacher_capture_run(held, m, sp->heldout.data, sp->n_heldout, (int)(sp->heldout.len / sp->n_heldout), 0, pr) != 0) {
        teacher_capture_free(cal);
        return -1;
    }
    return 0;
}

int method_select_and_build(student *s, layer_selection *sel, const strategy_spec *ss, int k, const token_split *sp,
                            const teacher_capture *cal, const teacher_capture *held, int ctx,
                            const progress_sink *pr, const stage2_observer *obs) {
    const int L = s->L;
    const teacher_capture *h = held->L ? held : NULL;
    bool *mask = gf_calloc((size_t)L, sizeof *mask);
    int rc = -1;
    if (ss->kind == STRATEGY_GA_S2) { /* selection needs every layer under this init */
        for (int l = 0; l < L; l++) mask[l] = true;
        if (student_build_layers_observed(s, mask, cal, h, pr, obs) != 0) goto done;
    }
    if (select_layers(sel, ss, k, s->m, s, sp->select.data, sp->select.len, ctx, pr) != 0) goto done;
    for (int l = 0; l < L; l++) mask[l] = true;
    for (int i = 0; i < sel->k; i++) mask[sel->kept[i]] = false;
    if (ss->kind != STRATEGY_GA_S2 && student_build_layers_observed(s, mask, cal, h, pr, obs) != 0) goto done;
    rc = student_set_gdn(s, mask);
done:
    free(mask);
    return rc;
}
