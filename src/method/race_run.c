#include "method/race_run.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/clock.h"
#include "core/error.h"
#include "train/race.h"

int race_run(const race_spec *spec, transformer *teacher_tm, train_data *data, race_outcome *out) {
    memset(out, 0, sizeof *out);
    if (spec->n < 2 || spec->n > RACE_MAX_RUNS) return gf_fail("a race needs 2 to %d runs", RACE_MAX_RUNS);
    curve curves[RACE_MAX_RUNS];
    for (int i = 0; i < spec->n; i++) {
        cli_student st;
        train_student *handle = NULL;
        out->labels[i] = "";
        const double t0 = clock_now_s();
        if (spec->make(spec->make_ud, i, &st, &handle, &out->labels[i]) != 0) return -1;
        train_opts to = spec->base;
        char ckpt[1024];
        if (spec->ckpt_dir) {
            /* DIR/LABEL.ckpt; a label an earlier run has too gets -<run> (two folders of one init) */
            char name[256];
            snprintf(name, sizeof name, "%s", out->labels[i]);
            for (char *c = name; *c; c++)
                if (*c == '/') *c = '_';
            int dup = 0;
            for (int q = 0; q < i; q++) dup |= !strcmp(out->labels[q], out->labels[i]);
            if (dup) snprintf(ckpt, sizeof ckpt, "%s/%s-%d.ckpt", spec->ckpt_dir, name, i + 1);
            else snprintf(ckpt, sizeof ckpt, "%s/%s.ckpt", spec->ckpt_dir, name);
            to.ckpt_path = ckpt;
            to.resume = spec->resume; /* else every race starts fresh */
        }
        if (spec->on_run) spec->on_run(spec->run_ud, i, out->labels[i], to.ckpt_path);
        const double t1 = clock_now_s();
        int r = train_run(&to, &st.tm, teacher_tm, data, spec->stop, &out->res[i]);
        out->build_s[i] = t1 - t0;
        out->train_s[i] = clock_now_s() - t1;
        out->n_done++;
        cli_student_free(&st);
        train_student_close(handle);
        if (r != 0) return -1;
        if (out->res[i].stopped_by) {
            out->stopped = true;
            return 0;
        }
        curves[i] = out->res[i].st.loss;
    }
    /* the teacher on the held-out sequences every run is scored on */
    if (train_eval_ppl(&spec->base, teacher_tm, data, &out->teacher_ppl) != 0) return -1;
    return race_score(curves, spec->n, &out->target, out->ttt, &out->window);
}

int race_score(const curve *curves, int n_runs, double *target, double *ttt, int *window) {
    return race_tokens_to_target(curves, n_runs, 0, target, ttt, window);
}

void race_outcome_free(race_outcome *out) {
    for (int i = 0; i < out->n_done && i < RACE_MAX_RUNS; i++) train_result_free(&out->res[i]);
    out->n_done = 0;
}

double race_ratio(const race_outcome *o) { return o->ttt[1] > 0 ? o->ttt[0] / o->ttt[1] : -1; }
