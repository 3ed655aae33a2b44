#include "workbench/stage1_choice.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "student/student.h"

void stage1_choice_default(stage1_choice *c) {
    *c = (stage1_choice){.parts = STAGE1_ALL, .no_sink = false, .half_life = 0, .sigma_fit = SIGMA_FIT_REFERENCE};
}

/* the fit that counts: the reference when sigma is not fitted at all */
static sigma_fit_mode fit_of(const stage1_choice *c) { return c->parts & STAGE1_SIGMA ? c->sigma_fit : SIGMA_FIT_REFERENCE; }

bool stage1_choice_uses_distance(const stage1_choice *c) { return (c->parts & STAGE1_DECAY) && !(c->half_life > 0); }

bool stage1_choice_same(const stage1_choice *a, const stage1_choice *b) {
    if ((a->parts & STAGE1_ALL) != (b->parts & STAGE1_ALL)) return false;
    if ((a->half_life > 0 ? a->half_life : 0) != (b->half_life > 0 ? b->half_life : 0)) return false;
    if (fit_of(a) != fit_of(b)) return false;
    return !stage1_choice_uses_distance(a) || a->no_sink == b->no_sink;
}

bool stage1_choice_is_default(const stage1_choice *c) {
    stage1_choice d;
    stage1_choice_default(&d);
    return stage1_choice_same(c, &d);
}

bool stage1_choice_toggle(stage1_choice *c, unsigned part) {
    c->parts = (c->parts ^ part) & STAGE1_ALL;
    if (!(c->parts & STAGE1_DECAY) && c->half_life > 0) {
        c->half_life = 0;
        return true;
    }
    return false;
}

void stage1_choice_next_fit(stage1_choice *c) {
    c->sigma_fit = c->sigma_fit == SIGMA_FIT_REFERENCE ? SIGMA_FIT_SCALED
                   : c->sigma_fit == SIGMA_FIT_SCALED  ? SIGMA_FIT_GATED
                                                       : SIGMA_FIT_REFERENCE;
}

int stage1_choice_set_half_life(stage1_choice *c, const char *text) {
    while (*text == ' ') text++;
    if (!*text || !strcmp(text, "0") || !strcmp(text, "off")) {
        c->half_life = 0;
        return 0;
    }
    if (!(c->parts & STAGE1_DECAY)) return gf_fail("the half-life override sets the decay: switch decay on first (d)");
    double v;
    if (half_life_parse(text, &v) != 0) return -1;
    c->half_life = v;
    return 0;
}

static int popcount4(unsigned p) { return (p & 1) + (p >> 1 & 1) + (p >> 2 & 1) + (p >> 3 & 1); }

void stage1_choice_label(const stage1_choice *c, char *buf, size_t n) {
    const unsigned p = c->parts & STAGE1_ALL;
    char parts[40];
    if (p == STAGE1_ALL) snprintf(parts, sizeof parts, "all");
    else if (popcount4(p) == 3) {
        int off = 0;
        while (p & (1u << off)) off++;
        snprintf(parts, sizeof parts, "-%s", stage1_part_names[off]);
    } else {
        stage1_parts_name(p, parts, sizeof parts);
    }
    char fit[24] = "";
    if (fit_of(c) != SIGMA_FIT_REFERENCE) snprintf(fit, sizeof fit, ", sigma %s", sigma_fit_name(c->sigma_fit));
    if (c->half_life > 0 && (p & STAGE1_DECAY)) snprintf(buf, n, "%s (half-life %g)%s", parts, c->half_life, fit);
    else if (c->no_sink && stage1_choice_uses_distance(c)) snprintf(buf, n, "%s (no-sink)%s", parts, fit);
    else snprintf(buf, n, "%s%s", parts, fit);
}

void stage1_choice_flags(const stage1_choice *c, char *buf, size_t n) {
    size_t at = 0;
    buf[0] = 0;
    const unsigned p = c->parts & STAGE1_ALL;
    if (p != STAGE1_ALL) {
        char parts[40];
        at += (size_t)snprintf(buf + at, n - at, " --stage1 %s", stage1_parts_name(p, parts, sizeof parts));
    }
    if (at < n && c->no_sink && stage1_choice_uses_distance(c)) at += (size_t)snprintf(buf + at, n - at, " --distance no-sink");
    if (at < n && c->half_life > 0 && (p & STAGE1_DECAY)) at += (size_t)snprintf(buf + at, n - at, " --half-life %.17g", c->half_life);
    if (at < n && fit_of(c) != SIGMA_FIT_REFERENCE) snprintf(buf + at, n - at, " --sigma-fit %s", sigma_fit_name(c->sigma_fit));
}

void stage1_choice_to_cli(const stage1_choice *c, method_cli *mo, stage1_cli_text *text) {
    const unsigned p = c->parts & STAGE1_ALL;
    stage1_parts_name(p, text->parts, sizeof text->parts);
    mo->stage1 = p == STAGE1_ALL ? NULL : text->parts;
    mo->distance = c->no_sink && stage1_choice_uses_distance(c) ? "no-sink" : "all";
    mo->half_life = NULL;
    if (c->half_life > 0 && (p & STAGE1_DECAY)) {
        snprintf(text->half_life, sizeof text->half_life, "%.17g", c->half_life);
        mo->half_life = text->half_life;
    }
    mo->sigma_fit = sigma_fit_name(fit_of(c));
}

cJSON *stage1_choice_json(const stage1_choice *c) {
    cJSON *o = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(o, "components");
    for (int i = 0; i < 4; i++)
        if (c->parts & (1u << i)) cJSON_AddItemToArray(a, cJSON_CreateString(stage1_part_names[i]));
    cJSON_AddStringToObject(o, "distance", c->no_sink ? "no-sink" : "all");
    if (c->half_life > 0) cJSON_AddNumberToObject(o, "half_life", c->half_life);
    else cJSON_AddNullToObject(o, "half_life");
    if (c->sigma_fit != SIGMA_FIT_REFERENCE) cJSON_AddStringToObject(o, "sigma_fit", sigma_fit_name(c->sigma_fit));
    return o;
}

int stage1_choice_from_json(stage1_choice *c, const cJSON *o, const char *path) {
    stage1_choice_default(c);
    if (!cJSON_IsObject(o)) return gf_fail("%s: a teacher's \"stage1\" should be an object", path);
    stage1_choice r;
    stage1_choice_default(&r);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "components"), *it;
    if (a) {
        if (!cJSON_IsArray(a)) return gf_fail("%s: \"stage1\".\"components\" should be an array of names", path);
        r.parts = 0;
        cJSON_ArrayForEach(it, a) {
            unsigned one;
            if (!cJSON_IsString(it) || stage1_parts_parse(it->valuestring, &one) != 0 || one == STAGE1_ALL ||
                one == STAGE1_NONE || popcount4(one) != 1)
                return gf_fail("%s: \"stage1\".\"components\": each must be one of decay, beta, sigma, gate", path);
            r.parts |= one;
        }
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "distance");
    if (d) {
        if (!cJSON_IsString(d) || (strcmp(d->valuestring, "all") && strcmp(d->valuestring, "no-sink")))
            return gf_fail("%s: \"stage1\".\"distance\" should be \"all\" or \"no-sink\"", path);
        r.no_sink = !strcmp(d->valuestring, "no-sink");
    }
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "half_life");
    if (h && !cJSON_IsNull(h)) {
        if (!cJSON_IsNumber(h) || !(h->valuedouble > 0 && h->valuedouble <= 1e9) || !(r.parts & STAGE1_DECAY))
            return gf_fail("%s: \"stage1\".\"half_life\" should be null or tokens in (0, 1e9] with decay among the components",
                           path);
        r.half_life = h->valuedouble;
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "sigma_fit");
    if (f && (!cJSON_IsString(f) || sigma_fit_parse(f->valuestring, &r.sigma_fit) != 0)) {
        gf_clear_error();
        return gf_fail("%s: \"stage1\".\"sigma_fit\" should be \"reference\", \"scaled\" or \"gated\"", path);
    }
    *c = r;
    return 0;
}
