/* Unit tests: the Plan and Results screens rendered headless as text grids,
 * their keys, the plan arithmetic, typed events routed to the teacher their
 * job ran for, Results columns, sorting, race rows and commands, the session. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <time.h>

#include "core/error.h"
#include "method/ablate.h"
#include "method/evaluate.h"
#include "method/request.h"
#include "keys.h"
#include "persist/persist.h"
#include "select/kv_cost.h"
#include "ui.h"
#include "workbench/session.h"
#include "workbench/result_request.h"
#include "workbench/wb_event.h"
#include "wb_test_util.h"

static const theme utf8_256 = {true, DEPTH_256, 0};
static const theme ascii_mono = {false, DEPTH_MONO, 0};

static char *row(grid *g, int y) {
    static char buf[4096];
    grid_row_text(g, y, buf, sizeof buf);
    return buf;
}

static int find_row(grid *g, const char *needle) {
    for (int y = 0; y < g->h; y++)
        if (strstr(row(g, y), needle)) return y;
    return -1;
}

static ui_prefs prefs;

/* A 28-layer teacher with 12 heads, 2 KV heads of 128 dims, bf16 (2 bytes), current in st. */
static teacher_state *qwen_like(app_state *st) {
    app_state_init(st);
    ui_prefs_default(&prefs);
    teacher_state *t = app_teacher(st, "/models/test-teacher");
    snprintf(t->name, sizeof t->name, "test-teacher");
    snprintf(t->model_arg, sizeof t->model_arg, "/models/test-teacher");
    t->loaded = true;
    teacher_state_set_shape(t, 28, 12);
    t->kv_heads = 2, t->head_dim = 128, t->kv_bytes = 2;
    app_switch(st, t);
    return t;
}

/* The selected row's command under the table: its wrapped lines joined with spaces. */
static const char *command_text(grid *g) {
    static char buf[8192];
    int y = find_row(g, "headless: ");
    buf[0] = 0;
    if (y < 0) return buf;
    snprintf(buf, sizeof buf, "%s", strstr(row(g, y), "headless: ") + 10);
    const char *next = row(g, y + 1);
    while (*next == ' ') next++;
    if (*next && !strstr(next, "hidden at this width")) {
        size_t n = strlen(buf);
        snprintf(buf + n, sizeof buf - n, " %s", next);
    }
    return buf;
}

static void render(ui *u, grid *g, int w, int h) {
    grid_resize(g, w, h);
    ui_render(u, g);
}

static void plan_default_and_cost(void **state) {
    (void)state;
    app_state st;
    teacher_state *t = qwen_like(&st);
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "plan");
    grid g;
    grid_init(&g, 200, 60);
    render(&u, &g, 200, 60);
    /* default: uniform 50 % -> 14 of 28 (layers 0, 2, 4, ...) */
    assert_string_equal(t->strategy, "uniform");
    assert_true(find_row(&g, "strategy [uniform]") >= 0);
    assert_true(find_row(&g, "keep 50% (14 of 28)") >= 0);
    for (int l = 0; l < 28; l++) assert_int_equal(t->kept[l], l % 2 == 0);
    /* 2 * 2 * 128 * 2 bytes * 32768 = 32 MB per layer: 896 MB -> 448 MB + 14 GDN states of 12*128*128*4 = 768 KB each */
    kv_cost c = kv_cost_compute(28, 14, 12, 2, 128, 2, KV_COST_TOKENS);
    assert_true(fabs(c.kv_per_layer - 32.0 * 1024 * 1024) < 1e-6);
    assert_true(fabs(c.gdn_state_per_layer - 768.0 * 1024) < 1e-6);
    assert_true(find_row(&g, "14 of 28 layers keep attention \u00b7 KV cache at 32k tokens: 896 MB \u2192 458 MB (GDN state 10.5 MB)") >= 0);
    /* every layer has a line at 200x60 and no "more" line */
    assert_true(find_row(&g, "   27 \u25a1 GDN") >= 0);
    assert_int_equal(find_row(&g, "more)"), -1);
    grid_free(&g);
    app_state_free(&st);
}

static void plan_keys(void **state) {
    (void)state;
    app_state st;
    teacher_state *t = qwen_like(&st);
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "2");
    grid g;
    grid_init(&g, 80, 24);
    render(&u, &g, 80, 24);
    ui_key(&u, 'r'); /* 50 -> 75 % */
    assert_true(fabs(t->keep_ratio - 0.75) < 1e-12);
    assert_int_equal(teacher_keep_count(t), 21);
    ui_key(&u, 'r'); /* wraps to 25 % */
    assert_true(fabs(t->keep_ratio - 0.25) < 1e-12);
    /* typed: = 1 0 Enter -> 10 % of 28 = round(2.8) = 3 layers: 0, 9, 18 */
    ui_key(&u, '=');
    ui_key(&u, '1');
    ui_key(&u, '0');
    render(&u, &g, 80, 24);
    assert_true(find_row(&g, "keep: 10_ %") >= 0);
    ui_key(&u, UK_ENTER);
    assert_false(u.v.plan.edit);
    assert_int_equal(teacher_keep_count(t), 3);
    int n = 0;
    for (int l = 0; l < 28; l++) n += t->kept[l];
    assert_int_equal(n, 3);
    assert_true(t->kept[0] && t->kept[9] && t->kept[18]);
    /* a bad value is refused with a message, the ratio unchanged */
    ui_key(&u, '=');
    ui_key(&u, '1');
    ui_key(&u, '5');
    ui_key(&u, '0');
    ui_key(&u, UK_ENTER);
    assert_true(fabs(t->keep_ratio - 0.10) < 1e-12);
    assert_non_null(strstr(u.status, "must be in"));
    /* Esc leaves typing without a change; screen keys stay swallowed while typing */
    ui_key(&u, '=');
    ui_key(&u, '3');
    assert_int_equal(u.screen, SCR_PLAN);
    ui_key(&u, UK_ESC);
    assert_false(u.v.plan.edit);
    assert_true(fabs(t->keep_ratio - 0.10) < 1e-12);
    /* strategy cycle: ar without scores keeps the last plan and says so */
    ui_key(&u, 's');
    assert_string_equal(t->strategy, "ar");
    render(&u, &g, 80, 24);
    assert_true(find_row(&g, "ar scores not computed yet") >= 0);
    /* cursor and space: manual */
    ui_key(&u, UK_DOWN);
    ui_key(&u, ' ');
    assert_string_equal(t->strategy, "manual");
    assert_true(t->kept[1]);
    render(&u, &g, 80, 24);
    assert_true(find_row(&g, "[manual]") >= 0);
    assert_true(find_row(&g, "4/28 layers attention") >= 0); /* the short cost line at 80 columns */
    /* Enter on manual needs no job */
    ui_key(&u, UK_ENTER);
    assert_non_null(strstr(u.status, "manual plan: 4 of 28"));
    /* scrolling: the cursor stays visible at 80x24 */
    for (int i = 0; i < 26; i++) ui_key(&u, UK_DOWN);
    render(&u, &g, 80, 24);
    assert_int_equal(u.v.plan.cursor, 27);
    assert_true(find_row(&g, ">    27 ") >= 0);
    assert_true(find_row(&g, "of 28 (") >= 0);
    grid_free(&g);
    app_state_free(&st);
}

static wb_event score(int strategy, int layer, double v) {
    wb_event w = {.kind = WB_LAYER_SCORE};
    w.u.layer_score.strategy = strategy;
    w.u.layer_score.layer = layer;
    w.u.layer_score.value = v;
    snprintf(w.u.layer_score.corpus, sizeof w.u.layer_score.corpus, "c.txt");
    return w;
}

static void plan_scores_rank(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    ui_prefs_default(&prefs);
    teacher_state *t = app_teacher(&st, "/m/six");
    app_switch(&st, t);
    teacher_state_set_shape(t, 6, 4);
    snprintf(t->strategy, sizeof t->strategy, "ar");
    t->keep_ratio = 0.5; /* k = 3 */
    teacher_plan_recompute(t);
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    assert_int_equal(app_start_job(&st, &jr, "select", wbt_idle_job, NULL, t), 0);
    const int id = st.job.id;
    const double ar[6] = {9, 5, 7, 7, 3, 8};   /* highest: 0 (9), 5 (8), then 2 before 3 (tie) */
    const double ga[6] = {4, 2, 6, 2, 1, 9};   /* lowest: 4 (1), 1 (2), 3 (2) */
    for (int l = 0; l < 6; l++) {
        wb_event w = score(1, l, ar[l]);
        assert_true(wbt_apply(&st, id, &w));
    }
    bool want_ar[6] = {1, 0, 1, 0, 0, 1};
    for (int l = 0; l < 6; l++) assert_int_equal(t->kept[l], want_ar[l]);
    for (int l = 0; l < 6; l++) {
        wb_event w = score(2, l, ga[l]);
        wbt_apply(&st, id, &w);
    }
    /* ga-s2 scores arrived while ar is chosen: the plan stays ar's */
    for (int l = 0; l < 6; l++) assert_int_equal(t->kept[l], want_ar[l]);
    snprintf(t->strategy, sizeof t->strategy, "ga-s2");
    teacher_plan_recompute(t);
    bool want_ga[6] = {0, 1, 0, 1, 1, 0};
    for (int l = 0; l < 6; l++) assert_int_equal(t->kept[l], want_ga[l]);
    /* both columns drawn, the chosen strategy's values shown */
    ui u;
    ui_init(&u, &st, NULL, &prefs, ascii_mono);
    ui_select_screen(&u, "plan");
    grid g;
    grid_init(&g, 100, 30);
    ui_render(&u, &g);
    int y = find_row(&g, "    5 o GDN");
    assert_true(y >= 0);
    assert_non_null(strstr(row(&g, y), "8"));
    assert_non_null(strstr(row(&g, y), "9"));
    assert_non_null(strstr(row(&g, y), "#"));
    grid_free(&g);
    wbt_finish(&st, &jr);
    job_runner_free(&jr);
    app_state_free(&st);
}

/* Finding 1 of issue 18, at the state level: a job started for teacher A
 * whose events arrive after B became current changes A only; B shows none of it. */
static void events_go_to_their_teacher(void **state) {
    (void)state;
    app_state st;
    teacher_state *a = qwen_like(&st);
    teacher_state *b = app_teacher(&st, "/models/other");
    teacher_state_set_shape(b, 30, 9);
    snprintf(b->name, sizeof b->name, "other");
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    assert_int_equal(app_start_job(&st, &jr, "evaluate", wbt_idle_job, NULL, a), 0);
    const int id = st.job.id;
    app_switch(&st, b); /* the user opened another teacher meanwhile */
    wb_event w = {.kind = WB_TEACHER_PPL};
    w.u.teacher_ppl.ppl = 8.1078;
    w.u.teacher_ppl.windows = 32;
    wbt_apply(&st, id, &w);
    wb_event s = score(1, 3, 42);
    wbt_apply(&st, id, &s);
    assert_true(a->teacher_ppl == 8.1078);
    assert_non_null(a->plan_score[1]);
    assert_true(isnan(b->teacher_ppl));
    assert_null(b->plan_score[1]);
    /* an event of a job nobody started goes nowhere */
    assert_false(wbt_apply(&st, id + 100, &w));
    /* Results under B say nothing of A */
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "results");
    grid g;
    grid_init(&g, 100, 30);
    ui_render(&u, &g);
    assert_int_equal(find_row(&g, "8.1078"), -1);
    assert_true(find_row(&g, "not measured yet") >= 0);
    app_switch(&st, a);
    ui_render(&u, &g);
    assert_true(find_row(&g, "teacher perplexity 8.1078") >= 0);
    grid_free(&g);
    wbt_finish(&st, &jr);
    /* the history keeps the job with its teacher and outcome */
    const job_record *r = app_job_find(&st, id);
    assert_non_null(r);
    assert_int_equal(r->outcome, JOB_CANCELLED);
    assert_string_equal(r->teacher, "test-teacher");
    assert_true(r->cancel_latency_s >= 0);
    job_runner_free(&jr);
    app_state_free(&st);
}

static result_row make_row(run_kind kind, const char *strategy, double keep, const char *init, double ppl) {
    result_row r;
    result_row_init(&r);
    r.kind = kind;
    snprintf(r.teacher, sizeof r.teacher, "test-teacher");
    snprintf(r.device, sizeof r.device, "cpu");
    snprintf(r.strategy, sizeof r.strategy, "%s", strategy);
    r.keep = keep;
    snprintf(r.init, sizeof r.init, "%s", init);
    r.stage2_steps = kind == RUN_ABLATE ? 50 : 300;
    snprintf(r.corpus, sizeof r.corpus, "/data/tinystories.txt");
    r.eval_windows = kind == RUN_RACE ? 0 : 32;
    r.ctx = kind == RUN_RACE ? 128 : 256;
    r.ppl = ppl;
    r.hl_mean = 23.42, r.hl_med = 22.44, r.hl_max = 61.51;
    snprintf(r.kept, sizeof r.kept, "0,2,4,6,8,10,12,14,16,18,20,22,24,26");
    if (kind == RUN_EVALUATE)
        snprintf(r.student, sizeof r.student, "/home/someone/.local/share/graft/students/test-teacher-uniform-50-%s", init);
    if (kind == RUN_RACE) r.race_tokens = 8192, r.race_lr_mixer = 1e-3, r.race_lr_rest = 1e-4, r.tokens_to_target = 512;
    return r;
}

static void results_rows_fit(void **state) {
    (void)state;
    app_state st;
    teacher_state *t = qwen_like(&st);
    teacher_plan_recompute(t);
    t->teacher_ppl = 4.9536;
    snprintf(t->ppl_corpus, sizeof t->ppl_corpus, "/data/tinystories.txt");
    t->ppl_windows = 32, t->ppl_ctx = 256;
    snprintf(st.corpus, sizeof st.corpus, "/data/tinystories.txt");
    result_row r = make_row(RUN_RACE, "uniform", 0.5, "random", 7.77);
    teacher_add_result(t, &r);
    r = make_row(RUN_EVALUATE, "uniform", 0.5, "taylor-calibrate", 8.4320);
    teacher_add_result(t, &r);
    r = make_row(RUN_ABLATE, "ar", 0.25, "align-only", 19.1);
    r.keep_best_heldout = 1;
    teacher_add_result(t, &r);
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "results");
    grid g;
    grid_init(&g, 200, 60);
    ui_render(&u, &g);
    assert_true(find_row(&g, "teacher perplexity 4.9536 on tinystories w32") >= 0);
    /* every column at 200: teacher, run kind, steps, slice, the whole student path */
    int hy = find_row(&g, "S2 steps");
    assert_true(hy >= 0);
    assert_non_null(strstr(row(&g, hy), "teacher"));
    assert_non_null(strstr(row(&g, hy), "eval slice"));
    int y = find_row(&g, "evaluate  uniform");
    assert_true(y >= 0);
    assert_non_null(strstr(row(&g, y), "300"));
    assert_non_null(strstr(row(&g, y), "tinystories w32"));
    assert_non_null(strstr(row(&g, y), "8.4320"));
    /* the student path, cut from the left when the row is full: its end stays; then the device */
    assert_non_null(strstr(row(&g, y), "\u2026aylor-calibrate  cpu"));
    /* the race row stays, its slice named apart from the evaluation slice */
    y = find_row(&g, "race tinystories held-out");
    assert_true(y >= 0);
    assert_non_null(strstr(row(&g, y), "7.7700"));
    y = find_row(&g, "ablate    ar");
    assert_true(y >= 0); /* the ablation row says its 50 Stage 2 steps */
    assert_non_null(strstr(row(&g, y), " 50 (h) ")); /* Stage 2 kept its best held-out state */
    /* a race's random row ran no Stage 2: its steps cell says so, not a number */
    y = find_row(&g, "race tinystories held-out");
    assert_null(strstr(row(&g, y), " 300 "));
    /* the selected row (the newest) with its headless command, whole */
    assert_string_equal(command_text(&g), "graft ablate '/models/test-teacher' --calib '/data/tinystories.txt' --eval "
                                          "'/data/tinystories.txt' --keep 0.25 --strategy ar --init align-only --steps 50 "
                                          "--keep-best heldout --eval-windows 32 --json");
    /* up: the evaluate row's command (32 windows: graft eval --split's default) */
    ui_key(&u, UK_UP);
    ui_render(&u, &g);
    assert_string_equal(command_text(&g), "graft eval '/home/someone/.local/share/graft/students/test-teacher-uniform-50-"
                                          "taylor-calibrate' --text '/data/tinystories.txt' --split --json");
    /* sorting by ppl (o until the ppl column), then reversed */
    for (int k = 0; k < RC_COUNT && u.v.results.sort_col != RC_PPL; k++) ui_key(&u, 'o');
    assert_int_equal(u.v.results.sort_col, RC_PPL);
    ui_render(&u, &g);
    int y1 = find_row(&g, "7.7700"), y2 = find_row(&g, "8.4320"), y3 = find_row(&g, "19.1000");
    assert_true(y1 >= 0 && y1 < y2 && y2 < y3);
    ui_key(&u, 'O');
    ui_render(&u, &g);
    y1 = find_row(&g, "7.7700"), y2 = find_row(&g, "8.4320"), y3 = find_row(&g, "19.1000");
    assert_true(y3 < y2 && y2 < y1);
    /* at 80 columns: abbreviated inits, columns dropped by priority and named */
    grid_resize(&g, 80, 24);
    ui_render(&u, &g);
    y = find_row(&g, "t-calib");
    assert_true(y >= 0);
    assert_non_null(strstr(row(&g, y), "8.4320"));
    assert_true(find_row(&g, "hidden at this width: teacher") >= 0);
    /* nothing is cut without saying so: a cut cell ends in an ellipsis */
    for (int yy = 0; yy < 24; yy++) assert_null(strstr(row(&g, yy), "/home/someone/.local/share/graft/students/test-teacher-uniform-50-taylor-calibrate '"));
    /* i cycles the init evaluate builds */
    assert_string_equal(st.eval_init, "taylor-calibrate");
    ui_key(&u, 'i');
    assert_string_equal(st.eval_init, "random");
    ui_render(&u, &g);
    assert_true(find_row(&g, "attention, random,") >= 0);
    /* a without a workbench says so, never crashes */
    ui_key(&u, 'a');
    assert_non_null(strstr(u.status, "nothing to run"));
    grid_free(&g);
    app_state_free(&st);
}

/* A row's command, less its note, read back as a headless command: the same request as the row's. */
static void assert_command_parses_back(const result_row *r, const char *model_arg) {
    request q, back;
    result_req_text txt;
    assert_int_equal(result_request(r, model_arg, &q, &txt), 0);
    assert_int_equal(request_check(&q), 0);
    char cmd[1600], note[256];
    result_command(r, model_arg, cmd, sizeof cmd);
    result_command_note(r, note, sizeof note);
    const size_t len = strlen(cmd) - strlen(note);
    assert_string_equal(cmd + len, note);
    cmd[len] = 0;
    int argc;
    char **argv;
    assert_int_equal(request_split(cmd, &argc, &argv), 0);
    assert_int_equal(request_from_command(&back, argc, argv), 0);
    assert_true(request_equal(&q, &back));
    free(argv);
}

/* Every row kind's command is its request printed (method/request.h), and parses back to it. */
static void results_commands_are_requests(void **state) {
    (void)state;
    const char *model = "/models/my teacher's.gguf"; /* quoted in the command */
    stage1_choice s1 = {.parts = STAGE1_ALL & ~STAGE1_BETA, .no_sink = true, .half_life = 0};
    /* evaluate: graft eval of its folder, as the job measured it (evaluate_eval_request of the build) */
    result_row e = make_row(RUN_EVALUATE, "uniform", 0.5, "taylor-calibrate", 8.4);
    e.eval_windows = 16, e.seed = 0;
    snprintf(e.device, sizeof e.device, "cuda:1");
    snprintf(e.digest, sizeof e.digest, "abcdef0123");
    result_set_stage1(&e, &s1);
    assert_command_parses_back(&e, model);
    request conv, ev, q;
    result_req_text txt;
    request_init(&conv, REQ_CONVERT);
    conv.u.convert.text = "/data/tinystories.txt";
    conv.u.convert.mo.split.eval_windows = 16;
    conv.co.device = "cuda:1";
    evaluate_eval_request(&conv, e.student, &ev);
    assert_int_equal(result_request(&e, model, &q, &txt), 0);
    assert_true(request_equal(&q, &ev));
    char cmd[1600];
    result_command(&e, model, cmd, sizeof cmd);
    assert_non_null(strstr(cmd, "--json --device cuda:1   # built with --stage1 decay,sigma,gate --distance no-sink by request abcdef0123"));
    e.student[0] = 0; /* no folder: no command */
    assert_int_equal(result_request(&e, model, &q, &txt), -1);
    result_command(&e, model, cmd, sizeof cmd);
    assert_string_equal(cmd, "(no student folder was written)");
    /* ablate: the one row of the table, which expands to that one row again */
    result_row a = make_row(RUN_ABLATE, "ga-s2", 0.25, "taylor-calibrate", 19.1);
    a.keep_best_heldout = 1, a.seed = 0;
    result_set_stage1(&a, &s1);
    assert_command_parses_back(&a, model);
    assert_int_equal(result_request(&a, model, &q, &txt), 0);
    ablate_plan *pl = malloc(sizeof *pl);
    assert_int_equal(ablate_plan_make(&q, pl), 0);
    assert_int_equal(pl->n_strat * pl->n_keep * pl->n_var, 1);
    assert_int_equal(pl->variants[0].stage1, s1.parts);
    /* a half-life override: graft ablate --half-life adds its row after the set's own (two rows, the row's the second) */
    s1.half_life = 24;
    result_set_stage1(&a, &s1);
    assert_command_parses_back(&a, model);
    assert_int_equal(result_request(&a, model, &q, &txt), 0);
    assert_int_equal(ablate_plan_make(&q, pl), 0);
    assert_int_equal(pl->n_strat * pl->n_keep * pl->n_var, 2);
    assert_true(pl->variants[1].stage1 == s1.parts && pl->variants[1].half_life == 24);
    free(pl);
    result_command(&a, model, cmd, sizeof cmd);
    assert_non_null(strstr(cmd, " --seed 0")); /* seed 0 is a seed, said; -1 (unknown) is not */
    assert_non_null(strstr(cmd, " --half-life 24 "));
    /* race made here: the race of both rows, Stage 1 options in both */
    result_row r0 = make_row(RUN_RACE, "uniform", 0.5, "random", 7.7);
    r0.has_stage1 = true, r0.stage1 = s1, r0.seed = 3;
    assert_command_parses_back(&r0, model);
    /* imported: a race of student folders (not named in the JSON, said after the command) */
    result_row f = make_row(RUN_RACE, "folder", NAN, "taylor-calibrate", 7.7);
    snprintf(f.source, sizeof f.source, "/runs/race.json");
    stage1_choice scaled;
    stage1_choice_default(&scaled);
    scaled.sigma_fit = SIGMA_FIT_SCALED;
    result_set_stage1(&f, &scaled);
    assert_string_equal(f.init_detail, "stage1 all, sigma scaled");
    assert_command_parses_back(&f, model);
    result_command(&f, model, cmd, sizeof cmd);
    assert_non_null(strstr(cmd, " STUDENT_DIR... "));
    assert_null(strstr(cmd, "--sigma-fit")); /* the folders were built elsewhere: the race builds nothing */
    assert_non_null(strstr(cmd, "   # the JSON does not name the student folders"));
    /* a race built by the method, imported: its Stage 1 options and the scaled fit the JSON says, no note */
    snprintf(f.strategy, sizeof f.strategy, "uniform");
    f.keep = 0.5;
    assert_command_parses_back(&f, model);
    result_command(&f, model, cmd, sizeof cmd);
    assert_non_null(strstr(cmd, " --sigma-fit scaled "));
    assert_null(strstr(cmd, "--inits")); /* none recorded: the default pair */
    assert_null(strstr(cmd, "#"));
    /* ... with the race's own --inits and the gated fit */
    snprintf(f.race_inits, sizeof f.race_inits, "random,taylor-only,taylor-calibrate");
    scaled.sigma_fit = SIGMA_FIT_GATED;
    result_set_stage1(&f, &scaled);
    assert_string_equal(f.init_detail, "stage1 all, sigma gated");
    assert_command_parses_back(&f, model);
    result_command(&f, model, cmd, sizeof cmd);
    assert_non_null(strstr(cmd, " --inits random,taylor-only,taylor-calibrate "));
    assert_non_null(strstr(cmd, " --sigma-fit gated "));
    /* a session file keeps both (the row written and read back gives the same command) */
    {
        char again[2048];
        cJSON *fo = result_row_json(&f);
        result_row fb;
        assert_int_equal(result_row_from_json(fo, &fb), 0);
        cJSON_Delete(fo);
        assert_int_equal(fb.stage1.sigma_fit, SIGMA_FIT_GATED);
        assert_string_equal(fb.race_inits, f.race_inits);
        result_command(&fb, model, again, sizeof again);
        assert_string_equal(again, cmd);
    }
    /* a row saved before the fit went into "stage1": its init detail's "sigma scaled" is the scaled fit */
    {
        f.race_inits[0] = 0;
        scaled.sigma_fit = SIGMA_FIT_SCALED;
        result_set_stage1(&f, &scaled);
        cJSON *fo = result_row_json(&f);
        cJSON_DeleteItemFromObject(cJSON_GetObjectItemCaseSensitive(fo, "stage1"), "sigma_fit");
        result_row fb;
        assert_int_equal(result_row_from_json(fo, &fb), 0);
        cJSON_Delete(fo);
        assert_int_equal(fb.stage1.sigma_fit, SIGMA_FIT_SCALED);
    }
    /* imported from a JSON made before graft recorded the text: TEXT stands for it, and the note says so */
    result_row tx = make_row(RUN_ABLATE, "uniform", 0.5, "random", 30);
    snprintf(tx.source, sizeof tx.source, "/runs/ablate.json");
    snprintf(tx.corpus, sizeof tx.corpus, "text not recorded");
    assert_command_parses_back(&tx, model);
    result_command(&tx, model, cmd, sizeof cmd);
    assert_non_null(strstr(cmd, " --calib TEXT --eval TEXT "));
    assert_non_null(strstr(cmd, "   # the JSON does not name the text"));
    /* a row of an older session file: no seed, no device, no digest */
    result_row old = make_row(RUN_ABLATE, "uniform", 0.75, "random", 30);
    old.device[0] = 0;
    cJSON *o = result_row_json(&old);
    cJSON_DeleteItemFromObject(o, "seed");
    result_row back;
    assert_int_equal(result_row_from_json(o, &back), 0);
    cJSON_Delete(o);
    assert_command_parses_back(&back, model);
    result_command(&back, model, cmd, sizeof cmd);
    assert_null(strstr(cmd, "--seed"));
}

/* A build refused because its folder holds another request's student: the box asks once the job has
 * ended; any key but y keeps the folder (the Log says so), and a job still running hides the question. */
static void results_overwrite_question(void **state) {
    (void)state;
    app_state st;
    qwen_like(&st);
    st.overwrite.ask = true;
    snprintf(st.overwrite.folder, sizeof st.overwrite.folder, "/s/students/test-teacher-uniform-50-random-0123456789");
    snprintf(st.overwrite.held, sizeof st.overwrite.held, "abcdefabcd");
    snprintf(st.overwrite.want, sizeof st.overwrite.want, "0123456789");
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "results");
    grid g;
    grid_init(&g, 100, 30);
    st.job.active = true; /* the refused job still ending: not yet */
    ui_render(&u, &g);
    assert_int_equal(find_row(&g, "overwrite? y/N"), -1);
    st.job.active = false;
    ui_render(&u, &g);
    assert_true(find_row(&g, "y/N") >= 0);
    assert_true(find_row(&g, "digest abcdefabcd; this build's: 0123456789") >= 0);
    assert_true(find_row(&g, "test-teacher-uniform-50-random-0123456789") >= 0);
    assert_true(find_row(&g, "y overwrite (as graft convert --force)") >= 0);
    const long logged = st.log.total;
    const int sort_col = u.v.results.sort_col;
    assert_true(ui_key(&u, 'o')); /* any other key (o would sort): the answer no */
    assert_false(st.overwrite.ask);
    assert_int_equal(u.v.results.sort_col, sort_col);
    assert_string_equal(st.force_folder, "");
    assert_int_equal(st.log.total, logged + 1);
    assert_non_null(strstr(wb_log_get(&st.log, st.log.n - 1)->text, "no, the folder is kept as it was"));
    ui_render(&u, &g);
    assert_int_equal(find_row(&g, "y/N"), -1);
    assert_true(find_row(&g, "nothing was built") >= 0);
    /* y: builds again (no engine here: it says so) and leaves no force behind for a later build */
    st.overwrite.ask = true;
    assert_true(ui_key(&u, 'y'));
    assert_false(st.overwrite.ask);
    assert_string_equal(st.force_folder, "");
    assert_non_null(strstr(wb_log_get(&st.log, st.log.n - 1)->text, "yes, building again"));
    assert_non_null(strstr(u.status, "nothing to run"));
    grid_free(&g);
    app_state_free(&st);
}

static void session_keeps_plan(void **state) {
    (void)state;
    char dir[] = "/tmp/graft_plan_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/session.json", dir);
    app_state st;
    teacher_state *t = qwen_like(&st);
    snprintf(t->strategy, sizeof t->strategy, "manual");
    t->keep_ratio = 0.3;
    teacher_plan_recompute(t);
    memset(t->kept, 0, 28 * sizeof *t->kept);
    t->kept[3] = t->kept[17] = true;
    teacher_set_score(t, 1, 4, 12.5);
    snprintf(st.eval_init, sizeof st.eval_init, "align-only");
    t->teacher_ppl = 6.25;
    assert_int_equal(session_write(&st, path), 0);
    app_state back;
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), 0);
    teacher_state *b = app_cur(&back);
    assert_non_null(b);
    assert_string_equal(b->strategy, "manual");
    assert_int_equal(b->n_layers, 28);
    assert_int_equal(b->kv_heads, 2);
    assert_int_equal(b->head_dim, 128);
    assert_int_equal(b->kv_bytes, 2);
    for (int l = 0; l < 28; l++) assert_int_equal(b->kept[l], l == 3 || l == 17);
    assert_non_null(b->plan_score[1]);
    assert_true(fabs(b->plan_score[1][4] - 12.5) < 1e-12);
    assert_true(isnan(b->plan_score[1][0]));
    assert_string_equal(back.eval_init, "align-only");
    assert_true(fabs(b->teacher_ppl - 6.25) < 1e-12);
    assert_false(b->loaded); /* restored, its weights not loaded */
    /* the teacher's head count learned later keeps the plan; another layer count drops it */
    teacher_state_set_shape(b, 28, 7);
    assert_non_null(b->kept);
    teacher_state_set_shape(b, 12, 7);
    assert_null(b->kept);
    app_state_free(&back);
    /* a bad plan: an error, not a crash, and the strategy falls back to uniform */
    FILE *f = fopen(path, "w");
    fputs("{\"teachers\": [{\"key\": \"k\", \"plan\": {\"layers\": 4, \"strategy\": \"bogus\", \"kept\": [9]}}]}", f);
    fclose(f);
    app_state_init(&back);
    assert_int_equal(session_read(&back, path), -1);
    teacher_state *k = app_find_teacher(&back, "k");
    assert_non_null(k);
    teacher_state_set_shape(k, 4, 2);
    teacher_plan_recompute(k);
    assert_string_equal(k->strategy, "uniform");
    app_state_free(&back);
    app_state_free(&st);
    unlink(path);
    rmdir(dir);
}

/* After a resize to a taller terminal the rows above the selection come back (no stale scroll
 * offset); a sort keeps the selected row selected and in view. */
static void results_resize_and_sort_keep_selection(void **state) {
    (void)state;
    app_state st;
    teacher_state *t = qwen_like(&st);
    teacher_plan_recompute(t);
    for (int i = 0; i < 30; i++) {
        result_row r = make_row(RUN_ABLATE, "uniform", 0.5, "random", 10.0 + (i % 3)); /* ppl ties in threes */
        r.seed = 100 + i; /* tells the rows apart in their commands */
        teacher_add_result(t, &r);
    }
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    ui_select_screen(&u, "results");
    grid small, tall;
    grid_init(&small, 120, 16);
    grid_init(&tall, 120, 60);
    ui_render(&u, &small); /* the newest row selected: the table scrolled to the end */
    assert_true(u.v.results.first > 0);
    ui_render(&u, &tall);
    assert_int_equal(u.v.results.first, 0); /* all 30 rows fit now: none hidden above */
    assert_non_null(strstr(command_text(&tall), "--seed 129"));
    ui_key(&u, UK_UP), ui_key(&u, UK_UP); /* row 28 in run order: seed 127, ppl 10 + 27 % 3 = 10 */
    ui_render(&u, &tall);
    assert_non_null(strstr(command_text(&tall), "--seed 127"));
    for (int k = 0; k < RC_COUNT + 1 && u.v.results.sort_col != RC_PPL; k++) ui_key(&u, 'o');
    assert_int_equal(u.v.results.sort_col, RC_PPL);
    ui_render(&u, &small);
    assert_non_null(strstr(command_text(&small), "--seed 127")); /* the same row, wherever it went */
    /* ppl 10 rows first, in run order: seed 127 is the 10th of them */
    assert_int_equal(u.v.results.cursor, 9);
    assert_true(u.v.results.cursor >= u.v.results.first && u.v.results.cursor < u.v.results.first + u.v.results.rows);
    grid_free(&small);
    grid_free(&tall);
    app_state_free(&st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_default_and_cost), cmocka_unit_test(plan_keys),
        cmocka_unit_test(plan_scores_rank),      cmocka_unit_test(events_go_to_their_teacher),
        cmocka_unit_test(results_rows_fit),      cmocka_unit_test(results_commands_are_requests),
        cmocka_unit_test(results_overwrite_question),
        cmocka_unit_test(results_resize_and_sort_keep_selection),      cmocka_unit_test(session_keeps_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
