#include "convert/build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align/stage2.h"
#include "backend/comm.h"
#include "calibrate/stage1.h"
#include "core/clock.h"
#include "core/error.h"

int student_build_layers(student *s, const bool *layers, const teacher_capture *cal, const teacher_capture *held,
                         const progress_sink *progress) {
    return student_build_layers_observed(s, layers, cal, held, progress, NULL);
}

typedef struct {
    student *s;
    const int *todo;
    align_set *sets;      /* [2n]: calibration, held-out */
    bool held;
    const progress_sink *progress;
    const stage2_observer *obs;
} stage2_tasks;

/* One layer's Stage 2 on its own (sub-)backend. */
static int stage2_task(void *ud, int i, gf_backend *sub) {
    stage2_tasks *t = ud;
    student *s = t->s;
    const int l = t->todo[i];
    layer_report *r = &s->rep[l];
    /* only the first task reports progress: tasks run side by side */
    if (stage2_align(sub, &s->set, &s->gcfg, s->gdn[l], &t->sets[2 * i], t->held ? &t->sets[2 * i + 1] : NULL, &r->s2,
                     t->progress, i == 0, t->obs, l) != 0)
        return -1;
    r->has_stage2 = true;
    return 0;
}

/* The rank whose comm_share of n items holds item i. */
static int owner_of(long i, long n, int size) {
    const long q = n / size, extra = n % size;
    return (int)(i < extra * (q + 1) ? i / (q + 1) : extra + (i - extra * (q + 1)) / q);
}

/* After each rank aligned its share of the layers: every layer's parameters
 * and Stage 2 report go from the rank that trained it to every rank, so each
 * holds the whole student (rank 0 writes it; training continues from it). */
static int share_stage2(student *s, const int *todo, int n, gf_comm *comm) {
    const size_t np = gdn_param_count(&s->gcfg);
    const int steps = s->set.steps, size = comm_size(comm);
    const size_t nd = 5 + 2 * ((size_t)steps + 1);
    double *pack = gf_malloc(nd * sizeof *pack);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const int l = todo[i], from = owner_of(i, n, size);
        stage2_result *r = &s->rep[l].s2;
        const bool mine = from == comm_rank(comm);
        if ((rc = comm_broadcast(comm, s->gdn[l], np, from)) != 0) break;
        if (mine) {
            pack[0] = r->heldout != NULL, pack[1] = r->best_step, pack[2] = r->best_loss;
            pack[3] = r->best_heldout, pack[4] = r->seconds;
            for (int k = 0; k <= steps; k++) {
                pack[5 + k] = r->loss[k];
                pack[6 + steps + k] = r->heldout ? r->heldout[k] : NAN;
            }
        }
        if ((rc = comm_broadcast_host(comm, pack, nd * sizeof *pack, from)) != 0) break;
        if (!mine) {
            r->steps = steps;
            r->loss = gf_calloc((size_t)steps + 1, sizeof(float));
            r->heldout = pack[0] != 0 ? gf_calloc((size_t)steps + 1, sizeof(float)) : NULL;
            r->best_step = (int)pack[1], r->best_loss = pack[2], r->best_heldout = pack[3], r->seconds = pack[4];
            for (int k = 0; k <= steps; k++) {
                r->loss[k] = (float)pack[5 + k];
                if (r->heldout) r->heldout[k] = (float)pack[6 + steps + k];
            }
            s->rep[l].has_stage2 = true;
        }
    }
    free(pack);
    return rc;
}

int student_build_layers_observed(student *s, const bool *layers, const teacher_capture *cal,
                                  const teacher_capture *held, const progress_sink *progress,
                                  const stage2_observer *obs) {
    const student_init init = s->set.init;
    const gdn_config *c = &s->gcfg;
    const int H = c->H;
    if ((init_uses_stage1(init) || init_uses_stage2(init)) && !cal)
        return gf_fail("initialization %s needs calibration data", student_init_name(init));
    int *todo = gf_malloc((size_t)s->L * sizeof *todo), n = 0;
    for (int l = 0; l < s->L; l++)
        if (layers[l]) todo[n++] = l;
    gdn_params p;
    gdn_params_alloc(&p, c);
    const size_t ng = (size_t)H * c->dv * c->D, nb = (size_t)H * c->D;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const int l = todo[i];
        layer_report *r = &s->rep[l];
        if (s->have[l]) layer_report_free(r);
        layer_report_alloc(r, H, l);
        student_default_init(s, l, &p);
        r->wb_mean_abs_init = mean_abs(p.wb, nb);
        r->wg_mean_abs_init = mean_abs(p.wg, ng);
        if (init == INIT_ZERO_GATE) memset(p.wg, 0, ng * sizeof(float));
        if (init == INIT_SMALL_GATE)
            for (size_t j = 0; j < ng; j++) p.wg[j] *= 0.02f;
        if (student_stage1_parts(&s->set) != STAGE1_NONE) { /* none: exactly align-only / random */
            if (progress_cancelled(progress)) {
                rc = gf_fail("cancelled");
            } else {
                progress_report(progress, "stage 1", i, n);
                if (stage1_apply(s, l, &p, cal, &r->s1, progress) != 0) rc = -1;
                else r->has_stage1 = true;
            }
        }
        r->wb_mean_abs_pre2 = mean_abs(p.wb, nb);
        r->wg_mean_abs_pre2 = mean_abs(p.wg, ng);
        gdn_half_lives(c, &p, r->half_life_pre2);
        if (rc == 0 && student_put_layer(s, l, &p) != 0) rc = -1;
        /* a layer that did not get its parameters keeps no report (have[l] owns it) */
        if (rc != 0 && !s->have[l]) layer_report_free(r);
    }
    if (rc == 0 && init_uses_stage2(init) && n > 0) {
        /* a job of several ranks (be_comm) spreads the layers: each rank its contiguous share */
        gf_comm *comm = be_comm(s->m->be);
        long lo = 0, hi = n;
        comm_share(comm, n, &lo, &hi);
        const int mine = (int)(hi - lo);
        stage2_tasks t = {s, todo + lo, gf_calloc((size_t)(mine > 0 ? mine : 1) * 2, sizeof(align_set)), held != NULL,
                          progress, obs};
        for (int i = 0; i < mine; i++) {
            const int l = t.todo[i];
            t.sets[2 * i] = (align_set){capture_xn(cal, l), capture_attn_out(cal, l), cal->n_seqs, cal->T};
            if (held) t.sets[2 * i + 1] = (align_set){capture_xn(held, l), capture_attn_out(held, l), held->n_seqs, held->T};
        }
        /* layers are independent tasks: on CPU threads over layers, each single-threaded;
         * on a GPU host threads over streams */
        const double t0 = clock_now_s();
        rc = be_run_tasks(s->m->be, mine, stage2_task, &t);
        if (rc == 0) rc = be_sync(s->m->be);
        s->stage2_wall_s = clock_now_s() - t0;
        free(t.sets);
        if (rc == 0 && comm) rc = share_stage2(s, todo, n, comm);
    }
    for (int i = 0; i < n && rc == 0; i++) { /* the final parameters' summaries: the gates' part of the block */
        const int l = todo[i];
        layer_report *r = &s->rep[l];
        if (student_get_layer_gates(s, l, &p) != 0) {
            rc = -1;
            break;
        }
        r->wb_mean_abs = mean_abs(p.wb, nb);
        r->wg_mean_abs = mean_abs(p.wg, ng);
        gdn_half_lives(c, &p, r->half_life);
    }
    gdn_params_free(&p);
    free(todo);
    return rc;
}
