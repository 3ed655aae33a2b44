/* graft halflife STUDENT [--text FILE] [--ctx N] [--seqs N] [--ckpt FILE]...:
 * every GDN head's idle and effective half-life on text, its write strength,
 * the teacher distance Stage 1 aimed at, and flags (engine/halflife). With
 * checkpoints of a training run of the student, the same for each and the
 * drift of every head's median. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/common.h"
#include "method/method_opts.h"
#include "cli/out_place.h"
#include "cli/signals.h"
#include "method/train_student.h"
#include "method/train_run.h"
#include "commands.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "data/text_tokens.h"
#include "formats/tokenizer_load.h"
#include "halflife/halflife.h"
#include "halflife/halflife_fix.h"
#include "student/calib_split.h"
#include "student/report_json.h"
#include "student/student_io.h"

/* A student folder's report.json (NULL: none or unreadable). */
static cJSON *report_of(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/report.json", dir);
    char *buf = access(path, R_OK) == 0 ? read_text_file(path, NULL) : NULL;
    cJSON *o = buf ? cJSON_Parse(buf) : NULL;
    free(buf);
    return o;
}

/* The text a student was calibrated on, from its report.json (NULL: none). */
static char *calib_text_of(const char *dir) {
    cJSON *o = report_of(dir);
    const cJSON *c = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "split"), "calib_file");
    char *out = cJSON_IsString(c) ? strdup(c->valuestring) : NULL;
    cJSON_Delete(o);
    return out;
}

/* "L:H=N" (N tokens), "L:H=no-sink" or "L:H=all" (the teacher's distance without the
 * first key / over every key, through Stage 1's clamp), "L:H=median" (the head's decay
 * rate scaled so that its measured median lands on the target; rate_scale -1 until
 * measured) or "L:H=keep" (no change: Stage 2 of the layer alone, the control a fix is
 * compared with). */
static int parse_fix(const char *text, int H, const double *to_all, const double *to_no_sink, halflife_change *c) {
    int l, h, used = 0;
    char what[32];
    if (sscanf(text, "%d:%d=%31s%n", &l, &h, what, &used) != 3 || text[used] != 0 || l < 0 || h < 0 || h >= H)
        return gf_fail("--fix %s: expected LAYER:HEAD=TOKENS|no-sink|all (head < %d)", text, H);
    c->layer = l, c->head = h;
    const size_t k = (size_t)l * H + h;
    char *end;
    c->half_life = c->rate_scale = 0;
    if (strcmp(what, "keep") == 0) return 0;
    if (strcmp(what, "median") == 0) return c->rate_scale = -1, 0; /* resolved once measured */
    if (strcmp(what, "no-sink") == 0) c->half_life = to_no_sink[k];
    else if (strcmp(what, "all") == 0) c->half_life = to_all[k];
    else if ((c->half_life = strtod(what, &end)), *end != 0 || !(c->half_life > 0))
        return gf_fail("--fix %s: the half-life must be a number of tokens > 0, no-sink or all", text);
    if (!(c->half_life > 0 && isfinite(c->half_life)))
        return gf_fail("--fix %s: the teacher statistics give no distance for this head (pass --stats)", text);
    return 0;
}

static void print_text(const halflife_result *r, const char *student, const char *text) {
    printf("%s on %s: %d sequences x %d tokens; half-lives in tokens (ln 2 / decay rate)\n", student, text, r->seqs,
           r->ctx);
    printf("%5s %4s %9s %9s %9s %9s %6s %6s %6s %6s %6s %9s  flags\n", "layer", "head", "idle", "p10", "p50", "p90",
           "<1", ">ctx", "b10", "b50", "b90", "teacher");
    for (int i = 0; i < r->n_heads; i++) {
        const halflife_head *h = &r->heads[i];
        printf("%5d %4d %9.3g %9.3g %9.3g %9.3g %5.0f%% %5.0f%% %6.3f %6.3f %6.3f %9.3g ", h->layer, h->head, h->idle,
               h->p10, h->p50, h->p90, 100 * h->under_one, 100 * h->over_ctx, h->beta_p10, h->beta_p50, h->beta_p90,
               h->target);
        for (int f = 0; f < HL_FLAG_COUNT; f++)
            if (h->flags & (1u << f)) printf(" %s", halflife_flag_names[f]);
        printf("\n");
    }
    int *idx = malloc((size_t)(r->n_heads ? r->n_heads : 1) * sizeof *idx);
    const int n = halflife_flagged_order(r, idx);
    printf("\n%d of %d heads flagged%s\n", n, r->n_heads, n ? ", worst first:" : "");
    for (int i = 0; i < n; i++) {
        const halflife_head *h = &r->heads[idx[i]];
        printf("  layer %d head %d (severity %.2f): %s\n", h->layer, h->head, h->severity, h->reason);
    }
    free(idx);
}

typedef struct {
    const char *path;
    long step, tokens;
    halflife_result r;
} measured;

static cJSON *drift_json(const measured *m, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "source", m[i].path);
        cJSON_AddNumberToObject(e, "step", (double)m[i].step);
        cJSON_AddNumberToObject(e, "tokens", (double)m[i].tokens);
        cJSON *p = cJSON_AddArrayToObject(e, "p50"), *id = cJSON_AddArrayToObject(e, "idle");
        for (int h = 0; h < m[i].r.n_heads; h++) {
            const double v = m[i].r.heads[h].p50, w = m[i].r.heads[h].idle;
            cJSON_AddItemToArray(p, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
            cJSON_AddItemToArray(id, isfinite(w) ? cJSON_CreateNumber(w) : cJSON_CreateNull());
        }
        cJSON_AddItemToArray(a, e);
    }
    return a;
}

static void print_drift(const measured *m, int n) {
    printf("\nmedian half-life per head over training (tokens):\n%5s %4s", "layer", "head");
    for (int i = 0; i < n; i++) printf(" %10ld", m[i].tokens);
    printf("   (columns: training tokens of each checkpoint; 0 = the folder)\n");
    for (int h = 0; h < m[0].r.n_heads; h++) {
        printf("%5d %4d", m[0].r.heads[h].layer, m[0].r.heads[h].head);
        for (int i = 0; i < n; i++) printf(" %10.3g", m[i].r.heads[h].p50);
        printf("\n");
    }
}

int cmd_halflife(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_HALFLIFE, argc, argv, &done);
    if (rc || done) return rc;
    common_opts co = r.co;
    const char **pos = r.pos;
    halflife_request q = r.u.halflife.q;
    const char *text = r.u.halflife.text, *stats = r.u.halflife.stats;
    const str_list ckpts = r.u.halflife.ckpts, fixes = r.u.halflife.fixes;
    const char *out_dir = r.u.halflife.out, *calib_opt = r.u.halflife.calib;
    const int eval_windows = r.u.halflife.eval_windows, fix_steps = r.u.halflife.fix_steps;
    if ((rc = cli_setup("halflife", &co))) return rc;
    cli_ctx_plan(q.ctx, &co);
    if (halflife_request_check(&q) != 0) {
        fprintf(stderr, "graft halflife: %s\n", gf_last_error());
        return 2;
    }
    if (fixes.n > 0 && (!out_dir || ckpts.n > 0 || eval_windows < 1 || fix_steps < -1)) {
        if (!out_dir) fprintf(stderr, "graft halflife: --fix needs --out DIR (the fixed student's folder)\n");
        else if (ckpts.n > 0) fprintf(stderr, "graft halflife: --fix and --ckpt do not go together (a fix changes the student's folder, not a checkpoint)\n");
        else if (eval_windows < 1) fprintf(stderr, "graft halflife: --eval-windows must be >= 1 with --fix, got %d\n", eval_windows);
        else fprintf(stderr, "graft halflife: --steps must be >= 0 with --fix, got %d\n", fix_steps);
        return 2;
    }
    if (!student_folder_detect(pos[0])) {
        fprintf(stderr, "graft halflife: %s is not a student folder (config.json with graft_student; make one with graft convert)\n",
                pos[0]);
        return 2;
    }
    /* before the claim: Ctrl-C (or SIGTERM) cancels the measurement or the fix at its next step, writes
     * no folder, lets --out's claim go and ends by the signal (main: cli_die_if_stopped), where the
     * default action left --out's lock file */
    cli_catch_stop_signals();
    if (fixes.n > 0 && cli_out_claim("--out", out_dir, OUT_STUDENT, 1) != 0) return cli_fail("halflife");
    char *calib = text ? NULL : calib_text_of(pos[0]);
    if (!text && !calib) {
        fprintf(stderr, "graft halflife: --text FILE is required (%s/report.json names no calibration text)\n", pos[0]);
        return 2;
    }
    if (!text) text = calib;
    char stats_path[4096];
    snprintf(stats_path, sizeof stats_path, "%s/report.json", pos[0]);
    if (stats) snprintf(stats_path, sizeof stats_path, "%s", stats);

    student s = {0};
    cli_student cs = {0};
    train_student *handle = NULL;
    const bool with_ckpt = ckpts.n > 0;
    const char *init_name;
    rc = 1;
    if (with_ckpt ? train_student_load(&cs, &handle, pos[0], co.tokenizer, q.ctx, &init_name) != 0
                  : cli_load_student("halflife", pos[0], &co, &s) != 0) {
        if (with_ckpt) cli_fail("halflife");
        free(calib);
        return 1;
    }
    transformer *tf = with_ckpt ? &cs.tm : &s.tf;
    const student_settings *set = with_ckpt ? train_student_settings(handle) : &s.set;
    const model *m = with_ckpt ? NULL : s.m;
    const tokenizer *tok = NULL;
    tokenizer *own_tok = NULL;
    const int L = tf->cfg.n_layers, H = tf->gcfg.H;
    double *all = malloc((size_t)L * H * sizeof *all), *no_sink = malloc((size_t)L * H * sizeof *all),
           *target = malloc((size_t)L * H * sizeof *all);
    int_vec ids = {0}, cut = {0};
    measured *runs = calloc((size_t)ckpts.n + 2, sizeof *runs);
    int n_runs = 0, n_seqs = 0;
    progress_sink pr = cli_progress();
    pr.cancel = cli_stop_flag();
    halflife_change *changes = calloc((size_t)fixes.n + 1, sizeof *changes);
    token_split sp = {0};
    halflife_fix_outcome fixed = {NAN, NAN, 0};
    char *fix_calib = NULL, *tok_src = NULL;
    if (m) {
        tok = m->tok;
    } else {
        /* the trainable copy has no tokenizer: the folder's (or --tokenizer) */
        char *tp = teacher_tokenizer_path(pos[0], tf->cfg.vocab_size, co.tokenizer);
        if (tp && tokenizer_load_path(&own_tok, tp, tf->cfg.vocab_size) == 0) tok = own_tok;
        free(tp);
    }
    const int found = halflife_teacher_read(stats_path, L, H, all, no_sink);
    if (found < 0) goto out;
    if (found == 0)
        fprintf(stderr, "graft halflife: %s has no teacher attention statistics; teacher distances are null (pass --stats)\n",
                stats_path);
    halflife_targets(set, all, no_sink, (size_t)L * H, target);
    const halflife_teacher teacher = {all, no_sink, target};
    if (fixes.n > 0) {
        student_settings ns = *set, as = *set;
        ns.distance = DECAY_DISTANCE_NO_SINK, ns.half_life = 0;
        as.distance = DECAY_DISTANCE_ALL, as.half_life = 0;
        double *to_ns = malloc((size_t)L * H * sizeof *to_ns), *to_all = malloc((size_t)L * H * sizeof *to_all);
        halflife_targets(&ns, all, no_sink, (size_t)L * H, to_ns);
        halflife_targets(&as, all, no_sink, (size_t)L * H, to_all);
        int bad = 0;
        for (int i = 0; i < fixes.n && !bad; i++) bad = parse_fix(fixes.items[i], H, to_all, to_ns, &changes[i]) != 0;
        free(to_ns);
        free(to_all);
        if (bad) goto out;
    }
    if (!tok) {
        gf_fail("%s has no tokenizer (pass --tokenizer PATH)", pos[0]);
        goto out;
    }
    if (text_file_tokens(tok, text, false, &ids) != 0 ||
        (cut_sequences(ids.data, ids.len, 0, tokenizer_bos(tok), q.ctx, q.seqs, &cut, &n_seqs) != 0 &&
         gf_fail_prefix(text)))
        goto out;
    runs[0].path = pos[0];
    if (halflife_measure(tf, cut.data, &q, &teacher, &pr, &runs[0].r) != 0) goto out;
    n_runs = 1;
    if (fixes.n > 0) {
        fix_calib = calib_opt ? strdup(calib_opt) : calib_text_of(pos[0]);
        if (!fix_calib) {
            gf_fail("%s/report.json names no calibration text (pass --calib FILE)", pos[0]);
            goto out;
        }
        if (fix_steps >= 0) s.set.steps = fix_steps;
        for (int i = 0; i < fixes.n; i++) {
            if (changes[i].rate_scale >= 0) continue;
            const halflife_head *hd = NULL;
            for (int k = 0; k < runs[0].r.n_heads; k++)
                if (runs[0].r.heads[k].layer == changes[i].layer && runs[0].r.heads[k].head == changes[i].head)
                    hd = &runs[0].r.heads[k];
            if (!hd || !(hd->target > 0) || !(hd->p50 > 0) || !isfinite(hd->p50)) {
                gf_fail("--fix %s: needs a GDN head with a teacher distance and a finite median", fixes.items[i]);
                goto out;
            }
            changes[i].rate_scale = hd->p50 / hd->target;
        }
        split_spec spec;
        split_spec_default(&spec);
        spec.eval_windows = eval_windows;
        if (token_split_make(&sp, tok, fix_calib, fix_calib, &spec) != 0 ||
            halflife_fix_run(&s, changes, fixes.n, &sp, spec.ctx, &pr, &fixed) != 0)
            goto out;
        runs[1].path = out_dir;
        if (halflife_measure(tf, cut.data, &q, &teacher, &pr, &runs[1].r) != 0) goto out;
        n_runs = 2;
        if (progress_cancelled(&pr)) { /* after the fix's last look: still nothing written */
            gf_fail("cancelled");
            goto out;
        }
        cJSON *rep = student_report_json(&s), *old = report_of(pos[0]);
        const cJSON *ts = cJSON_GetObjectItem(old, "teacher_attention_stats");
        if (ts) cJSON_AddItemToObject(rep, "teacher_attention_stats", cJSON_Duplicate(ts, 1));
        cJSON_Delete(old);
        tok_src = teacher_tokenizer_path(pos[0], tf->cfg.vocab_size, co.tokenizer);
        const int saved = student_save(&s, out_dir, tok_src, rep);
        cJSON_Delete(rep);
        if (saved != 0) goto out;
    }
    for (int i = 0; i < ckpts.n; i++) {
        long step, tokens;
        if (method_checkpoint_load(ckpts.items[i], tf, &step, &tokens) != 0) goto out;
        runs[n_runs].path = ckpts.items[i];
        runs[n_runs].step = step;
        runs[n_runs].tokens = tokens;
        if (halflife_measure(tf, cut.data, &q, &teacher, &pr, &runs[n_runs].r) != 0) goto out;
        n_runs++;
    }
    const measured *last = &runs[n_runs - 1];
    if (co.json) {
        cJSON *o = halflife_result_json(&last->r, &q.th, pos[0], text);
        cJSON_AddStringToObject(o, "source", last->path);
        cJSON_AddStringToObject(o, "init", student_init_name(set->init));
        cJSON_AddStringToObject(o, "decay_distance", decay_distance_name(set->distance));
        if (set->half_life > 0) cJSON_AddNumberToObject(o, "half_life_override", set->half_life);
        cJSON_AddBoolToObject(o, "teacher_stats", found == 1);
        if (ckpts.n > 0) cJSON_AddItemToObject(o, "drift", drift_json(runs, n_runs));
        if (fixes.n > 0) {
            cJSON *f = cJSON_AddObjectToObject(o, "fix");
            cJSON_AddStringToObject(f, "out", out_dir);
            cJSON *ch = cJSON_AddArrayToObject(f, "changes");
            for (int i = 0; i < fixes.n; i++) {
                cJSON *e = cJSON_CreateObject();
                cJSON_AddNumberToObject(e, "layer", changes[i].layer);
                cJSON_AddNumberToObject(e, "head", changes[i].head);
                cJSON_AddNumberToObject(e, "half_life", changes[i].half_life);
                if (changes[i].rate_scale > 0) cJSON_AddNumberToObject(e, "rate_scale", changes[i].rate_scale);
                cJSON_AddItemToArray(ch, e);
            }
            cJSON_AddNumberToObject(f, "stage2_steps", set->steps);
            cJSON_AddStringToObject(f, "calib", fix_calib);
            cJSON_AddNumberToObject(f, "eval_tokens", (double)fixed.n_eval);
            cJSON_AddNumberToObject(f, "ppl_before", fixed.ppl_before);
            cJSON_AddNumberToObject(f, "ppl_after", fixed.ppl_after);
            cJSON *b = halflife_result_json(&runs[0].r, &q.th, pos[0], text);
            cJSON_AddItemToObject(f, "before", cJSON_DetachItemFromObject(b, "heads"));
            cJSON_Delete(b);
        }
        cli_print_json(o);
    } else {
        if (fixes.n > 0) {
            printf("before the fix:\n");
            print_text(&runs[0].r, pos[0], text);
            printf("\nafter the fix (Stage 2 of the fixed layers, %d steps), written to %s:\n", set->steps, out_dir);
        }
        print_text(&last->r, last->path, text);
        if (ckpts.n > 0) print_drift(runs, n_runs);
        if (fixes.n > 0)
            printf("\nperplexity on %ld tokens of %s's evaluation slice: %.4f before, %.4f after\n", fixed.n_eval, fix_calib,
                   fixed.ppl_before, fixed.ppl_after);
    }
    rc = 0;
out:
    if (rc) cli_fail("halflife");
    for (int i = 0; i < n_runs; i++) halflife_result_free(&runs[i].r);
    free(runs);
    int_vec_free(&ids);
    int_vec_free(&cut);
    free(all);
    free(no_sink);
    free(target);
    if (own_tok) tokenizer_free(own_tok);
    if (with_ckpt) {
        cli_student_free(&cs);
        train_student_close(handle);
    } else {
        student_free(&s);
    }
    free(calib);
    free(changes);
    free(fix_calib);
    free(tok_src);
    token_split_free(&sp);
    return rc;
}
