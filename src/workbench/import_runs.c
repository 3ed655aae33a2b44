#include "workbench/import_runs.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "student/student.h"
#include "method/race_run.h"
#include "workbench/json_file.h"

const char *import_kind_name(import_kind k) {
    return k == IMPORT_ABLATE ? "ablate" : k == IMPORT_RACE ? "race" : k == IMPORT_STATS ? "stats" : "halflife";
}

/* ---- reading: every field checked, errors name the file and the field ---- */

static const char *base_name(const char *p) {
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') n--; /* a model folder "…/SmolLM2/" is called SmolLM2 */
    const char *b = p;
    for (size_t i = 0; i + 1 < n; i++)
        if (p[i] == '/' || p[i] == ':') b = p + i + 1;
    return b;
}

/* base_name's text up to any trailing slash, into buf */
static void base_copy(const char *p, char *buf, size_t n) {
    const char *b = base_name(p);
    size_t len = strcspn(b, "/");
    snprintf(buf, n, "%.*s", (int)len, b);
}

typedef struct {
    const char *file;  /* as the user named it */
    char where[96];    /* the object being read: "rows[3]", "meta", "" (the top) */
} reader;

static int bad(const reader *rd, const char *key, const char *what) {
    return gf_fail("%s: %s%s%s %s", rd->file, rd->where, rd->where[0] ? "." : "", key, what);
}

/* A number (required: absent or null refused unless allow_null, which gives NaN). */
static int get_number(const reader *rd, const cJSON *o, const char *key, bool required, bool allow_null, double *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NAN;
    if (!v) return required ? bad(rd, key, "is missing (a number)") : 0;
    if (cJSON_IsNull(v)) return allow_null ? 0 : bad(rd, key, "should be a number, not null");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return bad(rd, key, "should be a number");
    *out = v->valuedouble;
    return 0;
}

/* v (NaN: absent) within [lo, hi]: counts and sizes go into ints and longs */
static int in_range(const reader *rd, const char *key, double v, double lo, double hi) {
    if (isnan(v) || (v >= lo && v <= hi)) return 0;
    char what[96];
    snprintf(what, sizeof what, "should be between %g and %g", lo, hi);
    return bad(rd, key, what);
}

/* A string; "" when absent and not required. */
static int get_string(const reader *rd, const cJSON *o, const char *key, bool required, char *dst, size_t n) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    dst[0] = 0;
    if (!v || cJSON_IsNull(v)) return required ? bad(rd, key, "is missing (a string)") : 0;
    if (!cJSON_IsString(v)) return bad(rd, key, "should be a string");
    snprintf(dst, n, "%s", v->valuestring);
    return 0;
}

/* ["decay", "beta", ...] -> STAGE1_* bits */
static int get_parts(const reader *rd, const cJSON *o, const char *key, unsigned *parts, bool *given) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key), *c;
    *given = a && !cJSON_IsNull(a);
    *parts = STAGE1_ALL;
    if (!*given) return 0;
    if (!cJSON_IsArray(a)) return bad(rd, key, "should be a list of Stage 1 components (decay, beta, sigma, gate)");
    char text[64] = "";
    cJSON_ArrayForEach(c, a) {
        if (!cJSON_IsString(c)) return bad(rd, key, "should hold component names (decay, beta, sigma, gate)");
        size_t at = strlen(text);
        snprintf(text + at, sizeof text - at, "%s%s", at ? "," : "", c->valuestring);
    }
    if (!text[0]) {
        *parts = STAGE1_NONE;
        return 0;
    }
    if (stage1_parts_parse(text, parts) != 0) return bad(rd, key, "names an unknown Stage 1 component (decay, beta, sigma, gate)");
    return 0;
}

/* "sigma_fit": reference, scaled or gated (null: sigma was not fitted; absent: *given false) */
static int get_sigma_fit(const reader *rd, const cJSON *o, sigma_fit_mode *fit, bool *given) {
    char s[32];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "sigma_fit");
    *given = v != NULL;
    *fit = SIGMA_FIT_REFERENCE;
    if (get_string(rd, o, "sigma_fit", false, s, sizeof s)) return -1;
    if (!s[0]) return 0;
    if (sigma_fit_parse(s, fit) != 0) {
        gf_clear_error();
        return bad(rd, "sigma_fit", "should be \"reference\", \"scaled\" or \"gated\"");
    }
    return 0;
}

/* The row's init and its Stage 1 options: has_stage1, stage1, init_detail ("stage1 decay,beta,gate, sigma gated"). */
static void set_variant(result_row *r, student_init init, unsigned parts, bool no_sink, double half_life, sigma_fit_mode fit) {
    snprintf(r->init, sizeof r->init, "%s", student_init_name(init));
    if (!init_uses_stage1(init)) return;
    stage1_choice c;
    stage1_choice_default(&c);
    c.parts = parts;
    c.no_sink = no_sink && (parts & STAGE1_DECAY);
    c.half_life = half_life > 0 && (parts & STAGE1_DECAY) ? half_life : 0;
    c.sigma_fit = parts & STAGE1_SIGMA ? fit : SIGMA_FIT_REFERENCE;
    result_set_stage1(r, &c);
}

static int parse_init(const reader *rd, const char *name, const char *key, student_init *out) {
    if (student_init_parse(name, out) != 0) {
        gf_clear_error();
        return bad(rd, key, "is not one of the six initializations (random, zero-gate, small-gate, taylor-only, "
                            "align-only, taylor-calibrate)");
    }
    return 0;
}

/* What a file holds, checked whole before anything of st changes. */
typedef struct {
    import_kind kind;
    char model[1024];
    result_row *rows;
    int n_rows;
    int max_layer;                 /* the largest layer index a row names, -1 none */
    double teacher_ppl;            /* ablate: the teacher on the evaluation slice; race: on its held-out sequences */
    char ppl_corpus[256];
    int ppl_windows, ppl_ctx;
    /* race */
    char curve_name[8][96];
    double *curve[8];              /* [2 * n]: tokens, loss */
    int curve_n[8], n_curves;
    char converted[512];           /* the baseline's converted layers ("" unknown) */
    double target;
    long tokens;
    int eval_seqs, eval_ctx;       /* the held-out sequences the runs and the teacher were scored on (0: not said) */
    char reached[200];
    /* stats */
    int L, H;
    double *metric[6];             /* [L * H]: MET_MEAN_DIST .. MET_SINK */
    /* halflife: one entry per GDN head */
    char hl_init[48];
    char hl_student[512];          /* the student folder it measured */
    bool shape_from_convert;       /* L x H came from the student's convert JSON: the teacher had none */
    int n_hl, *hl_layer, *hl_head;
    double *hl_idle, *hl_p50;
} parsed;

static void parsed_free(parsed *p) {
    free(p->rows);
    for (int i = 0; i < p->n_curves; i++) free(p->curve[i]);
    for (int m = 0; m < 6; m++) free(p->metric[m]);
    free(p->hl_layer), free(p->hl_head), free(p->hl_idle), free(p->hl_p50);
    memset(p, 0, sizeof *p);
}

static result_row *new_row(parsed *p) {
    p->rows = gf_realloc(p->rows, (size_t)(p->n_rows + 1) * sizeof *p->rows);
    result_row *r = &p->rows[p->n_rows++];
    result_row_init(r);
    r->source_row = p->n_rows;
    return r;
}

static void device_of(const cJSON *root, char *dst, size_t n) {
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(root, "memory");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(mem, "device");
    dst[0] = 0;
    if (cJSON_IsString(d)) snprintf(dst, n, "%.*s", (int)strcspn(d->valuestring, " "), d->valuestring);
}

static int parse_ablate(const char *file, const cJSON *root, parsed *p) {
    reader rd = {file, ""};
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "meta");
    if (!cJSON_IsObject(meta)) return bad(&rd, "meta", "is missing (an object naming the teacher and the run's settings)");
    double ppl, steps, ctx = NAN, eb = NAN, ee = NAN, seed;
    char keep_best[32], distance[32], eval_text[256], device[16];
    if (get_number(&rd, root, "teacher_ppl", false, true, &ppl)) return -1;
    snprintf(rd.where, sizeof rd.where, "meta");
    if (get_string(&rd, meta, "model", true, p->model, sizeof p->model) ||
        get_number(&rd, meta, "stage2_steps", false, true, &steps) ||
        get_string(&rd, meta, "keep_best", false, keep_best, sizeof keep_best) ||
        get_string(&rd, meta, "decay_distance", false, distance, sizeof distance) ||
        get_string(&rd, meta, "eval", false, eval_text, sizeof eval_text) || get_number(&rd, meta, "seed", false, true, &seed) ||
        in_range(&rd, "stage2_steps", steps, 0, 1e9) || in_range(&rd, "seed", seed, 0, 9e18))
        return -1;
    if (!p->model[0]) return bad(&rd, "model", "is empty (it names the teacher)");
    const bool sigma_recorded = cJSON_GetObjectItemCaseSensitive(meta, "sigma_fits") != NULL;
    const cJSON *split = cJSON_GetObjectItemCaseSensitive(meta, "split");
    if (split) {
        snprintf(rd.where, sizeof rd.where, "meta.split");
        if (!cJSON_IsObject(split)) return bad(&rd, "", "should be an object");
        if (get_number(&rd, split, "ctx", false, true, &ctx) || get_number(&rd, split, "eval_begin", false, true, &eb) ||
            get_number(&rd, split, "eval_end", false, true, &ee) || in_range(&rd, "ctx", ctx, 1, 1e7) ||
            in_range(&rd, "eval_begin", eb, 0, 1e15) || in_range(&rd, "eval_end", ee, 0, 1e15))
            return -1;
    }
    if (keep_best[0] && strcmp(keep_best, "train") && strcmp(keep_best, "heldout")) {
        snprintf(rd.where, sizeof rd.where, "meta");
        return bad(&rd, "keep_best", "should be \"train\" or \"heldout\"");
    }
    /* the evaluation slice: windows of ctx tokens (each ctx or ctx - 1 long with a BOS), rounded up */
    const double w = ctx > 1 && ee > eb ? ceil((ee - eb) / ctx) : 0;
    snprintf(rd.where, sizeof rd.where, "meta.split");
    if (in_range(&rd, "eval_end", w, 0, 1e9)) return -1; /* (eval_end - eval_begin) / ctx windows */
    const int windows = (int)w;
    device_of(root, device, sizeof device);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "rows"), *o;
    rd.where[0] = 0;
    if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) == 0) return bad(&rd, "rows", "should be a non-empty list");
    int i = 0;
    cJSON_ArrayForEach(o, rows) {
        snprintf(rd.where, sizeof rd.where, "rows[%d]", i++);
        if (!cJSON_IsObject(o)) return bad(&rd, "", "should be an object");
        result_row *r = new_row(p);
        r->kind = RUN_ABLATE;
        char init_name[32];
        double keep, hl_override, rppl;
        unsigned parts;
        bool parts_given, fit_given;
        sigma_fit_mode fit;
        if (get_string(&rd, o, "strategy", true, r->strategy, sizeof r->strategy) ||
            get_number(&rd, o, "keep", true, false, &keep) || get_string(&rd, o, "init", true, init_name, sizeof init_name) ||
            get_parts(&rd, o, "stage1", &parts, &parts_given) ||
            get_number(&rd, o, "half_life_override", false, true, &hl_override) || get_sigma_fit(&rd, o, &fit, &fit_given) ||
            get_number(&rd, o, "ppl", true, true, &rppl))
            return -1;
        if (!(keep > 0 && keep <= 1)) return bad(&rd, "keep", "should be a fraction in (0, 1]");
        student_init init;
        if (parse_init(&rd, init_name, "init", &init)) return -1;
        const cJSON *kl = cJSON_GetObjectItemCaseSensitive(o, "kept_layers"), *c;
        if (!cJSON_IsArray(kl)) return bad(&rd, "kept_layers", "should be a list of layer numbers");
        int at = 0;
        cJSON_ArrayForEach(c, kl) {
            if (!cJSON_IsNumber(c) || c->valuedouble < 0 || c->valuedouble > 65535 || c->valuedouble != (int)c->valuedouble)
                return bad(&rd, "kept_layers", "should hold layer numbers (0, 1, ...)");
            if ((int)c->valuedouble > p->max_layer) p->max_layer = (int)c->valuedouble;
            if (at < (int)sizeof r->kept - 8) at += snprintf(r->kept + at, sizeof r->kept - (size_t)at, at ? ",%d" : "%d", (int)c->valuedouble);
        }
        const cJSON *hl = cJSON_GetObjectItemCaseSensitive(o, "half_life");
        if (hl && !cJSON_IsNull(hl)) {
            char w[96];
            snprintf(w, sizeof w, "%s", rd.where);
            snprintf(rd.where, sizeof rd.where, "%.80s.half_life", w);
            if (!cJSON_IsObject(hl)) return bad(&rd, "", "should be an object (mean, median, max)");
            if (get_number(&rd, hl, "mean", false, true, &r->hl_mean) || get_number(&rd, hl, "median", false, true, &r->hl_med) ||
                get_number(&rd, hl, "max", false, true, &r->hl_max))
                return -1;
        }
        /* before --sigma-fit, graft fitted sigma with the query scale: "scaled" (as student folders read it) */
        set_variant(r, init, parts, !strcmp(distance, "no-sink"), hl_override,
                    fit_given || sigma_recorded ? fit : SIGMA_FIT_SCALED);
        r->keep = keep;
        r->ppl = rppl;
        r->stage2_steps = init_uses_stage2(init) && steps > 0 ? (int)steps : 0;
        r->keep_best_heldout = !strcmp(keep_best, "heldout");
        snprintf(r->corpus, sizeof r->corpus, "%.199s", eval_text[0] ? eval_text : IMPORT_TEXT_NOT_RECORDED);
        r->teacher_ppl = ppl; /* the teacher on the same slice: what names a slice whose text is not recorded */
        r->eval_windows = windows;
        r->ctx = isnan(ctx) ? 0 : (int)ctx;
        r->seed = seed >= 0 ? (long)seed : -1;
        snprintf(r->device, sizeof r->device, "%s", device);
    }
    p->teacher_ppl = ppl;
    snprintf(p->ppl_corpus, sizeof p->ppl_corpus, "%s", eval_text[0] ? eval_text : IMPORT_TEXT_NOT_RECORDED);
    p->ppl_windows = windows;
    p->ppl_ctx = isnan(ctx) ? 0 : (int)ctx;
    return 0;
}

/* "taylor-calibrate[decay,beta,gate,no-sink,sigma gated]" -> its init and Stage 1 options */
static int race_label(const reader *rd, const char *label, result_row *r, const cJSON *run, bool new_graft) {
    char base[64];
    snprintf(base, sizeof base, "%.*s", (int)strcspn(label, "["), label);
    student_init init;
    if (parse_init(rd, base, "init", &init)) return -1;
    unsigned parts = STAGE1_ALL;
    bool no_sink = false, label_fit = false, parts_given, fit_given;
    sigma_fit_mode fit = SIGMA_FIT_REFERENCE;
    double hl = 0;
    const char *br = strchr(label, '[');
    if (br) { /* the label's own list, then its extras */
        char in[96];
        snprintf(in, sizeof in, "%.*s", (int)strcspn(br + 1, "]"), br + 1);
        char part_text[64] = "";
        for (char *tok = strtok(in, ","); tok; tok = strtok(NULL, ",")) {
            if (!strcmp(tok, "no-sink")) no_sink = true;
            else if (!strncmp(tok, "sigma ", 6) && sigma_fit_parse(tok + 6, &fit) == 0) label_fit = true;
            else if (!strncmp(tok, "half-life ", 10)) hl = atof(tok + 10);
            else {
                size_t at = strlen(part_text);
                snprintf(part_text + at, sizeof part_text - at, "%s%s", at ? "," : "", tok);
            }
        }
        if (part_text[0] && stage1_parts_parse(part_text, &parts) != 0) {
            gf_clear_error();
            return bad(rd, "init", "names an unknown Stage 1 component in its [...] (decay, beta, sigma, gate)");
        }
    }
    unsigned listed;
    if (get_parts(rd, run, "stage1", &listed, &parts_given)) return -1;
    if (parts_given && init_uses_stage1(init)) parts = listed;
    sigma_fit_mode listed_fit;
    if (get_sigma_fit(rd, run, &listed_fit, &fit_given)) return -1;
    if (fit_given) fit = listed_fit;
    else if (!new_graft && !label_fit) fit = SIGMA_FIT_SCALED; /* before --sigma-fit: the scaled fit */
    set_variant(r, init, parts, no_sink, hl, fit);
    return 0;
}

/* a run's tokens to target as the Recover line says it: "4997120" or "never" */
static void tokens_text(char *t, size_t n, double tokens) {
    if (tokens >= 0) snprintf(t, n, "%.0f", tokens);
    else snprintf(t, n, "never");
}

static int parse_race(const char *file, const cJSON *root, parsed *p) {
    reader rd = {file, ""};
    double target, budget, ratio, lr_mixer, lr_rest, ctx, keep, teacher_ppl, eval_seqs;
    char data[256], strategy[16], device[16];
    if (get_string(&rd, root, "model", false, p->model, sizeof p->model) ||
        get_number(&rd, root, "target_loss", true, false, &target) ||
        get_number(&rd, root, "tokens_budget", true, false, &budget) || get_number(&rd, root, "ratio", false, true, &ratio) ||
        get_number(&rd, root, "lr_mixer", false, true, &lr_mixer) || get_number(&rd, root, "lr_rest", false, true, &lr_rest) ||
        get_number(&rd, root, "ctx", false, true, &ctx) || get_number(&rd, root, "keep", false, true, &keep) ||
        get_number(&rd, root, "teacher_eval_ppl", false, true, &teacher_ppl) ||
        get_number(&rd, root, "eval_seqs", false, true, &eval_seqs) || in_range(&rd, "eval_seqs", eval_seqs, 0, 1e9) ||
        get_string(&rd, root, "data", false, data, sizeof data) || get_string(&rd, root, "strategy", false, strategy, sizeof strategy) ||
        get_string(&rd, root, "converted_layers", false, p->converted, sizeof p->converted) ||
        in_range(&rd, "tokens_budget", budget, 0, 1e15) || in_range(&rd, "ctx", ctx, 1, 1e7) ||
        in_range(&rd, "keep", keep, 1e-9, 1))
        return -1;
    (void)ratio;
    const cJSON *t2t = cJSON_GetObjectItemCaseSensitive(root, "tokens_to_target");
    if (!cJSON_IsObject(t2t)) return bad(&rd, "tokens_to_target", "is missing (an object: init -> tokens or null)");
    device_of(root, device, sizeof device);
    const bool new_graft = cJSON_GetObjectItemCaseSensitive(root, "teacher_eval_ppl") != NULL; /* since --sigma-fit */
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(root, "runs"), *o;
    if (!cJSON_IsArray(runs) || cJSON_GetArraySize(runs) < 2) return bad(&rd, "runs", "should be a list of at least two runs");
    if (cJSON_GetArraySize(runs) > 8) return bad(&rd, "runs", "holds more than 8 runs (the Recover chart's limit)");
    int i = 0;
    cJSON_ArrayForEach(o, runs) {
        snprintf(rd.where, sizeof rd.where, "runs[%d]", i);
        if (!cJSON_IsObject(o)) return bad(&rd, "", "should be an object");
        result_row *r = new_row(p);
        r->kind = RUN_RACE;
        char label[96];
        if (get_string(&rd, o, "init", true, label, sizeof label) || race_label(&rd, label, r, o, new_graft) ||
            get_number(&rd, o, "final_eval_ppl", false, true, &r->ppl))
            return -1;
        const cJSON *curve = cJSON_GetObjectItemCaseSensitive(o, "curve"), *pt;
        if (!cJSON_IsArray(curve)) return bad(&rd, "curve", "should be a list of [tokens, loss] pairs");
        int n = cJSON_GetArraySize(curve), k = 0;
        double *xy = gf_malloc((size_t)(n ? 2 * n : 2) * sizeof *xy);
        p->curve[p->n_curves] = xy;
        snprintf(p->curve_name[p->n_curves], sizeof p->curve_name[0], "race/%.90s", label);
        p->curve_n[p->n_curves++] = n;
        cJSON_ArrayForEach(pt, curve) {
            const cJSON *x = cJSON_GetArrayItem(pt, 0), *y = cJSON_GetArrayItem(pt, 1);
            if (!cJSON_IsArray(pt) || cJSON_GetArraySize(pt) != 2 || !cJSON_IsNumber(x) || !cJSON_IsNumber(y) ||
                !isfinite(x->valuedouble) || !isfinite(y->valuedouble)) {
                char key[48];
                snprintf(key, sizeof key, "curve[%d]", k);
                return bad(&rd, key, "should be a pair of numbers [tokens, loss]");
            }
            xy[2 * k] = x->valuedouble, xy[2 * k + 1] = y->valuedouble;
            k++;
        }
        const cJSON *tt = cJSON_GetObjectItemCaseSensitive(t2t, label);
        if (!tt || !(cJSON_IsNull(tt) || cJSON_IsNumber(tt))) {
            rd.where[0] = 0;
            char key[160];
            snprintf(key, sizeof key, "tokens_to_target[\"%.100s\"]", label);
            return bad(&rd, key, "should be a number of tokens or null (each run's init has one)");
        }
        r->tokens_to_target = cJSON_IsNumber(tt) ? tt->valuedouble : -1; /* the file's; scored again below */
        snprintf(r->strategy, sizeof r->strategy, "%s", strategy[0] ? strategy : "folder");
        r->keep = keep;
        snprintf(r->corpus, sizeof r->corpus, "%.199s", data[0] ? data : IMPORT_TEXT_NOT_RECORDED);
        r->ctx = isnan(ctx) ? 0 : (int)ctx;
        r->race_tokens = (long)budget;
        r->race_lr_mixer = lr_mixer;
        r->race_lr_rest = lr_rest;
        r->teacher_ppl = teacher_ppl; /* on the same held-out sequences (NaN: a graft before it said) */
        snprintf(r->device, sizeof r->device, "%s", device);
        i++;
    }
    if (strategy[0]) { /* a race that built its students: every row repeats its --inits and its Stage 1 options,
                          * one set for the whole race (a race of folders has neither) */
        char inits[sizeof p->rows[0].race_inits] = "";
        const result_row *s1 = NULL;
        for (int k = 0; k < i; k++) {
            size_t at = strlen(inits);
            snprintf(inits + at, sizeof inits - at, "%s%s", k ? "," : "", p->rows[k].init);
            if (!s1 && p->rows[k].has_stage1) s1 = &p->rows[k];
        }
        for (int k = 0; k < i; k++) {
            result_row *r = &p->rows[k];
            snprintf(r->race_inits, sizeof r->race_inits, "%s", inits);
            if (s1 && !r->has_stage1) r->has_stage1 = true, r->stage1 = s1->stage1; /* the command only: no init detail */
        }
    }
    /* tokens to target by graft's rule now (race_score), from the curves: a file written before that
     * rule counted full windows only keeps its own numbers in the JSON, and the line says so */
    double t_now, ttt_now[8];
    int w_now;
    curve cs[8];
    for (int k = 0; k < i; k++) {
        const int c = p->n_curves - i + k;
        cs[k] = (curve){.xy = p->curve[c], .n = p->curve_n[c], .cap = p->curve_n[c]};
    }
    char said[120] = "", t[40];
    const bool scored = cs[0].n > 0 && race_score(cs, i, &t_now, ttt_now, &w_now) == 0;
    for (int k = 0; k < i; k++) {
        result_row *r = &p->rows[k];
        if (scored && ttt_now[k] != r->tokens_to_target) {
            size_t at = strlen(said);
            tokens_text(t, sizeof t, r->tokens_to_target);
            snprintf(said + at, sizeof said - at, "%s%s", at ? ", " : "", t);
            r->tokens_to_target = ttt_now[k];
        }
        if (k) r->ratio = p->rows[0].tokens_to_target > 0 && r->tokens_to_target > 0
                              ? p->rows[0].tokens_to_target / r->tokens_to_target
                              : NAN;
    }
    if (said[0]) snprintf(p->reached, sizeof p->reached, "target reached (recomputed from the curves; the file said %s):", said);
    else snprintf(p->reached, sizeof p->reached, "target reached:");
    for (int k = 0; k < i; k++) {
        tokens_text(t, sizeof t, p->rows[k].tokens_to_target);
        size_t at = strlen(p->reached);
        snprintf(p->reached + at, sizeof p->reached - at, "%s %s %s", k ? "," : "",
                 p->curve_name[p->n_curves - i + k] + strlen("race/"), t);
    }
    if (p->rows[1].ratio > 0) {
        size_t at = strlen(p->reached);
        snprintf(p->reached + at, sizeof p->reached - at, " -> ratio %.2f", p->rows[1].ratio);
    }
    p->target = target;
    p->tokens = (long)budget;
    p->teacher_ppl = teacher_ppl;
    p->eval_seqs = isnan(eval_seqs) || isnan(teacher_ppl) ? 0 : (int)eval_seqs;
    p->eval_ctx = isnan(ctx) ? 0 : (int)ctx;
    p->max_layer = -1;
    for (const char *s = p->converted; *s;) { /* "1,3,5" */
        char *end;
        long l = strtol(s, &end, 10);
        if (end == s) break;
        if (l > p->max_layer) p->max_layer = (int)l;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static const char *const stat_keys[6] = {"mean_distance", "entropy", "concentration", "output_rms",
                                         "mean_distance_no_sink", "sink_share"};

static int parse_stats(const char *file, const cJSON *root, parsed *p) {
    reader rd = {file, ""};
    if (get_string(&rd, root, "model", false, p->model, sizeof p->model)) return -1;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers"), *lo;
    int L = cJSON_GetArraySize(layers);
    if (!cJSON_IsArray(layers) || L == 0 || L > 4096) return bad(&rd, "layers", "should be a list of 1 to 4096 layers");
    const cJSON *h0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(layers, 0), "heads");
    int H = cJSON_GetArraySize(h0);
    if (!cJSON_IsArray(h0) || H == 0 || H > 4096) {
        snprintf(rd.where, sizeof rd.where, "layers[0]");
        return bad(&rd, "heads", "should be a list of 1 to 4096 heads");
    }
    if ((long)L * H > 1L << 20) return bad(&rd, "layers", "should hold at most 2^20 heads in all");
    p->L = L, p->H = H;
    for (int m = 0; m < 6; m++) {
        p->metric[m] = gf_malloc((size_t)L * H * sizeof *p->metric[m]);
        for (int k = 0; k < L * H; k++) p->metric[m][k] = NAN;
    }
    int l = 0;
    cJSON_ArrayForEach(lo, layers) {
        const cJSON *heads = cJSON_GetObjectItemCaseSensitive(lo, "heads"), *ho;
        snprintf(rd.where, sizeof rd.where, "layers[%d]", l);
        if (!cJSON_IsArray(heads) || cJSON_GetArraySize(heads) != H) {
            char what[64];
            snprintf(what, sizeof what, "should be a list of %d heads (as layers[0])", H);
            return bad(&rd, "heads", what);
        }
        int h = 0;
        cJSON_ArrayForEach(ho, heads) {
            snprintf(rd.where, sizeof rd.where, "layers[%d].heads[%d]", l, h);
            for (int m = 0; m < 6; m++) { /* the last two are newer: absent in older files */
                double v;
                if (get_number(&rd, ho, stat_keys[m], m < 4, true, &v)) return -1;
                p->metric[m][l * H + h] = v;
            }
            h++;
        }
        l++;
    }
    return 0;
}

/* graft halflife --json: each GDN head's idle half-life and its median over the text (p50) */
static int parse_halflife(const char *file, const cJSON *root, parsed *p) {
    reader rd = {file, ""};
    char init_name[32], distance[32];
    double override;
    if (get_string(&rd, root, "model", false, p->model, sizeof p->model) ||
        get_string(&rd, root, "init", true, init_name, sizeof init_name) ||
        get_string(&rd, root, "decay_distance", false, distance, sizeof distance) ||
        get_number(&rd, root, "half_life_override", false, true, &override))
        return -1;
    student_init init;
    if (parse_init(&rd, init_name, "init", &init)) return -1;
    /* the Stats init it shows under: the init, and how its decay was set when not from the distance over all keys */
    if (override > 0) snprintf(p->hl_init, sizeof p->hl_init, "%s hl %g", init_name, override);
    else if (!strcmp(distance, "no-sink") && init_uses_stage1(init)) snprintf(p->hl_init, sizeof p->hl_init, "%s no-sink", init_name);
    else snprintf(p->hl_init, sizeof p->hl_init, "%s", init_name);
    /* two students of one init (taylor-calibrate and a Stage 1 subset) show apart: the folder names the other */
    if (get_string(&rd, root, "student", false, p->hl_student, sizeof p->hl_student)) return -1;
    char folder[256];
    base_copy(p->hl_student, folder, sizeof folder);
    if (folder[0] && !strcmp(p->hl_init, init_name) && !strstr(folder, init_name)) {
        char named[96];
        snprintf(named, sizeof named, "%s (%.60s)", init_name, folder);
        snprintf(p->hl_init, sizeof p->hl_init, "%.31s", named); /* the Stats init's name holds 31 */
    }
    const cJSON *heads = cJSON_GetObjectItemCaseSensitive(root, "heads"), *o;
    int n = cJSON_GetArraySize(heads);
    if (!cJSON_IsArray(heads) || n == 0) return bad(&rd, "heads", "should be a non-empty list of GDN heads");
    p->hl_layer = gf_malloc((size_t)n * sizeof *p->hl_layer);
    p->hl_head = gf_malloc((size_t)n * sizeof *p->hl_head);
    p->hl_idle = gf_malloc((size_t)n * sizeof *p->hl_idle);
    p->hl_p50 = gf_malloc((size_t)n * sizeof *p->hl_p50);
    cJSON_ArrayForEach(o, heads) {
        int i = p->n_hl;
        snprintf(rd.where, sizeof rd.where, "heads[%d]", i);
        double l, h;
        if (!cJSON_IsObject(o)) return bad(&rd, "", "should be an object");
        if (get_number(&rd, o, "layer", true, false, &l) || get_number(&rd, o, "head", true, false, &h) ||
            get_number(&rd, o, "idle", false, true, &p->hl_idle[i]) || get_number(&rd, o, "p50", false, true, &p->hl_p50[i]))
            return -1;
        if (l < 0 || l > 65535 || l != (int)l) return bad(&rd, "layer", "should be a layer number (0, 1, ...)");
        if (h < 0 || h > 65535 || h != (int)h) return bad(&rd, "head", "should be a head number (0, 1, ...)");
        p->hl_layer[i] = (int)l, p->hl_head[i] = (int)h;
        if (p->hl_layer[i] > p->max_layer) p->max_layer = p->hl_layer[i];
        if (p->hl_head[i] + 1 > p->H) p->H = p->hl_head[i] + 1;
        p->n_hl++;
    }
    return 0;
}

/* Calls fn on each JSON file in path's folder that parses, until fn returns true. */
typedef bool (*json_visit)(const cJSON *root, void *ud);
static void each_json_beside(const char *path, json_visit fn, void *ud) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    struct dirent *de;
    bool done = false;
    while (d && !done && (de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json")) continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        bool missing;
        cJSON *root = json_read_file(p, &missing);
        if (!root) {
            gf_clear_error();
            continue;
        }
        done = fn(root, ud);
        cJSON_Delete(root);
    }
    if (d) closedir(d);
}

/* A race, stats or halflife file that names no teacher: the teacher the ablate
 * (meta.model) or convert (student.teacher) JSON beside it names, every one
 * there agreeing. */
typedef struct {
    char *model;
    size_t n;
    bool disagree;
} sibling_ud;

static bool sibling_visit(const cJSON *root, void *p) {
    sibling_ud *u = p;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "meta"), "model");
    if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "rows")))
        m = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "out"))
                ? cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "student"), "teacher")
                : NULL;
    if (cJSON_IsString(m) && m->valuestring[0]) {
        if (u->model[0] && strcmp(u->model, m->valuestring)) u->disagree = true; /* two teachers: no telling which */
        else snprintf(u->model, u->n, "%s", m->valuestring);
    }
    return false;
}

static int sibling_model(const char *path, char *model, size_t n) {
    sibling_ud u = {model, n, false};
    model[0] = 0;
    each_json_beside(path, sibling_visit, &u);
    return !u.disagree && model[0] ? 0 : -1;
}

/* The graft convert --json beside path whose "out" is student (NULL: any): its teacher
 * (student.teacher) and the teacher's shape (its GDN and attention layers, the GDN heads). */
typedef struct {
    const char *student;
    char *teacher;
    size_t n;
    int L, H;
} convert_ud;

static bool convert_visit(const cJSON *root, void *p) {
    convert_ud *u = p;
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(root, "out"), *s = cJSON_GetObjectItemCaseSensitive(root, "student");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(s, "teacher");
    const cJSON *heads = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "gdn"), "num_heads");
    const int g = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "gdn_layers"));
    const int a = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "attention_layers"));
    if (!cJSON_IsString(out) || (u->student && strcmp(out->valuestring, u->student)) || !cJSON_IsString(t) ||
        !cJSON_IsNumber(heads) || !(heads->valuedouble >= 1 && heads->valuedouble <= 4096) || g + a < 1 || g + a > 4096)
        return false;
    snprintf(u->teacher, u->n, "%s", t->valuestring);
    u->L = g + a, u->H = (int)heads->valuedouble;
    return true;
}

static bool convert_beside(const char *path, const char *student, char *teacher, size_t n, int *L, int *H) {
    convert_ud u = {student, teacher, n, 0, 0};
    each_json_beside(path, convert_visit, &u);
    *L = u.L, *H = u.H;
    return u.L > 0;
}

static int parse_file(const char *path, parsed *p) {
    memset(p, 0, sizeof *p);
    p->max_layer = -1;
    p->teacher_ppl = NAN;
    bool missing;
    cJSON *root = json_read_file(path, &missing);
    if (!root) return missing ? gf_fail("%s: no such file", path) : -1;
    int rc;
    reader rd = {path, ""};
    if (!cJSON_IsObject(root)) {
        rc = bad(&rd, "(the top)", "should be an object");
    } else if (cJSON_GetObjectItemCaseSensitive(root, "rows")) {
        p->kind = IMPORT_ABLATE;
        rc = parse_ablate(path, root, p);
    } else if (cJSON_GetObjectItemCaseSensitive(root, "runs")) {
        p->kind = IMPORT_RACE;
        rc = parse_race(path, root, p);
    } else if (cJSON_GetObjectItemCaseSensitive(root, "layers")) {
        p->kind = IMPORT_STATS;
        rc = parse_stats(path, root, p);
    } else if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "heads")) && cJSON_GetObjectItemCaseSensitive(root, "thresholds")) {
        p->kind = IMPORT_HALFLIFE;
        rc = parse_halflife(path, root, p);
    } else {
        rc = gf_fail("%s: not the JSON of graft ablate, race, stats or halflife (no \"rows\", \"runs\", \"layers\" or "
                     "\"heads\")", path);
    }
    cJSON_Delete(root);
    if (rc == 0 && !p->model[0] && sibling_model(path, p->model, sizeof p->model) != 0)
        rc = gf_fail("%s: \"model\" is missing (graft %s before it named its teacher), and no ablate JSON beside it "
                     "names one teacher (meta.model)", path, import_kind_name(p->kind));
    if (rc) parsed_free(p);
    return rc;
}

/* ---- the teacher: matched by path, then by file name; else an entry is made ---- */

static bool exists(const char *p) {
    struct stat sb;
    return p[0] && stat(p, &sb) == 0;
}

static bool same_name(const char *a, const char *b) {
    char x[256], y[256];
    base_copy(a, x, sizeof x);
    base_copy(b, y, sizeof y);
    return x[0] && !strcmp(x, y);
}

static teacher_state *match_teacher(const app_state *st, const char *model) {
    for (int i = 0; i < st->n_teachers; i++) /* the same argument or file */
        if (!strcmp(st->teachers[i]->arg, model) || !strcmp(st->teachers[i]->key, model)) return st->teachers[i];
    for (int i = 0; i < st->n_teachers; i++) {
        const teacher_state *t = st->teachers[i];
        if (same_name(t->key, model) || same_name(t->arg, model) || !strcmp(t->name, base_name(model)))
            return st->teachers[i];
    }
    return NULL;
}

/* The teacher's file on this machine: the path itself, a recent teacher of
 * that file name, or the teachers' cache (scripts/fetch-teachers.sh). */
static bool local_copy(const app_state *st, const char *model, char *out, size_t n) {
    if (exists(model)) {
        char *abs = realpath(model, NULL);
        snprintf(out, n, "%s", abs ? abs : model);
        free(abs);
        return true;
    }
    for (int i = 0; i < st->n_recent; i++) {
        const char *p = st->recent[i].path[0] ? st->recent[i].path : st->recent[i].arg;
        if (same_name(p, model) && exists(p)) {
            snprintf(out, n, "%s", p);
            return true;
        }
    }
    char name[256], dir[1024];
    base_copy(model, name, sizeof name);
    const char *env = getenv("GRAFT_TEACHERS"), *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && env[0]) snprintf(dir, sizeof dir, "%s", env);
    else if (cache && cache[0]) snprintf(dir, sizeof dir, "%s/graft/teachers", cache);
    else if (home && home[0]) snprintf(dir, sizeof dir, "%s/.cache/graft/teachers", home);
    else return false;
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    if (!exists(p)) return false;
    snprintf(out, n, "%.1023s", p);
    return true;
}

static teacher_state *make_teacher(app_state *st, const char *model, const char *local, const char *file) {
    const char *key = local[0] ? local : model;
    teacher_state *t = app_teacher(st, key);
    if (!t) return NULL;
    snprintf(t->arg, sizeof t->arg, "%.511s", key);
    snprintf(t->model_arg, sizeof t->model_arg, "%.1023s", key);
    base_copy(model, t->name, sizeof t->name);
    snprintf(t->shape, sizeof t->shape, "imported runs, not loaded");
    char l0[1100], l1[1100], l2[300];
    snprintf(l0, sizeof l0, "path        %.1023s", key);
    snprintf(l1, sizeof l1, "imported    runs of %.500s, first from %.500s", model, file);
    snprintf(l2, sizeof l2, "%s", local[0] ? "opening it (Enter on the recent list) loads it here"
                                           : "its file is not on this machine: the workbench shows its imported runs only");
    const char *lines[3] = {l0, l1, l2};
    teacher_state_set_lines(t, lines, 3);
    app_add_recent(st, key, local);
    return t;
}

/* ---- applying a checked file ---- */

/* Race curves of another race go: a new race (run or imported) replaces the last one's. */
static void drop_race_series(teacher_state *t) {
    int k = 0;
    for (int i = 0; i < t->n_series; i++) {
        if (!strncmp(t->series[i].name, "race/", 5)) {
            free(t->series[i].x);
            free(t->series[i].y);
            continue;
        }
        t->series[k++] = t->series[i];
    }
    t->n_series = k;
}

static int check_shape(const parsed *p, const teacher_state *t, const char *path) {
    if (p->kind == IMPORT_STATS && t->n_layers && (t->n_layers != p->L || (t->n_heads && t->n_heads != p->H)))
        return gf_fail("%s: %d layers x %d heads, but %s has %d x %d: not this teacher's statistics", path, p->L, p->H,
                       t->name, t->n_layers, t->n_heads);
    if (t->n_layers && p->max_layer >= t->n_layers)
        return gf_fail("%s: names layer %d, but %s has %d layers: not this teacher's runs", path, p->max_layer, t->name,
                       t->n_layers);
    return 0;
}

/* The rows an earlier import of the same file added: importing it again replaces them. */
static void drop_rows_of(teacher_state *t, const char *path) {
    int k = 0;
    for (int i = 0; i < t->n_results; i++)
        if (strcmp(t->results[i].source, path)) t->results[k++] = t->results[i];
    t->n_results = k;
}

static void apply(app_state *st, teacher_state *t, parsed *p, const char *path, import_report *rep) {
    char src[256];
    snprintf(src, sizeof src, "%.255s", path);
    drop_rows_of(t, src);
    for (int i = 0; i < p->n_rows; i++) {
        result_row *r = &p->rows[i];
        snprintf(r->teacher, sizeof r->teacher, "%s", t->name);
        snprintf(r->source, sizeof r->source, "%.255s", path);
        teacher_add_result(t, r);
    }
    rep->rows = p->n_rows;
    if (p->kind == IMPORT_ABLATE && !isfinite(t->teacher_ppl) && isfinite(p->teacher_ppl)) {
        t->teacher_ppl = p->teacher_ppl;
        snprintf(t->ppl_corpus, sizeof t->ppl_corpus, "%s", p->ppl_corpus);
        t->ppl_windows = p->ppl_windows;
        t->ppl_ctx = p->ppl_ctx;
    }
    if (p->kind == IMPORT_RACE) {
        drop_race_series(t);
        for (int c = 0; c < p->n_curves; c++)
            for (int k = 0; k < p->curve_n[c]; k++)
                teacher_add_point(t, p->curve_name[c], p->curve[c][2 * k], p->curve[c][2 * k + 1]);
        memset(&t->race, 0, sizeof t->race);
        t->race.tokens = p->tokens;
        t->race.has_target = true;
        t->race.target = p->target;
        snprintf(t->race.reached, sizeof t->race.reached, "%s", p->reached);
        snprintf(t->race.source, sizeof t->race.source, "%.255s", path);
        if (p->eval_seqs > 0) { /* the held-out perplexities beside the teacher's, as a race run here shows them */
            t->race.eval_seqs = p->eval_seqs, t->race.eval_ctx = p->eval_ctx;
            t->race.teacher_ppl = p->teacher_ppl;
            for (int i = 0; i < 2; i++) {
                t->race.ppl[i] = p->rows[i].ppl;
                snprintf(t->race.labels[i], sizeof t->race.labels[i], "%.31s", p->curve_name[i] + 5);
            }
        }
        rep->curves = p->n_curves;
    }
    if (p->kind == IMPORT_STATS) {
        if (!t->n_layers) {
            teacher_state_set_shape(t, p->L, p->H);
            teacher_plan_recompute(t);
            snprintf(t->shape, sizeof t->shape, "%d layers · %d heads (imported statistics)", p->L, p->H);
        }
        int init = teacher_init_index(t, "teacher");
        for (int m = 0; init >= 0 && m < 6; m++) {
            double *dst = teacher_metric(t, init, (head_metric)(MET_MEAN_DIST + m));
            if (dst) memcpy(dst, p->metric[m], (size_t)p->L * p->H * sizeof *dst);
        }
        snprintf(t->stats_source, sizeof t->stats_source, "%.255s", path);
        t->stats_corpus[0] = 0; /* not this session's corpus: a load here does not recompute over them */
        rep->layers = p->L, rep->heads = p->H;
    }
    if (p->kind == IMPORT_HALFLIFE) {
        if (p->shape_from_convert && !t->n_layers) {
            teacher_state_set_shape(t, p->L, p->H);
            teacher_plan_recompute(t);
            snprintf(t->shape, sizeof t->shape, "%d layers · %d heads (from a student's convert JSON)", p->L, p->H);
        }
        int init = teacher_init_index(t, p->hl_init);
        double *idle = teacher_metric(t, init, MET_HALFLIFE_IDLE), *med = teacher_metric(t, init, MET_HALFLIFE_DATA);
        const size_t cells = (size_t)t->n_layers * t->n_heads;
        for (size_t k = 0; idle && med && k < cells; k++) idle[k] = med[k] = NAN; /* kept layers have none */
        for (int i = 0; idle && med && i < p->n_hl; i++) {
            idle[p->hl_layer[i] * t->n_heads + p->hl_head[i]] = p->hl_idle[i];
            med[p->hl_layer[i] * t->n_heads + p->hl_head[i]] = p->hl_p50[i];
        }
        if (init < 0) app_log(st, LOG_WARN, "import: %s: no room for another initialization on 3 Stats", path);
        rep->heads = p->n_hl;
        snprintf(rep->init, sizeof rep->init, "%s", p->hl_init);
    }
    (void)st;
}

int import_run_file(app_state *st, const char *path, import_report *rep) {
    memset(rep, 0, sizeof *rep);
    char *abs = realpath(path, NULL);
    snprintf(rep->path, sizeof rep->path, "%s", abs ? abs : path);
    free(abs);
    parsed p;
    if (parse_file(path, &p) != 0) return -1;
    rep->kind = p.kind;
    snprintf(rep->model, sizeof rep->model, "%s", p.model);
    teacher_state *t = match_teacher(st, p.model);
    char local[1024] = "";
    if (p.kind == IMPORT_HALFLIFE) { /* heads sit in the teacher's layers x heads: known here, or from the student's convert JSON */
        int cl = 0, ch = 0;
        char ct[1024], name[256];
        const bool conv = convert_beside(path, p.hl_student, ct, sizeof ct, &cl, &ch);
        const int L = t && t->n_layers ? t->n_layers : cl, H = t && t->n_layers ? t->n_heads : ch;
        base_copy(p.model, name, sizeof name);
        if (!L || !H) {
            parsed_free(&p);
            return gf_fail("%s: %s's shape (layers x heads) is not known here: import its graft stats --json first (or "
                           "keep the student's convert --json beside it), or open it", path, name);
        }
        if (p.max_layer >= L || p.H > H) {
            const int ml = p.max_layer, mh = p.H - 1;
            parsed_free(&p);
            return gf_fail("%s: names layer %d / head %d, but %s has %d layers x %d heads: not this teacher's student", path,
                           ml, mh, name, L, H);
        }
        if (!t || !t->n_layers) p.L = L, p.H = H, p.shape_from_convert = conv;
    }
    if (t) {
        rep->here = t->loaded || exists(t->key);
        if (check_shape(&p, t, path) != 0) {
            parsed_free(&p);
            return -1;
        }
    } else {
        rep->here = local_copy(st, p.model, local, sizeof local);
        t = make_teacher(st, p.model, local, rep->path);
        if (!t) {
            parsed_free(&p);
            return gf_fail("%s: no room for another teacher in the session", path);
        }
        rep->created = true;
    }
    /* a running job of that kind for this teacher writes the same curves / statistics: not under it */
    const job_record *job = st->job.active ? app_job_find(st, st->job.id) : NULL;
    if (job && job->owner == t &&
        ((p.kind == IMPORT_RACE && !strcmp(job->name, "race")) || (p.kind == IMPORT_STATS && !strcmp(job->name, "stats")))) {
        parsed_free(&p);
        return gf_fail("%s: a %s job of %s is running: import it when it ends (or c cancels it)", path, job->name, t->name);
    }
    rep->teacher = t;
    apply(st, t, &p, rep->path, rep);
    st->session_dirty = true; /* the rows are saved with the session */
    parsed_free(&p);
    app_log(st, LOG_INFO, "import: %s", rep->path);
    return 0;
}

void import_report_line(const import_report *rep, const app_state *st, char *buf, size_t n) {
    const char *file = base_name(rep->path);
    const teacher_state *t = rep->teacher;
    char what[96];
    if (rep->kind == IMPORT_STATS) snprintf(what, sizeof what, "statistics (%d x %d heads)", rep->layers, rep->heads);
    else if (rep->kind == IMPORT_HALFLIFE)
        snprintf(what, sizeof what, "half-lives of %d GDN heads (3 Stats, init %.40s)", rep->heads, rep->init);
    else if (rep->kind == IMPORT_RACE) snprintf(what, sizeof what, "race: %d rows and curves", rep->rows);
    else snprintf(what, sizeof what, "%d ablate rows", rep->rows);
    const bool open = t && app_cur(st) == t;
    snprintf(buf, n, "imported %s from %s for %s%s", what, file, t ? t->name : "?",
             open ? ""
             : rep->here ? " (not open: open it on 1 Teacher to see them)"
                         : " (not open, its file is not here: Enter on it in 1 Teacher's recent list shows them)");
}

int import_file_kind(const char *path, import_kind *k) {
    bool missing;
    cJSON *root = json_read_file(path, &missing);
    if (!root) return missing ? gf_fail("%s: no such file", path) : -1;
    int rc = 0;
    if (cJSON_GetObjectItemCaseSensitive(root, "rows")) *k = IMPORT_ABLATE;
    else if (cJSON_GetObjectItemCaseSensitive(root, "runs")) *k = IMPORT_RACE;
    else if (cJSON_GetObjectItemCaseSensitive(root, "layers")) *k = IMPORT_STATS;
    else if (cJSON_GetObjectItemCaseSensitive(root, "heads")) *k = IMPORT_HALFLIFE;
    else rc = gf_fail("%s: not the JSON of graft ablate, race, stats or halflife", path);
    cJSON_Delete(root);
    return rc;
}

bool import_teacher_has_imports(const teacher_state *t) {
    if (t->stats_source[0] || t->race.source[0]) return true;
    for (int i = 0; i < t->n_results; i++)
        if (t->results[i].source[0]) return true;
    return false;
}

void import_adopt_teacher(app_state *st, const char *key) {
    if (app_find_teacher(st, key)) return;
    for (int i = 0; i < st->n_teachers; i++) {
        teacher_state *t = st->teachers[i];
        if (t->loaded || exists(t->key) || !same_name(t->key, key) || !import_teacher_has_imports(t)) continue;
        app_log(st, LOG_INFO, "import: the runs imported for %s are %s's", t->key, key);
        snprintf(t->key, sizeof t->key, "%s", key);
        return;
    }
}

static teacher_state *elsewhere(const app_state *st, const char *arg) {
    teacher_state *t = NULL;
    for (int i = 0; i < st->n_teachers && !t; i++)
        if (!strcmp(st->teachers[i]->arg, arg) || !strcmp(st->teachers[i]->key, arg)) t = st->teachers[i];
    return t && !t->loaded && !exists(t->key) && import_teacher_has_imports(t) ? t : NULL;
}

bool import_teacher_elsewhere(const app_state *st, const char *arg) { return elsewhere(st, arg) != NULL; }

bool import_show_teacher(app_state *st, const char *arg) {
    teacher_state *t = elsewhere(st, arg);
    if (!t) return false;
    app_switch(st, t);
    snprintf(st->notice, sizeof st->notice,
             "showing the runs imported for %s: its file is not on this machine, so nothing loads and jobs cannot run on it",
             t->name);
    app_log(st, LOG_INFO, "%s", st->notice);
    return true;
}
