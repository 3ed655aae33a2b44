#include "method/convert.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "method/reports.h"
#include "select/select.h"
#include "student/report_json.h"
#include "student/student_io.h"

void artifact_short_name(const char *path, char *out, size_t n) {
    const char *b = strrchr(path, '/');
    if (b && !b[1]) { /* "dir/": the folder's own name */
        while (b > path && b[-1] != '/') b--;
    } else {
        b = b ? b + 1 : path;
    }
    size_t j = 0;
    for (const char *p = b; *p && *p != '/' && j + 1 < n; p++) {
        if (*p == '.' && (!strcmp(p, ".bin") || !strcmp(p, ".gguf"))) break;
        const char c = *p;
        out[j++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ? c : '_';
    }
    out[j] = 0;
    if (!j) snprintf(out, n, "teacher");
}

int convert_target_resolve(const request *r, const char *parent, const char *prefix, convert_target *t) {
    memset(t, 0, sizeof *t);
    if (artifact_identity(r, &t->identity, t->digest) != 0) return -1;
    const convert_req *q = &r->u.convert;
    if (q->out) {
        snprintf(t->out, sizeof t->out, "%s", q->out);
    } else {
        char name[200], teacher[64];
        if (!prefix) {
            artifact_short_name(r->pos[0], teacher, sizeof teacher);
            snprintf(name, sizeof name, "student-%s-%s", teacher, q->init);
            prefix = name;
        }
        snprintf(t->out, sizeof t->out, "%s%s%s-%.*s", parent ? parent : "", parent ? "/" : "", prefix, ARTIFACT_SHORT,
                 t->digest);
    }
    if (artifact_claim_dir(t->out, "config.json", t->digest, q->force,
                           q->out ? "choose another --out, or pass --force to replace it"
                                  : "pass --force to replace it",
                           &t->claim) != 0) {
        char why[1400]; /* the refusal, kept while the folder's own record is read */
        snprintf(why, sizeof why, "%s", gf_last_error());
        t->refused = true;
        if (artifact_read(t->out, "config.json", t->held, NULL, 0) != 0) t->held[0] = 0;
        convert_target_free(t);
        return gf_fail("%s", why);
    }
    return 0;
}

void convert_target_free(convert_target *t) {
    cJSON_Delete(t->identity);
    t->identity = NULL;
}

const char *convert_claim_note(const convert_target *t, char *buf, size_t n) {
    switch (t->claim) {
    case ARTIFACT_NEW: snprintf(buf, n, "%s", ""); break;
    case ARTIFACT_SAME:
        snprintf(buf, n, "%s: reused (the same request made it, %.*s)", t->out, ARTIFACT_SHORT, t->digest);
        break;
    case ARTIFACT_FORCED: snprintf(buf, n, "%s: replaced (--force)", t->out); break;
    }
    return buf;
}

int method_convert_run(const request *r, model *m, const method_hooks *h, convert_result *res) {
    const convert_req *q = &r->u.convert;
    memset(res, 0, sizeof *res);
    student_init init;
    if (strategy_parse(q->strategy, 0, &res->ss) != 0 || student_init_parse(q->init, &init) != 0 ||
        method_cli_settings(&q->mo, r->co.seed, init, &res->set) != 0)
        return -1;
    if (!m->tok) return gf_fail("%s has no tokenizer (pass --tokenizer PATH)", r->pos[0]);
    const int L = m->cfg.n_layers;
    int k = 0;
    if (res->ss.kind == STRATEGY_MANUAL) {
        if (strategy_parse(q->strategy, L, &res->ss) != 0) return -1;
    } else if (keep_count(q->keep, L, &k) != 0) {
        return -1;
    }
    const bool scored = res->ss.kind == STRATEGY_AR || res->ss.kind == STRATEGY_GA_S2;
    const progress_sink *pr = &h->progress, *build = h->build ? h->build : pr;
    teacher_capture held = {0};
    int rc = -1;
    method_phase(h, "tokenize");
    if (token_split_make(&res->sp, m->tok, q->calib, scored || q->text ? (q->text ? q->text : q->calib) : NULL,
                         &q->mo.split) != 0)
        goto done;
    method_phase(h, "teacher pass");
    if (method_capture(m, &res->sp, &res->cal, &held, pr) != 0) goto done;
    if (student_init_empty(&res->s, m, &res->set) != 0) goto done;
    res->s.m = m;
    method_phase(h, "stage 1");
    /* selection's own reports go to progress; the layers' build to build */
    if (method_select_and_build(&res->s, &res->sel, &res->ss, k, &res->sp, &res->cal, &held, q->mo.split.ctx, build,
                                h->obs) != 0)
        goto done;
    rc = 0;
done:
    teacher_capture_free(&held);
    return rc;
}

cJSON *convert_report_json(const request *r, const convert_result *res) {
    const convert_req *q = &r->u.convert;
    cJSON *rep = student_report_json(&res->s);
    cJSON_AddItemToObject(rep, "selection", selection_json(&res->sel));
    cJSON_AddItemToObject(rep, "split", split_json(&res->sp, q->calib, res->sp.select.len ? (q->text ? q->text : q->calib) : NULL));
    cJSON_AddItemToObject(rep, "teacher_attention_stats", attn_stats_json(&res->cal.stats));
    if (!isnan(q->keep)) cJSON_AddNumberToObject(rep, "keep", q->keep);
    return rep;
}

int method_convert_save(const request *r, const model *m, const convert_target *t, const convert_result *res,
                        const cJSON *report) {
    char *tok = teacher_tokenizer_path(r->pos[0], m->cfg.vocab_size, r->co.tokenizer);
    cJSON *extra = cJSON_CreateObject();
    cJSON_AddItemToObject(extra, ARTIFACT_KEY, artifact_record(r, t->identity, t->digest));
    const int rc = student_save_with(&res->s, t->out, tok, report, extra);
    cJSON_Delete(extra);
    free(tok);
    return rc;
}

void convert_result_free(convert_result *res) {
    layer_selection_free(&res->sel);
    teacher_capture_free(&res->cal);
    token_split_free(&res->sp);
    student_free(&res->s);
}
