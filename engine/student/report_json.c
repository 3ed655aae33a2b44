#include "student/report_json.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "student/student_io.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

half_life_summary student_half_life_summary(const student *s, const bool *mask) {
    if (!mask) mask = s->is_gdn;
    const int H = s->gcfg.H;
    double *v = gf_malloc((size_t)s->L * H * sizeof *v);
    int n = 0;
    for (int l = 0; l < s->L; l++)
        if (mask[l] && s->have[l])
            for (int h = 0; h < H; h++) v[n++] = s->rep[l].half_life[h];
    half_life_summary r = {NAN, NAN, NAN, NAN, n};
    if (n > 0) {
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        double sum = 0;
        for (int i = 0; i < n; i++) sum += v[i];
        r.mean = sum / n;
        r.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
        r.max = v[n - 1];
        r.min = v[0];
    }
    free(v);
    return r;
}

static cJSON *num(double x) { return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull(); }

static void add_num(cJSON *o, const char *k, double x) { cJSON_AddItemToObject(o, k, num(x)); }

static void add_arr(cJSON *o, const char *k, const double *v, int n) {
    cJSON *a = cJSON_AddArrayToObject(o, k);
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, num(v[i]));
}

static void add_farr(cJSON *o, const char *k, const float *v, int n) {
    if (!v) {
        cJSON_AddNullToObject(o, k);
        return;
    }
    cJSON *a = cJSON_AddArrayToObject(o, k);
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, num(v[i]));
}

cJSON *stage1_parts_json(unsigned parts) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < 4; i++)
        if (parts & (1u << i)) cJSON_AddItemToArray(a, cJSON_CreateString(stage1_part_names[i]));
    return a;
}

cJSON *half_life_summary_json(half_life_summary h) {
    cJSON *o = cJSON_CreateObject();
    add_num(o, "mean", h.mean);
    add_num(o, "median", h.median);
    add_num(o, "max", h.max);
    add_num(o, "min", h.min);
    cJSON_AddNumberToObject(o, "heads", h.n);
    return o;
}

cJSON *layer_report_json(const layer_report *r, int H) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "layer", r->layer);
    if (r->has_stage1) {
        const stage1_result *a = &r->s1;
        cJSON *s1 = cJSON_AddObjectToObject(o, "stage1");
        cJSON_AddItemToObject(s1, "components", stage1_parts_json(a->parts));
        add_arr(s1, "mean_distance", a->dist, H);
        add_arr(s1, "mean_distance_no_sink", a->dist_nosink, H);
        add_arr(s1, "sink_share", a->sink, H);
        add_arr(s1, "decay_distance", a->decay_dist, H);
        add_arr(s1, "entropy", a->entropy, H);
        add_arr(s1, "concentration", a->conc, H);
        add_arr(s1, "teacher_output_rms", a->tc_rms, H);
        add_arr(s1, "target_g", a->target_g, H);
        add_arr(s1, "dt_bias", a->dt_bias, H);
        add_arr(s1, "beta_star", a->beta_star, H);
        cJSON *lg = cJSON_AddArrayToObject(s1, "beta_logit"); /* logit(beta*): the write-gate target */
        for (int h = 0; h < H; h++) cJSON_AddItemToArray(lg, num(log(a->beta_star[h] / (1 - a->beta_star[h]))));
        add_arr(s1, "write_logit_mean", a->wb_logit, H);
        add_arr(s1, "sigma_star", a->sigma_star, H);
        add_arr(s1, "sigma_unclamped", a->sigma_raw, H);
        add_num(s1, "alpha_star", a->alpha_star);
        add_num(s1, "rms_teacher_output", a->rms_tc);
        add_num(s1, "rms_silu_v", a->rms_v);
        cJSON_AddNumberToObject(s1, "mean_logit_fallback_heads", a->mean_logit_fallback);
    }
    if (r->has_stage2) {
        const stage2_result *b = &r->s2;
        cJSON *s2 = cJSON_AddObjectToObject(o, "stage2");
        cJSON_AddNumberToObject(s2, "steps", b->steps);
        cJSON_AddNumberToObject(s2, "best_step", b->best_step);
        add_num(s2, "best_loss", b->best_loss);
        add_num(s2, "best_heldout_loss", b->best_heldout);
        add_num(s2, "seconds", b->seconds);
        add_farr(s2, "loss", b->loss, b->steps + 1);
        add_farr(s2, "heldout_loss", b->heldout, b->steps + 1);
        add_arr(s2, "half_life_before", r->half_life_pre2, H);
    }
    cJSON *mg = cJSON_AddObjectToObject(o, "mean_abs");
    add_num(mg, "wb_init", r->wb_mean_abs_init);
    add_num(mg, "wg_init", r->wg_mean_abs_init);
    add_num(mg, "wb_before_stage2", r->wb_mean_abs_pre2);
    add_num(mg, "wg_before_stage2", r->wg_mean_abs_pre2);
    add_num(mg, "wb", r->wb_mean_abs);
    add_num(mg, "wg", r->wg_mean_abs);
    add_arr(o, "half_life", r->half_life, H);
    return o;
}

cJSON *student_report_json(const student *s) {
    cJSON *o = cJSON_CreateObject();
    cJSON *cfg = student_config_json(s);
    cJSON_AddItemToObject(o, "student", cJSON_DetachItemFromObject(cfg, "graft_student"));
    cJSON_Delete(cfg);
    cJSON *layers = cJSON_AddArrayToObject(o, "layers");
    for (int l = 0; l < s->L; l++)
        if (s->is_gdn[l]) cJSON_AddItemToArray(layers, layer_report_json(&s->rep[l], s->gcfg.H));
    cJSON_AddItemToObject(o, "half_life", half_life_summary_json(student_half_life_summary(s, NULL)));
    if (s->stage2_wall_s > 0) /* the whole Stage 2's wall time: its layers overlap, so not their sum */
        add_num(cJSON_AddObjectToObject(o, "stage2"), "seconds", s->stage2_wall_s);
    return o;
}
