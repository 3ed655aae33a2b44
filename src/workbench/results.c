#include "workbench/results.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "method/json_fields.h"
#include "student/student.h"
#include "workbench/json_file.h"

static const char *const kind_names[RUN_KIND_COUNT] = {"evaluate", "ablate", "race"};

const char *run_kind_name(run_kind k) { return (unsigned)k < RUN_KIND_COUNT ? kind_names[k] : "?"; }

void result_row_init(result_row *r) {
    memset(r, 0, sizeof *r);
    r->ppl = r->teacher_ppl = r->hl_mean = r->hl_med = r->hl_max = NAN;
    r->tokens_to_target = r->ratio = NAN;
    r->race_lr_mixer = r->race_lr_rest = NAN;
    r->seed = -1;
}

void result_set_stage1(result_row *r, const stage1_choice *c) {
    char label[40];
    r->has_stage1 = true;
    r->stage1 = *c;
    stage1_choice_label(c, label, sizeof label);
    snprintf(r->init_detail, sizeof r->init_detail, "stage1 %s", label);
}

static const result_col_info cols[RC_COUNT] = {
    [RC_TEACHER] = {"teacher", 1, false, true},   [RC_RUN] = {"run", 3, false, false},
    [RC_STRATEGY] = {"strategy", 9, false, false}, [RC_KEEP] = {"keep", 9, true, false},
    [RC_INIT] = {"init", 9, false, false},         [RC_DETAIL] = {"init detail", 7, false, false},
    [RC_STEPS] = {"S2 steps", 8, true, false},     [RC_EVAL] = {"eval slice", 7, false, false},
    [RC_PPL] = {"ppl", 10, true, false},           [RC_HL_MEAN] = {"hl mean", 5, true, false},
    [RC_HL_MED] = {"hl med", 4, true, false},      [RC_HL_MAX] = {"hl max", 3, true, false},
    [RC_KEPT] = {"kept", 6, false, false},         [RC_TTT] = {"to target", 5, true, false},
    [RC_STUDENT] = {"student", 2, false, true},    [RC_DEVICE] = {"device", 2, false, false},
    [RC_SOURCE] = {"from", 9, false, false},
};

const result_col_info *result_col_get(result_col c) { return &cols[(unsigned)c < RC_COUNT ? c : 0]; }

static const char *short_init(const char *s, bool abbreviate) {
    if (!abbreviate) return s;
    for (int i = 0; i < INIT_COUNT; i++)
        if (!strcmp(s, student_inits[i].name)) return student_inits[i].short_name;
    return s;
}

static void fmt_num(char *b, size_t n, double v, const char *fmt) {
    if (isnan(v)) snprintf(b, n, "-");
    else snprintf(b, n, fmt, v);
}

void result_slice_label(const char *corpus, int windows, int ctx, char *buf, size_t n) {
    const char *base = strrchr(corpus, '/');
    base = base ? base + 1 : corpus;
    size_t len = strlen(base);
    if (len > 4 && !strcmp(base + len - 4, ".txt")) len -= 4;
    if (len > 40) len = 40;
    if (windows > 0) snprintf(buf, n, "%.*s w%d", (int)len, base, windows);
    else snprintf(buf, n, "%.*s held-out", (int)len, base);
    (void)ctx;
}

/* Whether the row's init runs Stage 2 (an unknown init name: as recorded). */
static bool row_has_stage2(const result_row *r) {
    student_init init;
    return student_init_parse(r->init, &init) != 0 || init_uses_stage2(init);
}

void result_cell(const result_row *r, result_col c, bool abbreviate, char *buf, size_t n) {
    buf[0] = 0;
    switch (c) {
    case RC_TEACHER: snprintf(buf, n, "%s", r->teacher); break;
    case RC_RUN: snprintf(buf, n, "%s", run_kind_name(r->kind)); break;
    case RC_STRATEGY: snprintf(buf, n, "%s", r->strategy); break;
    case RC_KEEP: fmt_num(buf, n, r->keep * 100, "%.0f%%"); break;
    case RC_INIT: snprintf(buf, n, "%s", short_init(r->init, abbreviate)); break;
    case RC_DETAIL:
        if (abbreviate && !strncmp(r->init_detail, "stage1 ", 7)) snprintf(buf, n, "S1 %s", r->init_detail + 7);
        else snprintf(buf, n, "%s", r->init_detail[0] ? r->init_detail : "-");
        break;
    case RC_STEPS: /* only where Stage 2 ran: random and taylor-only rows have none to show */
        if (!row_has_stage2(r)) snprintf(buf, n, "-");
        else snprintf(buf, n, "%d%s", r->stage2_steps, r->stage2_steps && r->keep_best_heldout ? " (h)" : "");
        break;
    case RC_EVAL:
        if (r->kind == RUN_RACE) {
            char s[96];
            result_slice_label(r->corpus, 0, r->ctx, s, sizeof s);
            snprintf(buf, n, "race %s", s);
        } else {
            result_slice_label(r->corpus, r->eval_windows, r->ctx, buf, n);
        }
        break;
    case RC_PPL: fmt_num(buf, n, r->ppl, "%.4f"); break;
    case RC_HL_MEAN: fmt_num(buf, n, r->hl_mean, "%.2f"); break;
    case RC_HL_MED: fmt_num(buf, n, r->hl_med, "%.2f"); break;
    case RC_HL_MAX: fmt_num(buf, n, r->hl_max, "%.2f"); break;
    case RC_KEPT: snprintf(buf, n, "%s", r->kept[0] ? r->kept : "-"); break;
    case RC_TTT:
        if (r->kind != RUN_RACE) snprintf(buf, n, "-");
        else if (!(r->tokens_to_target >= 0)) snprintf(buf, n, "never");
        else snprintf(buf, n, "%.0f", r->tokens_to_target);
        break;
    case RC_STUDENT: snprintf(buf, n, "%s", r->student[0] ? r->student : "-"); break;
    case RC_DEVICE: snprintf(buf, n, "%s", r->device[0] ? r->device : "-"); break;
    case RC_SOURCE: { /* "here", or the file an imported row came from (its folder is in the footer) */
        const char *base = strrchr(r->source, '/');
        snprintf(buf, n, "%.24s", r->source[0] ? (base ? base + 1 : r->source) : "here");
        break;
    }
    case RC_COUNT: break;
    }
}

static double col_number(const result_row *r, result_col c) {
    switch (c) {
    case RC_KEEP: return r->keep;
    case RC_STEPS: return row_has_stage2(r) ? r->stage2_steps : NAN;
    case RC_PPL: return r->ppl;
    case RC_HL_MEAN: return r->hl_mean;
    case RC_HL_MED: return r->hl_med;
    case RC_HL_MAX: return r->hl_max;
    case RC_TTT: return r->kind == RUN_RACE && r->tokens_to_target >= 0 ? r->tokens_to_target : NAN;
    default: return NAN;
    }
}

int result_compare_col(const result_row *a, const result_row *b, result_col c, bool desc) {
    int d = 0;
    if ((unsigned)c < RC_COUNT && cols[c].numeric) {
        double x = col_number(a, c), y = col_number(b, c);
        if (isnan(x) != isnan(y)) return isnan(x) ? 1 : -1; /* unknown last, either way */
        if (!isnan(x)) d = (x > y) - (x < y);
    } else if ((unsigned)c < RC_COUNT) {
        char x[256], y[256];
        result_cell(a, c, false, x, sizeof x);
        result_cell(b, c, false, y, sizeof y);
        if (!x[0] != !y[0]) return !x[0] ? 1 : -1; /* empty last, either way */
        d = strcmp(x, y);
        d = (d > 0) - (d < 0);
    }
    return desc ? -d : d;
}

int result_compare(const result_row *a, const result_row *b, result_col c) {
    int d = result_compare_col(a, b, c, false);
    return d ? d : (a->seq > b->seq) - (a->seq < b->seq);
}

/* ---- JSON (the session file) ---- */

/* The row's plain fields: one table for the session file's writer and reader. */
#define ROW_FIELD(member, key, KIND) JSON_FIELD(result_row, member, key, KIND)
#define ROW_FIELD_OPT(member, key, KIND) JSON_FIELD_OPT(result_row, member, key, KIND)
static const json_field row_fields[] = {
    ROW_FIELD(teacher, "teacher", TEXT),
    ROW_FIELD(strategy, "strategy", TEXT),
    ROW_FIELD(keep, "keep", DOUBLE),
    ROW_FIELD(init, "init", TEXT),
    ROW_FIELD(init_detail, "init_detail", TEXT),
    ROW_FIELD(stage2_steps, "stage2_steps", INT),
    ROW_FIELD_OPT(keep_best_heldout, "keep_best_heldout", FLAG),
    ROW_FIELD(corpus, "corpus", TEXT),
    ROW_FIELD(eval_windows, "eval_windows", INT),
    ROW_FIELD(ctx, "ctx", INT),
    ROW_FIELD(ppl, "ppl", DOUBLE),
    ROW_FIELD(teacher_ppl, "teacher_ppl", DOUBLE),
    ROW_FIELD(hl_mean, "hl_mean", DOUBLE),
    ROW_FIELD(hl_med, "hl_median", DOUBLE),
    ROW_FIELD(hl_max, "hl_max", DOUBLE),
    ROW_FIELD(kept, "kept", TEXT),
    ROW_FIELD(student, "student", TEXT),
    ROW_FIELD_OPT(digest, "request_digest", TEXT),
    ROW_FIELD_OPT(device, "device", TEXT),
    ROW_FIELD_OPT(source, "imported_from", TEXT),
    ROW_FIELD_OPT(source_row, "imported_row", INT),
};
/* A race row's own. */
static const json_field race_fields[] = {
    ROW_FIELD(race_tokens, "race_tokens", LONG),
    ROW_FIELD_OPT(race_inits, "race_inits", TEXT),
    ROW_FIELD(race_lr_mixer, "lr_mixer", DOUBLE),
    ROW_FIELD(race_lr_rest, "lr_rest", DOUBLE),
    ROW_FIELD(tokens_to_target, "tokens_to_target", DOUBLE),
    ROW_FIELD(ratio, "ratio", DOUBLE),
};

cJSON *result_row_json(const result_row *r) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "run", run_kind_name(r->kind));
    json_fields_write(o, r, row_fields, JSON_FIELDS_COUNT(row_fields));
    if (r->has_stage1) cJSON_AddItemToObject(o, "stage1", stage1_choice_json(&r->stage1));
    if (r->seed >= 0) cJSON_AddNumberToObject(o, "seed", (double)r->seed);
    if (r->kind == RUN_RACE) json_fields_write(o, r, race_fields, JSON_FIELDS_COUNT(race_fields));
    return o;
}

int result_row_from_json(const cJSON *o, result_row *r) {
    result_row_init(r);
    if (!cJSON_IsObject(o)) return gf_fail("a results row must be an object");
    char kind[16] = "";
    json_get_str(o, "run", kind, sizeof kind);
    int k = 0;
    while (k < RUN_KIND_COUNT && strcmp(kind, kind_names[k])) k++;
    if (k == RUN_KIND_COUNT) return gf_fail("a results row has no known \"run\" (evaluate, ablate, race)");
    r->kind = (run_kind)k;
    r->keep = NAN; /* unknown unless the row says */
    if (json_fields_read(o, r, row_fields, JSON_FIELDS_COUNT(row_fields), "a results row") ||
        json_fields_read(o, r, race_fields, JSON_FIELDS_COUNT(race_fields), "a results row"))
        return -1;
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(o, "seed");
    if (cJSON_IsNumber(seed) && seed->valuedouble >= 0 && seed->valuedouble <= 9.2e18)
        r->seed = (long)seed->valuedouble; /* absent or out of range: unknown */
    const cJSON *s1 = cJSON_GetObjectItemCaseSensitive(o, "stage1");
    if (s1 && !cJSON_IsNull(s1)) {
        if (stage1_choice_from_json(&r->stage1, s1, "a results row") != 0) return -1;
        r->has_stage1 = true;
        /* rows saved before the fit went into "stage1" said the scaled one in their init detail only */
        if (!cJSON_GetObjectItemCaseSensitive(s1, "sigma_fit") && strstr(r->init_detail, "sigma scaled"))
            r->stage1.sigma_fit = SIGMA_FIT_SCALED;
    }
    return 0;
}
