/* graft race MODEL [STUDENT_DIR ...] [--inits random,taylor-calibrate] [--keep R] [--strategy S] ...
 * Trains each initialization for the same token budget on the same data order
 * and reports the tokens each needs to reach the baseline's final loss.
 * Students come from folders made by `graft convert` (the first is the
 * baseline), or are built here from the teacher: with calibration text
 * (--calib, else --data) by graft convert's builder, layers chosen by
 * --keep / --strategy as there; without it, in memory for the inits that need
 * no calibration (random, zero-gate, small-gate; uniform or manual layers). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "cli/ranks.h"
#include "method/mem_check.h"
#include "cli/out_place.h"
#include "method/artifact.h"
#include "method/race_run.h"
#include "method/train_cli.h"
#include "method/train_student.h"
#include "cli/signals.h"
#include "commands.h"
#include "core/error.h"
#include "student/report_json.h"
#include "train/race.h"
#include "student/student.h"

static void print_step(void *ud, long step, long total, long tokens, double loss, double lr, double gnorm) {
    const int *every = ud;
    if (*every > 0 && (step % *every == 0 || step == total))
        fprintf(stderr, "  step %ld/%ld  tokens %ld  loss %.6f  lr %.3g  |g| %.4g\n", step, total, tokens, loss, lr,
                gnorm);
}

#define MAX_INITS RACE_MAX_RUNS

/* where race_run gets each student: folders, the method's builder, or the
 * in-memory stand-ins */
typedef struct {
    const char **inits;
    bool folders, builder;
    model *teacher;
    train_cli *tc;
    const common_opts *co;
    const char *strategy;
    double keep;
    const char *calib, *text;
    char conv[MAX_INITS][512];          /* each run's converted layers */
    const method_cli *mo;               /* Stage 1 options for the builder */
    char labels[MAX_INITS][96];         /* init, with its Stage 1 components when not all four */
    unsigned stage1[MAX_INITS];         /* components applied by run i */
    const char *sigma_fit[MAX_INITS];   /* run i's value-scale fit (NULL: none fitted) */
} race_maker;

/* "taylor-calibrate", or "taylor-calibrate[decay,beta]" / "[...,no-sink]" / "[...,half-life 32]" /
 * "[...,sigma scaled]" / "[...,sigma gated]" when the Stage 1 settings are not the defaults */
static const char *stage1_label(const student_settings *st, char *buf, size_t size) {
    const unsigned parts = student_stage1_parts(st);
    const bool other_fit = (parts & STAGE1_SIGMA) && st->sigma_fit != SIGMA_FIT_REFERENCE; /* scaled or gated */
    if (!init_uses_stage1(st->init) ||
        (parts == STAGE1_ALL && st->half_life == 0 && st->distance == DECAY_DISTANCE_ALL && !other_fit))
        return snprintf(buf, size, "%s", student_init_name(st->init)), buf;
    char p[64], extra[48] = "";
    if (st->half_life > 0) snprintf(extra, sizeof extra, ",half-life %g", st->half_life);
    else if (parts & STAGE1_DECAY && st->distance == DECAY_DISTANCE_NO_SINK) snprintf(extra, sizeof extra, ",no-sink");
    if (other_fit) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ",sigma %s", sigma_fit_name(st->sigma_fit));
    snprintf(buf, size, "%s[%s%s]", student_init_name(st->init), stage1_parts_name(parts, p, sizeof p), extra);
    return buf;
}

static int make_student(void *ud, int i, cli_student *st, train_student **handle, const char **label) {
    race_maker *mk = ud;
    *label = mk->inits[i];
    mk->stage1[i] = STAGE1_NONE;
    mk->sigma_fit[i] = NULL;
    int rc;
    if (mk->folders) {
        rc = train_student_load(st, handle, mk->inits[i], mk->co->tokenizer, mk->tc->to.ctx, label);
        snprintf(mk->conv[i], sizeof mk->conv[i], "as in the student folder");
    } else if (mk->builder) {
        if (mk->tc->log_every > 0) fprintf(stderr, "graft race: building the %s student\n", mk->inits[i]);
        rc = train_student_build(st, handle, mk->teacher, mk->inits[i], mk->strategy, mk->keep, mk->calib, mk->text,
                                 mk->co->seed, mk->tc->to.ctx, mk->conv[i], sizeof mk->conv[i], mk->mo, NULL, NULL);
    } else {
        return cli_student_build(st, mk->teacher, mk->tc, mk->inits[i], mk->tc->to.seed);
    }
    if (rc == 0 && *handle) {
        const student_settings *set = train_student_settings(*handle);
        mk->stage1[i] = student_stage1_parts(set);
        if (mk->stage1[i] & STAGE1_SIGMA) mk->sigma_fit[i] = sigma_fit_name(set->sigma_fit);
        *label = stage1_label(set, mk->labels[i], sizeof mk->labels[i]);
    }
    return rc;
}

static void run_started(void *ud, int i, const char *label, const char *ckpt) {
    (void)ckpt;
    race_maker *mk = ud;
    train_cli_recall_run(mk->tc, i, label); /* its recall points and dump lines */
    if (mk->tc->log_every > 0) fprintf(stderr, "graft race: training init %s\n", label);
}

/* An init of the table that runs Stage 1 or Stage 2 (and so needs calibration text). */
static bool init_needs_calibration(const char *name) {
    for (int i = 0; i < INIT_COUNT; i++)
        if (!strcmp(name, student_inits[i].name))
            return init_uses_stage1((student_init)i) || init_uses_stage2((student_init)i);
    return false;
}

int cmd_race(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_RACE, argc, argv, &done);
    if (rc || done) return rc;
    common_opts co = r.co;
    const char **pos = r.pos;
    const int n_ranks = r.n_ranks, n_gpus = r.n_gpus, np = r.n_pos;
    train_cli tc = r.u.race.tc;
    method_cli mo = r.u.race.mo;
    const char *inits_s = r.u.race.inits;
    const char *calib = r.u.race.calib, *text = r.u.race.text, *ckpt_dir = r.u.race.ckpt_dir;
    const bool resume = r.u.race.resume;
    if (cli_ranks_launch("race", argc, argv, n_ranks, n_gpus, &co, &rc)) return rc;
    if (!tc.teacher) tc.teacher = pos[0];
    if ((rc = cli_setup("race", &co)) || (rc = train_cli_finish(&tc, "race"))) return rc;
    cli_ctx_plan(tc.to.ctx, &co);
    tc.to.seed = (uint64_t)co.seed;
    char names_buf[512];
    const char *inits[MAX_INITS];
    int n_inits = 0;
    const bool folders = np > 1;
    if (folders && (inits_s || train_cli_converts(&tc))) {
        fprintf(stderr, "graft race: student folders carry their own init and layers; drop --inits / --keep / "
                        "--strategy\n");
        return 2;
    }
    if (folders) {
        if (np < 3) {
            fprintf(stderr, "graft race: give at least two student folders (the first is the baseline)\n");
            return 2;
        }
        n_inits = np - 1;
        for (int i = 0; i < n_inits; i++) inits[i] = pos[i + 1];
    } else {
        snprintf(names_buf, sizeof names_buf, "%s", inits_s ? inits_s : RACE_DEFAULT_INITS);
        for (char *t = strtok(names_buf, ","); t && n_inits < MAX_INITS; t = strtok(NULL, ",")) inits[n_inits++] = t;
        if (n_inits < 2) {
            fprintf(stderr, "graft race: --inits needs at least two initializations\n");
            return 2;
        }
    }
    if (ckpt_dir && mkdir(ckpt_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "graft race: --ckpt-dir %s: %s\n", ckpt_dir, strerror(errno));
        return 1;
    }
    cli_catch_stop_signals(); /* before the claim: a Ctrl-C while loading ends through cli_die_if_stopped (as train) */
    if (ckpt_dir && cli_rank0() && cli_out_claim("--ckpt-dir", ckpt_dir, OUT_CKPT_DIR, n_inits) != 0)
        return cli_fail("race");
    if (ckpt_dir && cli_rank0()) { /* one claimant: its checkpoints belong to one request (another's refused) */
        char digest[ARTIFACT_DIGEST_HEX], note[1200];
        if (artifact_claim_record_dir(&r, ckpt_dir, r.u.race.force, "choose another --ckpt-dir, or pass --force", digest,
                                      note, sizeof note) != 0)
            return cli_fail("race");
        if (note[0] && cli_rank0() && !resume) fprintf(stderr, "graft race: %s\n", note); /* resuming is reusing */
    }
    /* with calibration text at hand: graft convert's builder (every init and
     * strategy); without: the in-memory stand-ins */
    if (!calib) calib = tc.data;
    const bool builder = !folders && calib;
    if (!folders && isnan(tc.keep)) tc.keep = 0.5;
    if (!folders && !tc.strategy) tc.strategy = "uniform";
    for (int i = 0; i < n_inits && builder; i++)
        if (train_student_init_check(inits[i]) != 0) return cli_fail("race");
    const bool stage1_opts = method_cli_stage1_given(&mo);
    if (stage1_opts) {
        student_settings check;
        bool any = false;
        for (int i = 0; i < n_inits && builder; i++) {
            student_init in;
            any |= student_init_parse(inits[i], &in) == 0 && init_uses_stage1(in);
        }
        if (!builder) {
            fprintf(stderr, "graft race: --stage1, --distance, --half-life and --sigma-fit apply when race builds the students "
                            "(no folders, calibration text from --calib or --data)\n");
            return 2;
        }
        if (!any) {
            fprintf(stderr, "graft race: --stage1, --distance, --half-life and --sigma-fit need taylor-only or taylor-calibrate in --inits\n");
            return 2;
        }
        if (method_cli_settings(&mo, co.seed, INIT_TAYLOR_CALIBRATE, &check) != 0) {
            fprintf(stderr, "graft race: %s\n", gf_last_error());
            return 2;
        }
    }
    for (int i = 0; i < n_inits && !folders && !builder; i++)
        if (cli_student_init_check(inits[i]) != 0) {
            if (init_needs_calibration(inits[i]))
                gf_fail("init '%s' needs calibration text: pass --calib FILE or --data FILE (or race student "
                        "folders made by graft convert)", inits[i]);
            return cli_fail("race");
        }
    for (int i = 0; i < n_inits && folders; i++)
        if (!train_student_is_folder(inits[i])) {
            gf_fail("%s is not a student folder (graft convert makes them)", inits[i]);
            return cli_fail("race");
        }
    /* --recall-dump: a bad path fails here, before the teacher loads and hours of training */
    if (cli_recall_dump_open(&tc, resume) != 0) return cli_fail("race");
    train_plan plan = {&tc, folders ? 2 : 1, folders ? inits : NULL, folders ? n_inits : 0, builder, &mo};
    cli_mem_plan(train_plan_fill, &plan, "lower --batch or --ctx");
    model teacher;
    if (cli_load_model("race", tc.teacher, &co, &teacher) != 0) {
        train_cli_recall_close(&tc);
        return 1;
    }
    const int L = teacher.cfg.n_layers;
    race_maker mk = {.inits = inits, .folders = folders, .builder = builder, .teacher = &teacher, .tc = &tc,
                     .co = &co, .strategy = tc.strategy, .keep = tc.keep, .calib = calib, .text = text, .mo = &mo};
    transformer tt = {0};
    train_data data = {0};
    race_outcome ro = {0};
    rc = 1;
    if (!folders && !builder) { /* every stand-in converts the same layers */
        bool *conv = gf_calloc((size_t)L, sizeof *conv);
        int mrc = train_cli_convert_mask(&tc, L, conv);
        if (mrc == 0)
            for (int i = 0; i < n_inits; i++) layer_list_text(conv, L, mk.conv[i], sizeof mk.conv[i]);
        free(conv);
        if (mrc != 0) goto out;
    }
    if (tf_view(&tt, &teacher, NULL, NULL, NULL) != 0) goto out;
    if (train_cli_recall(&tc, &teacher) != 0) goto out;
    if (cli_train_data(&data, &teacher, &tc) != 0) goto out;
    tc.to.on_step = print_step;
    tc.to.ud = &tc.log_every;
    race_spec spec = {.n = n_inits, .make = make_student, .make_ud = &mk, .base = tc.to, .ckpt_dir = ckpt_dir,
                      .resume = resume, .on_run = run_started, .run_ud = &mk, .stop = cli_stop_flag()};
    cli_die_if_stopped(); /* stopped before the first run: nothing to keep; a stopped run writes its checkpoint */
    if (race_run(&spec, &tt, &data, &ro) != 0) goto out;
    if (ro.stopped) {
        const int i = ro.n_done - 1;
        const train_result *r = &ro.res[i];
        const int sig = r->stopped_by;
        fprintf(stderr, "graft race: stopped by %s in run %d/%d (%s) at step %ld of %ld; ", sig == SIGINT ? "SIGINT" : "SIGTERM",
                i + 1, n_inits, ro.labels[i], r->st.step, r->total_steps);
        if (ckpt_dir) fprintf(stderr, "checkpoints in %s (run again with --resume)\n", ckpt_dir);
        else fprintf(stderr, "no checkpoint (no --ckpt-dir)\n");
        rc = 128 + sig;
        goto cleanup;
    }
    const char *const *labels = ro.labels;
    const train_result *res = ro.res;
    const double target = ro.target, *ttt = ro.ttt;
    const int window = ro.window;
    const double teacher_ppl = ro.teacher_ppl; /* on the held-out sequences every run is scored on */
    if (!co.json) {
        printf("teacher held-out ppl %.4f  (the %d sequences of %d tokens every run is scored on)\n", teacher_ppl,
               tc.to.eval_seqs > 0 && tc.to.eval_seqs < data.n_eval ? tc.to.eval_seqs : data.n_eval, data.ctx);
        for (int i = 0; i < n_inits; i++) {
            const curve *c = &res[i].st.loss;
            printf("run %d/%d: init %s, layers %s converted\n", i + 1, n_inits, labels[i], mk.conv[i]);
            printf("  final loss %.6f  held-out ppl %.4f  (built in %.1f s, trained in %.1f s)\n", c->xy[2 * c->n - 1],
                   res[i].final_eval_ppl, ro.build_s[i], ro.train_s[i]);
        }
    }
    if (co.json) {
        cJSON *o = cJSON_CreateObject(), *runs = cJSON_AddArrayToObject(o, "runs");
        cJSON_AddStringToObject(o, "model", tc.teacher); /* the teacher, as graft tui --import matches it */
        cJSON *t2t = cJSON_CreateObject();
        for (int i = 0; i < n_inits; i++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "init", labels[i]);
            cJSON_AddStringToObject(r, "converted_layers", mk.conv[i]);
            if (folders || builder) {
                cJSON_AddItemToObject(r, "stage1", stage1_parts_json(mk.stage1[i]));
                if (mk.sigma_fit[i]) cJSON_AddStringToObject(r, "sigma_fit", mk.sigma_fit[i]);
                else cJSON_AddNullToObject(r, "sigma_fit");
            }
            cJSON_AddItemToObject(r, "curve", curve_json(&res[i].st.loss));
            cJSON_AddItemToObject(r, "eval_curve", curve_json(&res[i].st.eval));
            if (tc.recall_every > 0) {
                cJSON_AddItemToObject(r, "recall_curve", curve_json(&res[i].measure));
                cJSON_AddItemToObject(r, "recall_cells", train_cli_recall_cells_json(&tc, i));
            }
            cJSON_AddNumberToObject(r, "final_eval_ppl", res[i].final_eval_ppl);
            /* wall seconds: a resumed run's train_seconds count only this process's part */
            cJSON_AddNumberToObject(r, "build_seconds", ro.build_s[i]);
            cJSON_AddNumberToObject(r, "train_seconds", ro.train_s[i]);
            cJSON_AddItemToArray(runs, r);
            if (ttt[i] >= 0) cJSON_AddNumberToObject(t2t, labels[i], ttt[i]);
            else cJSON_AddNullToObject(t2t, labels[i]);
        }
        cJSON_AddNumberToObject(o, "teacher_eval_ppl", teacher_ppl);
        cJSON_AddNumberToObject(o, "eval_seqs", tc.to.eval_seqs > 0 && tc.to.eval_seqs < data.n_eval ? tc.to.eval_seqs : data.n_eval);
        cJSON_AddNumberToObject(o, "target_loss", target);
        cJSON_AddItemToObject(o, "tokens_to_target", t2t);
        if (ttt[1] > 0) cJSON_AddNumberToObject(o, "ratio", ttt[0] / ttt[1]);
        else cJSON_AddNullToObject(o, "ratio");
        cJSON_AddNumberToObject(o, "smoothing_window", window);
        cJSON_AddStringToObject(o, "converted_layers", mk.conv[0]); /* the baseline's */
        if (!folders) cJSON_AddStringToObject(o, "strategy", tc.strategy);
        if (!folders) cJSON_AddNumberToObject(o, "keep", tc.keep);
        cJSON_AddNumberToObject(o, "tokens_budget", (double)res[0].st.tokens);
        cJSON_AddNumberToObject(o, "lr_mixer", tc.to.lr_mixer);
        cJSON_AddNumberToObject(o, "lr_rest", tc.to.lr_rest);
        cJSON_AddNumberToObject(o, "ctx", tc.to.ctx);
        cJSON_AddNumberToObject(o, "batch", tc.to.batch);
        cJSON_AddNumberToObject(o, "accum", tc.to.accum);
        cJSON_AddStringToObject(o, "data", data.sampled ? "teacher-sampled" : tc.data);
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
    } else {
        printf("target loss %.6f (baseline %s at the end, trailing mean of %d steps)\n", target, labels[0], window);
        for (int i = 0; i < n_inits; i++) {
            if (ttt[i] >= 0) printf("  %-18s reaches it after %.0f tokens\n", labels[i], ttt[i]);
            else printf("  %-18s does not reach it within %ld tokens\n", labels[i], res[i].st.tokens);
        }
        if (ttt[1] > 0) printf("tokens-to-target ratio %s / %s = %.3f\n", labels[0], labels[1], ttt[0] / ttt[1]);
        else printf("tokens-to-target ratio: undefined (%s never reached the target)\n", labels[1]);
    }
    rc = 0;
    goto cleanup;
out:
    rc = cli_fail("race");
cleanup:
    if (train_cli_recall_close(&tc) != 0 && rc == 0) rc = cli_fail("race");
    race_outcome_free(&ro);
    train_data_free(&data);
    tf_free(&tt);
    model_free(&teacher);
    return rc;
}
