#include "student/build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align/stage2.h"
#include "calibrate/stage1.h"
#include "core/error.h"

int student_build_layers(student *s, const bool *layers, const teacher_capture *cal, const teacher_capture *held,
                         const progress_sink *progress) {
    return student_build_layers_observed(s, layers, cal, held, progress, NULL);
}

int student_build_layers_observed(student *s, const bool *layers, const teacher_capture *cal,
                                  const teacher_capture *held, const progress_sink *progress,
                                  const stage2_observer *obs) {
    const student_init init = s->set.init;
    const gdn_config *c = &s->gcfg;
    const int H = c->H;
    int *todo = gf_malloc((size_t)s->L * sizeof *todo), n = 0;
    for (int l = 0; l < s->L; l++)
        if (layers[l]) todo[n++] = l;
    if ((init_uses_stage1(init) || init_uses_stage2(init)) && !cal) {
        free(todo);
        return gf_fail("initialization %s needs calibration data", student_init_name(init));
    }
    for (int i = 0; i < n; i++) {
        const int l = todo[i];
        if (s->have[l]) {
            gdn_params_free(&s->layers[l]);
            layer_report_free(&s->rep[l]);
        }
        gdn_params *p = &s->layers[l];
        layer_report *r = &s->rep[l];
        gdn_params_alloc(p, c);
        layer_report_alloc(r, H, l);
        s->have[l] = true;
        student_default_init(s, l, p);
        const size_t ng = (size_t)H * c->dv * c->D, nb = (size_t)H * c->D;
        r->wb_mean_abs_init = mean_abs(p->wb, nb);
        r->wg_mean_abs_init = mean_abs(p->wg, ng);
        if (init == INIT_ZERO_GATE) memset(p->wg, 0, ng * sizeof(float));
        if (init == INIT_SMALL_GATE)
            for (size_t j = 0; j < ng; j++) p->wg[j] *= 0.02f;
        if (student_stage1_parts(&s->set) != STAGE1_NONE) { /* none: exactly align-only / random */
            if (progress_cancelled(progress)) {
                free(todo);
                return gf_fail("cancelled");
            }
            progress_report(progress, "stage 1", i, n);
            if (stage1_apply(s, l, p, cal, &r->s1) != 0) {
                free(todo);
                return -1;
            }
            r->has_stage1 = true;
        }
        r->wb_mean_abs_pre2 = mean_abs(p->wb, nb);
        r->wg_mean_abs_pre2 = mean_abs(p->wg, ng);
        gdn_half_lives(c, p, r->half_life_pre2);
    }
    int rc = 0;
    if (init_uses_stage2(init) && n > 0) {
        char err[256] = "";
        align_set *sets = gf_calloc((size_t)n * 2, sizeof *sets);
        for (int i = 0; i < n; i++) {
            const int l = todo[i];
            sets[2 * i] = (align_set){capture_xn(cal, l), capture_attn_out(cal, l), cal->n_seqs, cal->T};
            if (held) sets[2 * i + 1] = (align_set){capture_xn(held, l), capture_attn_out(held, l), held->n_seqs, held->T};
        }
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < n; i++) {
            const int l = todo[i];
            layer_report *r = &s->rep[l];
            if (stage2_align(&s->set, c, &s->layers[l], &sets[2 * i], held ? &sets[2 * i + 1] : NULL, &r->s2,
                             progress, obs, l) != 0) {
#pragma omp critical
                {
                    rc = -1;
                    snprintf(err, sizeof err, "%s", gf_last_error());
                }
            } else {
                r->has_stage2 = true;
            }
        }
        free(sets);
        if (rc != 0) gf_fail("%s", err);
    }
    for (int i = 0; i < n; i++) {
        const int l = todo[i];
        layer_report *r = &s->rep[l];
        r->wb_mean_abs = mean_abs(s->layers[l].wb, (size_t)H * c->D);
        r->wg_mean_abs = mean_abs(s->layers[l].wg, (size_t)H * c->dv * c->D);
        gdn_half_lives(c, &s->layers[l], r->half_life);
    }
    free(todo);
    return rc;
}
