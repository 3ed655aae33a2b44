/* Unit tests: graft tui --import (src/workbench/import_runs.c) on hand-made
 * JSON of each kind that graft ablate / race / stats --json write: the rows,
 * curves and statistics that land under the teacher the file names, marked
 * with the file; files refused whole (one line naming the file and the field,
 * nothing changed); a teacher's entry made, matched by file name, adopted when
 * its file loads; the session keeping imported rows; the best-variant line;
 * the Results screen's column, footer and g on an imported row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "keys.h"
#include "persist/persist.h"
#include "ui.h"
#include "workbench/best_variant.h"
#include "workbench/import_runs.h"
#include "workbench/result_request.h"
#include "workbench/session.h"
#include "wb_test_util.h"

static char dir[64];

static const char *write_file(const char *name, const char *text) {
    static char path[8][256];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, 256, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/graft_import_XXXXXX");
    assert_non_null(mkdtemp(dir));
    /* no teachers' cache: every teacher named here is "not on this machine" */
    setenv("GRAFT_TEACHERS", dir, 1);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* An ablation of a 4-layer teacher at 50 %: the paper's method, a Stage 1 subset better than it, align-only. */
#define ABLATE_JSON                                                                                                  \
    "{\"teacher_ppl\": 12.5, \"rows\": ["                                                                           \
    "{\"strategy\": \"uniform\", \"keep\": 0.5, \"kept_layers\": [0, 2], \"init\": \"random\", \"stage1\": [],"     \
    " \"half_life_override\": null, \"sigma_fit\": null, \"ppl\": 90.0, \"half_life\": {\"mean\": 40, \"median\": 12, \"max\": 400}},"  \
    "{\"strategy\": \"uniform\", \"keep\": 0.5, \"kept_layers\": [0, 2], \"init\": \"taylor-calibrate\","           \
    " \"stage1\": [\"decay\", \"beta\", \"sigma\", \"gate\"], \"half_life_override\": null, \"sigma_fit\": \"reference\", \"ppl\": 77.4}," \
    "{\"strategy\": \"uniform\", \"keep\": 0.5, \"kept_layers\": [0, 2], \"init\": \"taylor-calibrate\","           \
    " \"stage1\": [\"decay\", \"beta\", \"gate\"], \"half_life_override\": null, \"sigma_fit\": null, \"ppl\": 54.1}," \
    "{\"strategy\": \"uniform\", \"keep\": 0.5, \"kept_layers\": [0, 2], \"init\": \"align-only\", \"stage1\": [],"  \
    " \"half_life_override\": null, \"sigma_fit\": null, \"ppl\": 60.0}],"                                          \
    " \"meta\": {\"model\": \"/far/away/teacher-a.gguf\", \"eval\": \"/data/gutenberg-60.txt\", \"split\": {\"ctx\": 256, \"eval_begin\": 1000, \"eval_end\": 17384},"   \
    " \"sigma_fits\": [\"reference\"], \"stage2_steps\": 300, \"keep_best\": \"train\", \"decay_distance\": \"all\", \"seed\": 1},"  \
    " \"memory\": {\"device\": \"cuda:0 NVIDIA H200 (bf16)\"}}"

static void ablate_rows(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    const char *path = write_file("ablate.json", ABLATE_JSON);
    import_report rep;
    assert_int_equal(import_run_file(&st, path, &rep), 0);
    assert_int_equal(rep.kind, IMPORT_ABLATE);
    assert_int_equal(rep.rows, 4);
    assert_true(rep.created);
    assert_false(rep.here);
    teacher_state *t = rep.teacher;
    assert_non_null(t);
    assert_string_equal(t->name, "teacher-a.gguf");
    assert_string_equal(t->key, "/far/away/teacher-a.gguf");
    assert_int_equal(t->n_results, 4);
    const result_row *r = &t->results[2];
    assert_int_equal(r->kind, RUN_ABLATE);
    assert_string_equal(r->init, "taylor-calibrate");
    assert_string_equal(r->init_detail, "stage1 -sigma"); /* the workbench's short form: all but sigma */
    assert_int_equal(r->stage1.parts, STAGE1_DECAY | STAGE1_BETA | STAGE1_GATE);
    assert_true(fabs(r->ppl - 54.1) < 1e-12);
    assert_int_equal(r->stage2_steps, 300);
    assert_int_equal(r->eval_windows, 64); /* (17384 - 1000) / 256 */
    assert_string_equal(r->device, "cuda:0");
    assert_int_equal(r->source_row, 3);
    assert_non_null(strstr(r->source, "/ablate.json"));
    assert_string_equal(t->results[1].init_detail, "stage1 all"); /* the reference fit: nothing to add */
    assert_int_equal(t->results[0].stage2_steps, 0);                /* random runs no Stage 2 */
    assert_true(fabs(t->results[0].hl_max - 400) < 1e-12);
    assert_true(fabs(t->teacher_ppl - 12.5) < 1e-12);
    /* the status line names the file, the teacher and that it is not open */
    char line[512];
    import_report_line(&rep, &st, line, sizeof line);
    assert_non_null(strstr(line, "4 ablate rows from ablate.json for teacher-a.gguf"));
    assert_non_null(strstr(line, "not open"));
    /* the same file again replaces its rows */
    assert_int_equal(import_run_file(&st, path, &rep), 0);
    assert_int_equal(t->n_results, 4);
    assert_int_equal(st.n_teachers, 1);
    /* the best variant: the subset beats the paper's method by 30.1 % */
    best_variant bv;
    assert_true(best_variant_find(t, &bv));
    assert_string_equal(t->results[bv.best].init_detail, "stage1 -sigma");
    assert_string_equal(t->results[bv.base].init_detail, "stage1 all");
    assert_true(fabs(bv.change - (54.1 - 77.4) / 77.4) < 1e-12);
    best_variant_line(t, line, sizeof line);
    assert_non_null(strstr(line, "taylor-calibrate [decay,beta,gate] ppl 54.10 vs taylor-calibrate 77.40 (-30.1 %)"));
    assert_non_null(strstr(line, "(imported from ablate.json)"));
    assert_non_null(strstr(line, "best measured here (uniform 50%, gutenberg-60 w64): "));
    app_state_free(&st);
}

/* The Stage 1 component table of an older graft (no sigma_fit anywhere: the scaled fit), heldout keep-best. */
static void component_rows_old_fit(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    const char *path = write_file(
        "components.json",
        "{\"teacher_ppl\": 30, \"rows\": ["
        "{\"strategy\": \"uniform\", \"keep\": 0.25, \"kept_layers\": [0], \"init\": \"taylor-calibrate\", \"stage1\": [],"
        " \"half_life_override\": null, \"ppl\": 120},"
        "{\"strategy\": \"uniform\", \"keep\": 0.25, \"kept_layers\": [0], \"init\": \"taylor-calibrate\","
        " \"stage1\": [\"decay\", \"beta\", \"sigma\", \"gate\"], \"half_life_override\": null, \"ppl\": 100},"
        "{\"strategy\": \"uniform\", \"keep\": 0.25, \"kept_layers\": [0], \"init\": \"taylor-calibrate\","
        " \"stage1\": [\"decay\"], \"half_life_override\": 32, \"ppl\": 110}],"
        " \"meta\": {\"model\": \"org/teacher-b\", \"stage2_steps\": 20, \"keep_best\": \"heldout\", \"decay_distance\": \"all\"}}");
    import_report rep;
    assert_int_equal(import_run_file(&st, path, &rep), 0);
    teacher_state *t = rep.teacher;
    assert_string_equal(t->name, "teacher-b");
    assert_string_equal(t->results[0].init_detail, "stage1 none");
    assert_string_equal(t->results[1].init_detail, "stage1 all, sigma scaled");
    assert_string_equal(t->results[2].init_detail, "stage1 decay (half-life 32)");
    assert_true(fabs(t->results[2].stage1.half_life - 32) < 1e-12);
    char cmd[1600]; /* the command as it ran there: the scaled fit said */
    result_command(&t->results[1], t->model_arg, cmd, sizeof cmd);
    assert_non_null(strstr(cmd, "graft ablate 'org/teacher-b'"));
    assert_non_null(strstr(cmd, " --keep-best heldout "));
    assert_non_null(strstr(cmd, " --sigma-fit scaled "));
    char label[96];
    best_variant_label(&t->results[2], label, sizeof label);
    assert_string_equal(label, "taylor-calibrate [decay, half-life 32]");
    assert_int_equal(t->results[2].keep_best_heldout, 1);
    /* only the scaled fit's paper method is there: it is the base, and it measured best */
    char line[512];
    best_variant_line(t, line, sizeof line);
    assert_non_null(strstr(line, "taylor-calibrate [sigma scaled], the paper's method, ppl 100.00"));
    assert_non_null(strstr(line, "(+10.0 %)"));
    app_state_free(&st);
}

/* stats first (the teacher's shape), then a race from student folders (keep from the converted layers) */
static void stats_then_race(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    char stats[4096] = "{\"model\": \"/far/away/teacher-c.gguf\", \"sequences\": 2, \"ctx\": 64, \"layers\": [";
    for (int l = 0; l < 4; l++) {
        size_t at = strlen(stats);
        snprintf(stats + at, sizeof stats - at, "%s{\"layer\": %d, \"heads\": [", l ? "," : "", l);
        for (int h = 0; h < 2; h++) {
            at = strlen(stats);
            snprintf(stats + at, sizeof stats - at,
                     "%s{\"head\": %d, \"mean_distance\": %d.5, \"entropy\": 1, \"concentration\": 0.5, \"output_rms\": 0.1,"
                     " \"mean_distance_no_sink\": %d, \"sink_share\": 0.25}",
                     h ? "," : "", h, 10 * l + h, 10 * l + h);
        }
        strcat(stats, "]}");
    }
    strcat(stats, "]}");
    import_report rep;
    assert_int_equal(import_run_file(&st, write_file("stats.json", stats), &rep), 0);
    teacher_state *t = rep.teacher;
    assert_int_equal(rep.kind, IMPORT_STATS);
    assert_int_equal(t->n_layers, 4);
    assert_int_equal(t->n_heads, 2);
    int init = teacher_init_index(t, "teacher");
    assert_true(fabs(teacher_metric(t, init, MET_MEAN_DIST)[3 * 2 + 1] - 31.5) < 1e-12);
    assert_true(fabs(teacher_metric(t, init, MET_SINK)[5] - 0.25) < 1e-12);
    assert_non_null(strstr(t->stats_source, "/stats.json"));
    assert_string_equal(t->stats_corpus, ""); /* no corpus of this session: a load does not recompute over them */
    /* a race of three student folders, without "model": the ablate JSON beside it names the teacher */
    char sub[128];
    snprintf(sub, sizeof sub, "%s/runs", dir);
    mkdir(sub, 0777);
    write_file("runs/ablate.json", "{\"rows\": [], \"meta\": {\"model\": \"/other/place/teacher-c.gguf\"}}");
    const char *race = write_file(
        "runs/race.json",
        "{\"runs\": ["
        "{\"init\": \"random\", \"converted_layers\": \"as in the student folder\", \"stage1\": [], \"sigma_fit\": null,"
        " \"curve\": [[100, 5.0], [200, 3.0], [300, 2.0]], \"final_eval_ppl\": 20.0},"
        "{\"init\": \"taylor-calibrate\", \"converted_layers\": \"as in the student folder\","
        " \"stage1\": [\"decay\", \"beta\", \"sigma\", \"gate\"], \"sigma_fit\": \"reference\","
        " \"curve\": [[100, 3.0], [200, 2.0], [300, 1.5]], \"final_eval_ppl\": 15.0},"
        "{\"init\": \"taylor-calibrate[decay,beta,gate]\", \"converted_layers\": \"as in the student folder\","
        " \"stage1\": [\"decay\", \"beta\", \"gate\"], \"sigma_fit\": null,"
        " \"curve\": [[50, 2.5], [150, 1.9]], \"final_eval_ppl\": 14.0}],"
        " \"teacher_eval_ppl\": 10.0, \"eval_seqs\": 4, \"target_loss\": 2.0,"
        " \"tokens_to_target\": {\"random\": 300, \"taylor-calibrate\": 200, \"taylor-calibrate[decay,beta,gate]\": 150},"
        " \"ratio\": 1.5, \"smoothing_window\": 1, \"converted_layers\": \"as in the student folder\", \"tokens_budget\": 300,"
        " \"lr_mixer\": 0.001, \"lr_rest\": 0.0001, \"ctx\": 2048, \"batch\": 4, \"accum\": 1, \"data\": \"/x/gutenberg-60.txt\"}");
    assert_int_equal(import_run_file(&st, race, &rep), 0);
    assert_ptr_equal(rep.teacher, t); /* matched by file name */
    assert_string_equal(rep.model, "/other/place/teacher-c.gguf");
    assert_int_equal(rep.curves, 3);
    assert_int_equal(t->n_results, 3);
    const result_row *r = &t->results[2];
    assert_int_equal(r->kind, RUN_RACE);
    assert_string_equal(r->init_detail, "stage1 -sigma");
    assert_true(fabs(r->tokens_to_target - 150) < 1e-12);
    assert_true(fabs(r->ratio - 2.0) < 1e-12); /* random's 300 / its 150 */
    assert_true(isnan(r->keep)); /* student folders: the JSON does not say which layers */
    assert_string_equal(r->strategy, "folder");
    assert_true(t->race.has_target && fabs(t->race.target - 2.0) < 1e-12);
    char cmd[1600];
    result_command(r, t->model_arg, cmd, sizeof cmd);
    assert_non_null(strstr(cmd, "graft race '/far/away/teacher-c.gguf' STUDENT_DIR... --data '/x/gutenberg-60.txt' "));
    assert_non_null(strstr(cmd, " --ctx 2048 "));
    assert_non_null(strstr(cmd, "   # the JSON does not name the student folders"));
    assert_null(strstr(cmd, "--inits")); /* folders carry their own init */
    assert_non_null(strstr(t->race.reached, "random 300, taylor-calibrate 200, taylor-calibrate[decay,beta,gate] 150"));
    assert_true(fabs(r->teacher_ppl - 10.0) < 1e-12); /* the teacher on the same held-out sequences */
    assert_int_equal(t->race.eval_seqs, 4);
    assert_int_equal(t->race.eval_ctx, 2048);
    assert_true(fabs(t->race.teacher_ppl - 10.0) < 1e-12 && fabs(t->race.ppl[1] - 15.0) < 1e-12);
    assert_string_equal(t->race.labels[0], "random");
    loss_series *s = teacher_series(t, "race/taylor-calibrate[decay,beta,gate]");
    assert_int_equal(s->n, 2);
    assert_true(fabs(s->y[1] - 1.9) < 1e-12);
    /* graft halflife --json of a student: half-lives under its init on 3 Stats (kept layers have none) */
    const char *hl = write_file(
        "runs/halflife.json",
        "{\"student\": \"/x/student-tc\", \"thresholds\": {}, \"init\": \"taylor-calibrate\", \"decay_distance\": \"no-sink\","
        " \"heads\": [{\"layer\": 1, \"head\": 0, \"idle\": 12.5, \"p50\": 3.0}, {\"layer\": 3, \"head\": 1, \"idle\": 40,"
        " \"p50\": null}]}");
    import_kind kind;
    assert_int_equal(import_file_kind(hl, &kind), 0);
    assert_int_equal(kind, IMPORT_HALFLIFE);
    assert_int_equal(import_run_file(&st, hl, &rep), 0);
    assert_ptr_equal(rep.teacher, t);
    assert_string_equal(rep.init, "taylor-calibrate no-sink");
    int hi = teacher_init_index(t, "taylor-calibrate no-sink");
    const double *idle = teacher_metric(t, hi, MET_HALFLIFE_IDLE), *med = teacher_metric(t, hi, MET_HALFLIFE_DATA);
    assert_true(fabs(idle[1 * 2 + 0] - 12.5) < 1e-12 && fabs(med[1 * 2 + 0] - 3.0) < 1e-12);
    assert_true(fabs(idle[3 * 2 + 1] - 40) < 1e-12 && isnan(med[3 * 2 + 1]));
    assert_true(isnan(idle[0]) && isnan(idle[2 * 2 + 1])); /* layers it did not convert */
    const char *hl_wide = write_file("runs/halflife_wide.json",
                                     "{\"thresholds\": {}, \"init\": \"random\", \"heads\": [{\"layer\": 1, \"head\": 5, \"idle\": 1}]}");
    assert_int_equal(import_run_file(&st, hl_wide, &rep), -1);
    assert_non_null(strstr(gf_last_error(), "halflife_wide.json: names layer 1 / head 5, but teacher-c.gguf has 4 layers x 2 heads"));
    /* while a race of this teacher runs, another race's curves do not go under it */
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    assert_true(wbt_start(&st, &jr, "race", t) > 0);
    assert_int_equal(import_run_file(&st, race, &rep), -1);
    assert_non_null(strstr(gf_last_error(), "race.json: a race job of teacher-c.gguf is running"));
    wbt_finish(&st, &jr);
    job_runner_free(&jr);
    assert_int_equal(import_run_file(&st, race, &rep), 0);
    /* statistics of another shape are not this teacher's */
    const char *small = write_file("stats_small.json",
                                   "{\"model\": \"teacher-c.gguf\", \"layers\": [{\"heads\": [{\"mean_distance\": 1, "
                                   "\"entropy\": 1, \"concentration\": 1, \"output_rms\": 1}]}]}");
    assert_int_equal(import_run_file(&st, small, &rep), -1);
    assert_non_null(strstr(gf_last_error(), "1 layers x 1 heads, but teacher-c.gguf has 4 x 2"));
    app_state_free(&st);
}

/* Each refusal: one line with the file and the field, and nothing changed. */
static void malformed_refused(void **state) {
    (void)state;
    static const struct {
        const char *name, *text, *says;
    } bad[] = {
        {"notjson.json", "{\"rows\": [", "notjson.json: not valid JSON"},
        {"other.json", "{\"hello\": 1}", "other.json: not the JSON of graft ablate, race, stats or halflife"},
        {"ppl.json",
         "{\"rows\": [{\"strategy\": \"uniform\", \"keep\": 0.5, \"kept_layers\": [0], \"init\": \"random\", \"ppl\": 3},"
         "{\"strategy\": \"uniform\", \"keep\": 0.5, \"kept_layers\": [0], \"init\": \"random\", \"ppl\": \"high\"}],"
         " \"meta\": {\"model\": \"m.gguf\"}}",
         "ppl.json: rows[1].ppl should be a number"},
        {"init.json",
         "{\"rows\": [{\"strategy\": \"uniform\", \"keep\": 0.5, \"kept_layers\": [0], \"init\": \"magic\", \"ppl\": 3}],"
         " \"meta\": {\"model\": \"m.gguf\"}}",
         "init.json: rows[0].init is not one of the six initializations"},
        {"nomodel.json", "{\"rows\": [{\"strategy\": \"uniform\"}], \"meta\": {}}", "nomodel.json: meta.model is missing"},
        {"parts.json",
         "{\"rows\": [{\"strategy\": \"uniform\", \"keep\": 0.5, \"kept_layers\": [0], \"init\": \"taylor-calibrate\","
         " \"stage1\": [\"decay\", \"wings\"], \"ppl\": 3}], \"meta\": {\"model\": \"m.gguf\"}}",
         "parts.json: rows[0].stage1 names an unknown Stage 1 component"},
        {"curve.json",
         "{\"model\": \"m.gguf\", \"runs\": [{\"init\": \"random\", \"curve\": [[1, 2], [3]]}, {\"init\": \"random\", \"curve\": []}],"
         " \"target_loss\": 1, \"tokens_budget\": 10, \"tokens_to_target\": {}}",
         "curve.json: runs[0].curve[1] should be a pair of numbers"},
        {"ttt.json",
         "{\"model\": \"m.gguf\", \"runs\": [{\"init\": \"random\", \"curve\": []}, {\"init\": \"taylor-calibrate\", \"curve\": []}],"
         " \"target_loss\": 1, \"tokens_budget\": 10, \"tokens_to_target\": {\"random\": 5}}",
         "ttt.json: tokens_to_target[\"taylor-calibrate\"] should be a number of tokens or null"},
        {"heads.json",
         "{\"model\": \"m.gguf\", \"layers\": [{\"heads\": [{\"mean_distance\": 1, \"entropy\": 1, \"concentration\": 1,"
         " \"output_rms\": 1}]}, {\"heads\": []}]}",
         "heads.json: layers[1].heads should be a list of 1 heads"},
        {"rms.json", "{\"model\": \"m.gguf\", \"layers\": [{\"heads\": [{\"mean_distance\": 1, \"entropy\": 1, \"concentration\": 1}]}]}",
         "rms.json: layers[0].heads[0].output_rms is missing"},
    };
    app_state st;
    app_state_init(&st);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = write_file(bad[i].name, bad[i].text);
        import_report rep;
        assert_int_equal(import_run_file(&st, path, &rep), -1);
        const char *err = gf_last_error();
        if (!strstr(err, bad[i].says)) fail_msg("%s: got '%s', want '%s'", bad[i].name, err, bad[i].says);
        assert_null(strchr(err, '\n')); /* one line */
        assert_int_equal(st.n_teachers, 0);
    }
    /* half-lives for a teacher whose shape is not known */
    const char *hl = write_file("hl_noshape.json", "{\"model\": \"/far/unknown.gguf\", \"thresholds\": {}, \"init\": \"random\","
                                                   " \"heads\": [{\"layer\": 1, \"head\": 0, \"idle\": 1}]}");
    import_report rep0;
    assert_int_equal(import_run_file(&st, hl, &rep0), -1);
    assert_non_null(strstr(gf_last_error(), "hl_noshape.json: unknown.gguf's shape (layers x heads) is not known here"));
    assert_int_equal(st.n_teachers, 0);
    /* ... unless the student's graft convert --json lies beside it: its teacher and that teacher's shape */
    char cdir[128];
    snprintf(cdir, sizeof cdir, "%s/conv", dir);
    mkdir(cdir, 0777);
    write_file("conv/convert-best.json", "{\"out\": \"/w/best-subset\", \"student\": {\"teacher\": \"/far/teacher-d.gguf\","
                                         " \"gdn_layers\": [1, 3], \"attention_layers\": [0, 2], \"gdn\": {\"num_heads\": 3}}}");
    const char *hl2 = write_file("conv/halflife-best.json", "{\"student\": \"/w/best-subset\", \"thresholds\": {}, \"init\":"
                                 " \"taylor-calibrate\", \"heads\": [{\"layer\": 3, \"head\": 2, \"idle\": 7, \"p50\": 5}]}");
    assert_int_equal(import_run_file(&st, hl2, &rep0), 0);
    assert_string_equal(rep0.teacher->name, "teacher-d.gguf");
    assert_int_equal(rep0.teacher->n_layers, 4);
    assert_int_equal(rep0.teacher->n_heads, 3);
    assert_string_equal(rep0.init, "taylor-calibrate (best-subset)"); /* apart from a plain taylor-calibrate student */
    int bi = teacher_init_index(rep0.teacher, "taylor-calibrate (best-subset)");
    assert_true(fabs(teacher_metric(rep0.teacher, bi, MET_HALFLIFE_IDLE)[3 * 3 + 2] - 7) < 1e-12);
    /* the same when an ablate import made the teacher's entry first (no shape yet) */
    app_state_free(&st);
    app_state_init(&st);
    write_file("conv/ablate.json", "{\"rows\": [{\"strategy\": \"uniform\", \"keep\": 0.5, \"kept_layers\": [0, 2], \"init\":"
                                   " \"random\", \"ppl\": 9}], \"meta\": {\"model\": \"/far/teacher-d.gguf\"}}");
    char ab[256];
    snprintf(ab, sizeof ab, "%s/conv/ablate.json", dir);
    assert_int_equal(import_run_file(&st, ab, &rep0), 0);
    assert_int_equal(rep0.teacher->n_layers, 0);
    assert_int_equal(import_run_file(&st, hl2, &rep0), 0);
    assert_int_equal(rep0.teacher->n_layers, 4);
    assert_int_equal(st.n_teachers, 1);
    app_state_free(&st);
    app_state_init(&st);
    /* a race that names no teacher, alone in its folder */
    char sub[128];
    snprintf(sub, sizeof sub, "%s/alone", dir);
    mkdir(sub, 0777);
    const char *path = write_file("alone/race.json", "{\"runs\": [{\"init\": \"random\", \"curve\": []}, {\"init\": \"random\","
                                                     " \"curve\": []}], \"target_loss\": 1, \"tokens_budget\": 10,"
                                                     " \"tokens_to_target\": {\"random\": 5}}");
    import_report rep;
    assert_int_equal(import_run_file(&st, path, &rep), -1);
    assert_non_null(strstr(gf_last_error(), "race.json: \"model\" is missing"));
    assert_int_equal(import_run_file(&st, "/nonexistent/run.json", &rep), -1);
    assert_non_null(strstr(gf_last_error(), "/nonexistent/run.json: no such file"));
    assert_int_equal(st.n_teachers, 0);
    app_state_free(&st);
}

/* The session keeps imported rows with their file; opening the file's teacher later adopts the entry. */
/* A file graft wrote, read in place from the repository (GRAFT_ROOT, else the working folder). */
static const char *repo_file(const char *rel) {
    static char path[4][1024];
    static int next;
    const char *root = getenv("GRAFT_ROOT");
    char *p = path[next++ % 4];
    snprintf(p, 1024, "%s/%s", root ? root : ".", rel);
    return p;
}

static cJSON *read_json(const char *path) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    assert_true(n > 0 && n < sizeof text - 1);
    text[n] = 0;
    cJSON *o = cJSON_Parse(text);
    assert_non_null(o);
    return o;
}

/* The Stage 1 sets graft ablate --sigma-fit reference,gated wrote (docs/runs/stage1-gated/): every row's
 * fit as its JSON says (init detail, command), kept through the session file. */
/* A slice whose text an older graft did not record is matched by the teacher's perplexity on it: the 1.5B
 * runs of sessions 1 and 5 (docs/paper-1.5b.md) compare on one line; a file whose teacher scored another
 * perplexity (another slice) does not join, however good its rows. */
static void unrecorded_text_matched_by_teacher_ppl(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    static const char *const files[] = {"docs/runs/qwen2.5-coder-1.5b-h200/stage1_components.json",
                                        "docs/runs/qwen2.5-coder-1.5b-h200/stage1_components_gated.json"};
    import_report rep;
    char line[512];
    assert_int_equal(import_run_file(&st, repo_file(files[0]), &rep), 0);
    teacher_state *t = rep.teacher;
    assert_string_equal(t->results[0].corpus, IMPORT_TEXT_NOT_RECORDED);
    best_variant_line(t, line, sizeof line);
    assert_non_null(strstr(line, "taylor-calibrate [gate] ppl 41.04 vs taylor-calibrate 48.97"));
    assert_int_equal(import_run_file(&st, repo_file(files[1]), &rep), 0);
    assert_ptr_equal(rep.teacher, t);
    best_variant_line(t, line, sizeof line);
    /* the gated fit without the decay, from the second file, against the paper's method of the first */
    assert_non_null(strstr(line, "best measured here (uniform 50%, gutenberg-60 w64): "));
    assert_non_null(strstr(line, "taylor-calibrate [beta,sigma,gate, sigma gated] ppl 40.54 vs taylor-calibrate 48.97 (-17.2 %)"));
    /* a recorded text whose teacher perplexity differs from the unrecorded one's: another slice, not compared */
    const char *other = write_file(
        "other_slice.json",
        "{\"teacher_ppl\": 29.5, \"rows\": ["
        "{\"strategy\": \"uniform\", \"keep\": 0.5, \"kept_layers\": [0], \"init\": \"taylor-calibrate\","
        " \"stage1\": [\"gate\"], \"half_life_override\": null, \"sigma_fit\": null, \"ppl\": 1.5}],"
        " \"meta\": {\"model\": \"/tmp/ship/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf\", \"eval\": \"/data/gutenberg-60.txt\","
        " \"split\": {\"ctx\": 256, \"eval_begin\": 2894922, \"eval_end\": 2911306}, \"stage2_steps\": 300,"
        " \"keep_best\": \"train\", \"decay_distance\": \"all\", \"seed\": 1}}");
    assert_int_equal(import_run_file(&st, other, &rep), 0);
    assert_ptr_equal(rep.teacher, t);
    best_variant_line(t, line, sizeof line);
    assert_null(strstr(line, "ppl 1.50"));
    assert_non_null(strstr(line, "ppl 40.54 vs taylor-calibrate 48.97"));
    app_state_free(&st);
}

static void gated_fit_rows(void **state) {
    (void)state;
    static const char *const files[] = {"docs/runs/stage1-gated/stories260k-stage1-sets.json",
                                        "docs/runs/stage1-gated/stories260k-stage1-subsets.json",
                                        "docs/runs/stage1-gated/smollm2-135m-stage1-sets.json"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        app_state st;
        app_state_init(&st);
        const char *path = repo_file(files[f]);
        import_report rep;
        assert_int_equal(import_run_file(&st, path, &rep), 0);
        teacher_state *t = rep.teacher;
        cJSON *root = read_json(path);
        const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "rows"), *o;
        assert_int_equal(t->n_results, cJSON_GetArraySize(rows));
        int i = 0, gated = 0;
        char cmd[1600];
        cJSON_ArrayForEach(o, rows) {
            const result_row *r = &t->results[i++];
            const cJSON *fit = cJSON_GetObjectItemCaseSensitive(o, "sigma_fit");
            result_command(r, t->model_arg, cmd, sizeof cmd);
            if (cJSON_IsString(fit) && !strcmp(fit->valuestring, "gated")) {
                gated++;
                assert_int_equal(r->stage1.sigma_fit, SIGMA_FIT_GATED);
                assert_non_null(strstr(r->init_detail, ", sigma gated"));
                assert_non_null(strstr(cmd, " --sigma-fit gated "));
            } else { /* the reference fit, or no sigma among the components: nothing to say */
                assert_int_equal(cJSON_IsString(fit) || !(r->stage1.parts & STAGE1_SIGMA), 1);
                assert_null(strstr(r->init_detail, "sigma gated"));
                assert_null(strstr(cmd, "--sigma-fit"));
            }
        }
        assert_true(gated > 0);
        char line[512];
        best_variant_line(t, line, sizeof line);
        assert_non_null(strstr(line, " vs taylor-calibrate ")); /* the base: the paper's method, the reference fit */
        if (f != 1) assert_non_null(strstr(line, "sigma gated]")); /* a gated row measured best there */
        /* the session file keeps each row's fit: the same commands after a save and a load */
        char spath[256];
        snprintf(spath, sizeof spath, "%s/session_gated.json", dir);
        assert_int_equal(session_write(&st, spath), 0);
        app_state back;
        app_state_init(&back);
        assert_int_equal(session_read(&back, spath), 0);
        const teacher_state *b = app_find_teacher(&back, t->key);
        assert_non_null(b);
        assert_int_equal(b->n_results, t->n_results);
        for (int k = 0; k < t->n_results; k++) {
            char again[1600];
            result_command(&t->results[k], t->model_arg, cmd, sizeof cmd);
            result_command(&b->results[k], b->model_arg, again, sizeof again);
            assert_string_equal(again, cmd);
            assert_string_equal(b->results[k].init_detail, t->results[k].init_detail);
            assert_int_equal(b->results[k].stage1.sigma_fit, t->results[k].stage1.sigma_fit);
        }
        cJSON_Delete(root);
        app_state_free(&back);
        app_state_free(&st);
    }
    /* the race of two folders graft race made (reference, gated): the second row says its fit. The file
     * names no teacher (a graft before race JSON did) and its folder holds ablate JSON of two teachers, so
     * it goes next to one naming stories260K, as `graft tui --import` wants it */
    app_state st;
    app_state_init(&st);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/gated", dir);
    mkdir(sub, 0777);
    write_file("gated/ablate.json", "{\"rows\": [], \"meta\": {\"model\": \"/work/shared/models/tinyllamas/stories260K/stories260K.bin\"}}");
    cJSON *graft_race = read_json(repo_file("docs/runs/stage1-gated/stories260k-race.json"));
    assert_null(cJSON_GetObjectItemCaseSensitive(graft_race, "model"));
    char *text = cJSON_Print(graft_race);
    const char *race = write_file("gated/race.json", text);
    free(text);
    cJSON_Delete(graft_race);
    import_report rep;
    assert_int_equal(import_run_file(&st, race, &rep), 0);
    const teacher_state *t = rep.teacher;
    assert_int_equal(t->n_results, 2);
    assert_string_equal(t->results[0].init_detail, "stage1 all");
    assert_string_equal(t->results[1].init_detail, "stage1 all, sigma gated");
    char cmd[1600];
    result_command(&t->results[1], t->model_arg, cmd, sizeof cmd);
    assert_null(strstr(cmd, "--sigma-fit")); /* the folders were built with it: the race builds nothing */
    assert_null(strstr(cmd, "--inits"));
    assert_non_null(strstr(cmd, "# the JSON does not name the student folders"));
    app_state_free(&st);
}

/* The 1.5B race of 2026-12-03 was written by a graft that scored a run's first steps on shorter windows:
 * its file says the gated student reached the target after 114,688 tokens; graft's rule now (full windows)
 * says 3,907,584, and the import shows that number and what the file said. */
static void race_tokens_recomputed(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    import_report rep;
    assert_int_equal(import_run_file(&st, repo_file("docs/runs/qwen2.5-coder-1.5b-h200/race_lr1e-3_5000000.json"), &rep), 0);
    const teacher_state *t = rep.teacher;
    assert_int_equal(t->n_results, 4);
    assert_true(t->results[0].tokens_to_target == 4997120 && t->results[1].tokens_to_target == 4448256);
    assert_true(t->results[2].tokens_to_target == 3907584 && t->results[3].tokens_to_target == 4579328);
    assert_true(fabs(t->results[2].ratio - 4997120.0 / 3907584.0) < 1e-12);
    assert_non_null(strstr(t->race.reached, "recomputed from the curves; the file said 114688"));
    assert_non_null(strstr(t->race.reached, "taylor-calibrate[decay,beta,sigma,gate,sigma gated] 3907584"));
    app_state_free(&st);
}

/* A race that built its students: each row's command is that race, its --inits included. */
static void race_rows_repeat_their_inits(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    import_report rep;
    /* the committed SmolLM2 race: random, taylor-calibrate, graft race's default, which goes unsaid */
    assert_int_equal(import_run_file(&st, repo_file("docs/runs/smollm2-135m-h200/race_lr1e-4_20M.json"), &rep), 0);
    char cmd[1600];
    assert_int_equal(rep.teacher->n_results, 2);
    for (int k = 0; k < rep.teacher->n_results; k++) {
        assert_string_equal(rep.teacher->results[k].race_inits, RACE_DEFAULT_INITS);
        result_command(&rep.teacher->results[k], rep.teacher->model_arg, cmd, sizeof cmd);
        assert_non_null(strstr(cmd, "graft race "));
        assert_null(strstr(cmd, "--inits"));
    }
    /* three inits, Stage 1 options in the label */
    const char *race = write_file(
        "race3.json",
        "{\"model\": \"/far/away/teacher-r.gguf\", \"runs\": ["
        "{\"init\": \"random\", \"converted_layers\": \"1\", \"stage1\": [], \"sigma_fit\": null,"
        " \"curve\": [[100, 5.0], [200, 3.0]], \"final_eval_ppl\": 20.0},"
        "{\"init\": \"taylor-only[decay,beta,gate]\", \"converted_layers\": \"1\", \"stage1\": [\"decay\", \"beta\", \"gate\"],"
        " \"sigma_fit\": null, \"curve\": [[100, 3.0], [200, 2.0]], \"final_eval_ppl\": 15.0},"
        "{\"init\": \"taylor-calibrate[decay,beta,gate]\", \"converted_layers\": \"1\", \"stage1\": [\"decay\", \"beta\", \"gate\"],"
        " \"sigma_fit\": null, \"curve\": [[100, 2.5], [200, 1.9]], \"final_eval_ppl\": 14.0}],"
        " \"teacher_eval_ppl\": 10.0, \"eval_seqs\": 4, \"target_loss\": 2.0,"
        " \"tokens_to_target\": {\"random\": 200, \"taylor-only[decay,beta,gate]\": 200, \"taylor-calibrate[decay,beta,gate]\": 150},"
        " \"ratio\": 1.33, \"converted_layers\": \"1\", \"strategy\": \"uniform\", \"keep\": 0.5, \"tokens_budget\": 200,"
        " \"lr_mixer\": 0.001, \"lr_rest\": 0.0001, \"ctx\": 64, \"batch\": 4, \"data\": \"/x/tiny.txt\"}");
    assert_int_equal(import_run_file(&st, race, &rep), 0);
    const teacher_state *t = rep.teacher;
    assert_int_equal(t->n_results, 3);
    assert_string_equal(t->results[0].init_detail, ""); /* random: nothing of Stage 1 to say in its row */
    assert_string_equal(t->results[2].init_detail, "stage1 -sigma");
    for (int k = 0; k < 3; k++) {
        const result_row *r = &t->results[k];
        assert_string_equal(r->race_inits, "random,taylor-only,taylor-calibrate");
        result_command(r, t->model_arg, cmd, sizeof cmd);
        assert_non_null(strstr(cmd, "graft race '/far/away/teacher-r.gguf' --data '/x/tiny.txt' "));
        assert_non_null(strstr(cmd, " --inits random,taylor-only,taylor-calibrate "));
        assert_non_null(strstr(cmd, " --stage1 decay,beta,gate ")); /* the race's, in the random row's command too */
        /* and it parses back to the same request */
        request q, again;
        result_req_text txt;
        assert_int_equal(result_request(r, t->model_arg, &q, &txt), 0);
        assert_int_equal(request_check(&q), 0);
        char line[1600];
        assert_int_equal(request_command(&q, line, sizeof line), 0);
        int argc;
        char **argv;
        assert_int_equal(request_split(line, &argc, &argv), 0);
        assert_int_equal(request_from_command(&again, argc, argv), 0);
        assert_true(request_equal(&q, &again));
        assert_string_equal(again.u.race.inits, "random,taylor-only,taylor-calibrate");
        free(argv);
    }
    /* kept by the session file */
    char spath[256];
    snprintf(spath, sizeof spath, "%s/session_race3.json", dir);
    assert_int_equal(session_write(&st, spath), 0);
    app_state back;
    app_state_init(&back);
    assert_int_equal(session_read(&back, spath), 0);
    const teacher_state *b = app_find_teacher(&back, t->key);
    assert_non_null(b);
    assert_string_equal(b->results[2].race_inits, "random,taylor-only,taylor-calibrate");
    app_state_free(&back);
    app_state_free(&st);
}

static void session_and_adoption(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    import_report rep;
    assert_int_equal(import_run_file(&st, write_file("ablate2.json", ABLATE_JSON), &rep), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/session.json", dir);
    assert_int_equal(session_write(&st, path), 0);
    app_state back;
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), 0);
    teacher_state *t = app_find_teacher(&back, "/far/away/teacher-a.gguf");
    assert_non_null(t);
    assert_int_equal(t->n_results, 4);
    assert_non_null(strstr(t->results[3].source, "/ablate2.json"));
    assert_int_equal(t->results[3].source_row, 4);
    assert_true(import_teacher_has_imports(t));
    /* its file is not here: a session never starts on it; opening it shows the entry, nothing loads */
    assert_true(import_teacher_elsewhere(&back, "/far/away/teacher-a.gguf"));
    assert_true(import_show_teacher(&back, "/far/away/teacher-a.gguf"));
    assert_ptr_equal(app_cur(&back), t);
    assert_false(import_show_teacher(&back, "/far/away/another.gguf"));
    /* the same file name loaded here: the entry becomes that teacher's */
    import_adopt_teacher(&back, "/home/me/models/teacher-a.gguf");
    assert_ptr_equal(app_find_teacher(&back, "/home/me/models/teacher-a.gguf"), t);
    app_state_free(&back);
    app_state_free(&st);
}

static char *row_text(grid *g, int y) {
    static char buf[4096];
    grid_row_text(g, y, buf, sizeof buf);
    return buf;
}

static int find_row(grid *g, const char *needle) {
    for (int y = 0; y < g->h; y++)
        if (strstr(row_text(g, y), needle)) return y;
    return -1;
}

/* Results: the "from" column, the footer's file, g refused on an imported row, I imports a typed path. */
static void results_screen(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    import_report rep;
    assert_int_equal(import_run_file(&st, write_file("ablate3.json", ABLATE_JSON), &rep), 0);
    app_switch(&st, rep.teacher);
    ui_prefs prefs;
    ui_prefs_default(&prefs);
    ui u;
    ui_init(&u, &st, NULL, &prefs, (theme){true, DEPTH_256, 0});
    assert_true(ui_select_screen(&u, "results"));
    grid g;
    grid_init(&g, 200, 30);
    ui_render(&u, &g);
    int hy = find_row(&g, " from");
    if (hy < 0 || find_row(&g, "cuda:0   ablate3.json") <= hy)
        for (int y = 0; y < g.h; y++) fprintf(stderr, "%s\n", row_text(&g, y));
    assert_true(hy > 0);
    assert_true(find_row(&g, "cuda:0   ablate3.json") > hy);
    assert_true(find_row(&g, "best measured here (uniform 50%") > 0);
    assert_true(find_row(&g, "(its row 4), as run there: graft ablate") > hy);
    ui_key(&u, 'g');
    assert_non_null(strstr(u.status, "imported from"));
    assert_non_null(strstr(u.status, "not on this machine"));
    assert_false(u.v.results.box);
    ui_key(&u, 'R'); /* the Recall view likewise: the row's student is not here */
    assert_non_null(strstr(u.status, "R: this row was imported from"));
    assert_false(u.v.results.recall);
    /* I, a path, Enter: the same file again (its rows replaced), said on the status line */
    ui_key(&u, 'I');
    assert_true(u.typing);
    char typed[300];
    snprintf(typed, sizeof typed, "%s/ablate3.json", dir);
    for (const char *p = typed; *p; p++) ui_key(&u, (unsigned char)*p);
    ui_key(&u, UK_ENTER);
    assert_false(u.typing);
    assert_non_null(strstr(u.status, "imported 4 ablate rows from ablate3.json for teacher-a.gguf"));
    assert_int_equal(rep.teacher->n_results, 4);
    /* a bad path: its one line */
    ui_key(&u, 'I');
    for (const char *p = "/nope.json"; *p; p++) ui_key(&u, (unsigned char)*p);
    ui_key(&u, UK_ENTER);
    assert_non_null(strstr(u.status, "/nope.json: no such file"));
    grid_free(&g);
    app_state_free(&st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ablate_rows),       cmocka_unit_test(component_rows_old_fit), cmocka_unit_test(stats_then_race),
        cmocka_unit_test(malformed_refused), cmocka_unit_test(session_and_adoption),
        cmocka_unit_test(gated_fit_rows), cmocka_unit_test(unrecorded_text_matched_by_teacher_ppl), cmocka_unit_test(race_tokens_recomputed), cmocka_unit_test(race_rows_repeat_their_inits),    cmocka_unit_test(results_screen),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
