/* Unit tests: Results' prompt box. Its text helpers (wrapping the streamed
 * text, the shell quoting and the headless command, the lines under the
 * text), its events routed to the teacher and the generation they belong to,
 * the race and ablation rows' commands with --seed, and the box itself
 * rendered headless: g opens it on the selected row, the keys edit the
 * request, Enter starts "generate" through the state's run op, c reaches the
 * frame while it runs, the box takes the keys back when it ends, Esc closes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "keys.h"
#include "screens/prompt_box.h"
#include "ui.h"
#include "wb_test_util.h"
#include "widgets/wrap.h"
#include "workbench/generation.h"
#include "workbench/result_request.h"

static const theme utf8_256 = {true, DEPTH_256, 0};

/* ---- wrapping ---- */

/* The lines as text, joined with '|'. */
static const char *wrapped(const char *text, int w) {
    static char out[4096];
    text_span sp[64];
    size_t len = strlen(text);
    int n = wrap_lines(text, len, w, sp, 64);
    assert_true(n <= 64);
    assert_int_equal(wrap_lines(text, len, w, NULL, 0), n); /* counting alone gives the same */
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        size_t o = strlen(out);
        snprintf(out + o, sizeof out - o, "%s%.*s", i ? "|" : "", (int)sp[i].len, text + sp[i].start);
    }
    return out;
}

static void wrap_rules(void **state) {
    (void)state;
    assert_string_equal(wrapped("", 10), "");
    assert_string_equal(wrapped("hello world", 11), "hello world");
    assert_string_equal(wrapped("hello world", 5), "hello|world");       /* the break's space is dropped */
    assert_string_equal(wrapped("hello wonderful", 8), "hello|wonderfu|l");  /* back to the space, else cut */
    assert_string_equal(wrapped("hello ", 5), "hello|");                 /* a trailing break leaves an empty line */
    assert_string_equal(wrapped("a\n\nb\n", 10), "a||b|");               /* newlines end lines, empty ones too */
    assert_string_equal(wrapped(" lead  two", 5), " lead| two");         /* a leading space is kept */
    assert_string_equal(wrapped("ab cd ef", 4), "ab|cd|ef");
    /* columns, not bytes: "é" is one column, a CJK glyph two (never split across lines) */
    assert_string_equal(wrapped("\xc3\xa9\xc3\xa9\xc3\xa9 x", 3), "\xc3\xa9\xc3\xa9\xc3\xa9|x");
    assert_string_equal(wrapped("\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad", 5), "\xe4\xb8\xad\xe4\xb8\xad|\xe4\xb8\xad");
    assert_string_equal(wrapped("\xe4\xb8\xad", 1), "\xe4\xb8\xad");   /* wider than the line: alone */
    /* a sequence cut by the end (a token that ends inside a character) counts one column per byte */
    assert_string_equal(wrapped("ab\xe4\xb8", 3), "ab\xe4|\xb8");
}

static void wrap_clean_bytes(void **state) {
    (void)state;
    char buf[32];
    wrap_clean("a\tb\x01" "c\x7f", 6, buf, sizeof buf);
    assert_string_equal(buf, "a b c ");
    wrap_clean("x\xe4\xb8", 3, buf, sizeof buf); /* half a character: shown as '?' until the rest arrives */
    assert_string_equal(buf, "x??");
    wrap_clean("\xc3\xa9t\xc3\xa9", 5, buf, sizeof buf);
    assert_string_equal(buf, "\xc3\xa9t\xc3\xa9");
    wrap_clean("abcdef", 6, buf, 4); /* bounded */
    assert_string_equal(buf, "abc");
}

/* ---- the request's words ---- */

static void quoting_and_command(void **state) {
    (void)state;
    char q[64], cmd[512], t[16];
    gen_shell_quote("plain", q, sizeof q);
    assert_string_equal(q, "'plain'");
    gen_shell_quote("Tom's $HOME `x`", q, sizeof q);
    assert_string_equal(q, "'Tom'\\''s $HOME `x`'");
    gen_shell_quote("", q, sizeof q);
    assert_string_equal(q, "''");
    gen_shell_quote("too long for it", q, 8);
    assert_string_equal(q, ""); /* never half a quote */
    gen_temp_text(8, t, sizeof t);
    assert_string_equal(t, "0.8");
    gen_temp_text(10, t, sizeof t);
    assert_string_equal(t, "1");
    gen_temp_text(15, t, sizeof t);
    assert_string_equal(t, "1.5");
    gen_state g;
    gen_state_init(&g);
    assert_int_equal(g.req.max_new, 64);
    assert_int_equal(g.req.seed, 1);
    assert_false(g.req.sampled);
    snprintf(g.req.prompt, sizeof g.req.prompt, "It's");
    gen_command(&g.req, "/m/stories260K.bin", "cpu", cmd, sizeof cmd);
    assert_string_equal(cmd, "graft generate '/m/stories260K.bin' --prompt 'It'\\''s'"); /* -n 64, --temp 0, --seed 1: the defaults */
    snprintf(g.req.student, sizeof g.req.student, "/s/stu dent");
    g.req.sampled = true, g.req.temp_tenths = 8, g.req.seed = 3, g.req.max_new = 16;
    gen_command(&g.req, "/m/stories260K.bin", "cuda:1", cmd, sizeof cmd); /* another device than the default: said */
    assert_string_equal(cmd, "graft generate '/s/stu dent' --prompt 'It'\\''s' -n 16 --temp 0.8 --seed 3 --device cuda:1");
    gen_settings_line(&g.req, "\xc2\xb7", cmd, sizeof cmd);
    assert_string_equal(cmd, "sampled at temperature 0.8 \xc2\xb7 16 tokens \xc2\xb7 seed 3");
    g.req.sampled = false;
    gen_settings_line(&g.req, "|", cmd, sizeof cmd);
    assert_string_equal(cmd, "greedy | 16 tokens | seed 3");
    gen_state_free(&g);
}

static void lines_under_the_text(void **state) {
    (void)state;
    gen_state g;
    gen_state_init(&g);
    char b[256];
    gen_begin(&g, 7, "/m/t.bin", "");
    assert_string_equal(g.device, "cpu");
    gen_rate_line(&g, 200, b, sizeof b);
    assert_string_equal(b, ""); /* nothing yet */
    gen_kv_line(&g, 200, b, sizeof b);
    assert_string_equal(b, "");
    /* a student of 5 layers, 2 GDN: 768 B vs 1280 B per token, 4096 B of state, at 70 tokens */
    g.have_memory = true, g.kv_model = 768, g.kv_teacher = 1280, g.state_bytes = 4096;
    g.n_layers = 5, g.n_gdn = 2, g.max_context = 512;
    g.context_tokens = 70, g.generated = 48, g.seconds = 0.05;
    gen_rate_line(&g, 200, b, sizeof b);
    assert_string_equal(b, "48 of 64 tokens in 0.05 s, 960 tokens/s (prefill included)");
    g.finished = true; /* short of the count: why */
    gen_rate_line(&g, 200, b, sizeof b);
    assert_string_equal(b, "48 of 64 tokens in 0.05 s, 960 tokens/s (prefill included); end of text");
    g.context_tokens = 512;
    gen_rate_line(&g, 40, b, sizeof b); /* narrow: the parenthesis goes */
    assert_string_equal(b, "48 of 64 tokens in 0.05 s, 960 tokens/s; context full (512)");
    g.context_tokens = 70;
    gen_kv_line(&g, 200, b, sizeof b);
    assert_string_equal(b, "KV cache per token: student 768 B vs teacher 1.25 KB (3 of 5 layers attention)");
    gen_kv_line(&g, 60, b, sizeof b);
    assert_string_equal(b, "KV per token: student 768 B, teacher 1.25 KB (3/5 attention)");
    gen_total_line(&g, 200, b, sizeof b); /* 70 x 768 = 52.5 KB, 70 x 1280 = 87.5 KB */
    assert_string_equal(b, "at 70 tokens: student 52.5 KB + 4.00 KB GDN state (fixed), teacher 87.5 KB");
    gen_total_line(&g, 60, b, sizeof b);
    assert_string_equal(b, "at 70 tokens: student 52.5 KB + 4.00 KB state, teacher 87.5 KB");
    g.n_gdn = 0, g.kv_model = 1280, g.state_bytes = 0; /* the teacher itself */
    gen_kv_line(&g, 200, b, sizeof b);
    assert_string_equal(b, "KV cache per token: 1.25 KB (every layer attention)");
    gen_total_line(&g, 200, b, sizeof b);
    assert_string_equal(b, "at 70 tokens: 87.5 KB");
    /* measured after the generation: speed and the memory the decode runs allocated */
    gen_measured_line(&g, 200, b, sizeof b);
    assert_string_equal(b, ""); /* not yet */
    g.have_measured = true, g.measured_context = 70, g.tok_s_model = 812.4, g.mem_model = 93 * 1280;
    gen_measured_line(&g, 200, b, sizeof b); /* the teacher itself */
    assert_string_equal(b, "measured at 70 tokens: 812 tok/s, 116 KB");
    g.tok_s_teacher = 640, g.mem_teacher = 93 * 1280, g.mem_model = 93 * 768 + 4096; /* a student */
    gen_measured_line(&g, 200, b, sizeof b);
    assert_string_equal(b, "measured at 70 tokens: student 812 tok/s, 73.8 KB; teacher 640 tok/s, 116 KB");
    gen_measured_line(&g, 60, b, sizeof b);
    assert_string_equal(b, "at 70: student 812 tok/s 73.8 KB, teacher 640 tok/s 116 KB");
    /* text: the prompt first, then the continuation; a new run clears it */
    gen_append(&g, "Once", 4, true);
    gen_append(&g, " upon", 5, false);
    assert_string_equal(g.text, "Once upon");
    assert_int_equal(g.prompt_len, 4);
    gen_begin(&g, 8, "/m/t.bin", "cpu");
    assert_int_equal(g.len, 0);
    assert_false(g.have_memory);
    assert_false(g.have_measured);
    assert_false(g.finished);
    gen_state_free(&g);
}

/* ---- events ---- */

static wb_event text_event(const char *s, int generated, bool prompt) {
    wb_event e = {.kind = WB_GEN_TEXT};
    e.u.gen_text.len = (int)strlen(s);
    memcpy(e.u.gen_text.text, s, strlen(s));
    e.u.gen_text.generated = generated;
    e.u.gen_text.context_tokens = 5 + generated;
    e.u.gen_text.seconds = 0.01 * generated;
    e.u.gen_text.is_prompt = prompt;
    return e;
}

static void events_go_to_their_generation(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    teacher_state *a = app_teacher(&st, "/m/a"), *b = app_teacher(&st, "/m/b");
    app_switch(&st, b);
    int id = wbt_start(&st, &jr, "generate", a);
    assert_true(id > 0);
    gen_begin(&a->gen, id, "/m/a", "cpu");
    wb_event e = text_event("Once upon a time", 0, true);
    assert_true(wbt_apply(&st, id, &e));
    e = text_event(", there", 1, false);
    assert_true(wbt_apply(&st, id, &e));
    wb_event m = {.kind = WB_GEN_MEMORY};
    m.u.gen_memory.kv_model = 768, m.u.gen_memory.kv_teacher = 1280, m.u.gen_memory.n_layers = 5;
    m.u.gen_memory.n_gdn = 2, m.u.gen_memory.max_context = 512;
    assert_true(wbt_apply(&st, id, &m));
    wb_event ms = {.kind = WB_GEN_MEASURED};
    ms.u.gen_measured.context = 6, ms.u.gen_measured.tok_s_model = 900, ms.u.gen_measured.mem_model = 17664;
    ms.u.gen_measured.tok_s_teacher = 700, ms.u.gen_measured.mem_teacher = 29440, ms.u.gen_measured.has_teacher = 1;
    assert_false(wbt_apply(&st, id - 1, &ms)); /* an earlier generation's */
    assert_false(a->gen.have_measured);
    assert_true(wbt_apply(&st, id, &ms));
    assert_true(a->gen.have_measured);
    assert_int_equal(a->gen.mem_teacher, 29440);
    assert_true(a->gen.tok_s_teacher == 700);
    /* a late event of an earlier generation changes nothing */
    e = text_event(" stale", 2, false);
    assert_false(wbt_apply(&st, id - 1, &e));
    assert_string_equal(a->gen.text, "Once upon a time, there");
    assert_int_equal(a->gen.prompt_len, strlen("Once upon a time"));
    assert_int_equal(a->gen.generated, 1);
    assert_int_equal(a->gen.context_tokens, 6);
    assert_true(a->gen.have_memory);
    assert_int_equal(a->gen.max_context, 512);
    assert_null(b->gen.text); /* the current teacher is not the one it ran for */
    /* a malformed length is refused */
    e = text_event("x", 3, false);
    e.u.gen_text.len = -1;
    assert_false(wbt_apply(&st, id, &e));
    e.u.gen_text.len = (int)sizeof e.u.gen_text.text + 1;
    assert_false(wbt_apply(&st, id, &e));
    wbt_finish(&st, &jr);
    job_runner_free(&jr);
    app_state_free(&st);
}

/* ---- Results rows: the commands repeat the run, seed included ---- */

static void rows_say_their_seed(void **state) {
    (void)state;
    result_row r;
    result_row_init(&r);
    r.kind = RUN_RACE;
    snprintf(r.corpus, sizeof r.corpus, "/d/t.txt");
    r.ctx = 128, r.race_tokens = 8192, r.race_lr_mixer = 1e-3, r.race_lr_rest = 1e-4, r.keep = 0.5;
    r.seed = 7;
    char cmd[1600];
    result_command(&r, "/m/t.bin", cmd, sizeof cmd);
    assert_string_equal(cmd, "graft race '/m/t.bin' --data '/d/t.txt' --tokens 8192 --ctx 128 --lr-mixer 0.001 "
                             "--lr-rest 0.0001 --keep 0.5 --json --seed 7");
    r.kind = RUN_ABLATE;
    snprintf(r.strategy, sizeof r.strategy, "uniform");
    snprintf(r.init, sizeof r.init, "random");
    r.eval_windows = 8;
    result_command(&r, "/m/t.bin", cmd, sizeof cmd);
    assert_non_null(strstr(cmd, " --json --seed 7"));
    /* through the session file and back */
    cJSON *o = result_row_json(&r);
    result_row back;
    assert_int_equal(result_row_from_json(o, &back), 0);
    assert_int_equal(back.seed, 7);
    cJSON_DeleteItemFromObject(o, "seed"); /* a row saved before rows kept it: no --seed rather than a wrong one */
    assert_int_equal(result_row_from_json(o, &back), 0);
    assert_int_equal(back.seed, -1);
    result_command(&back, "/m/t.bin", cmd, sizeof cmd);
    assert_null(strstr(cmd, "--seed"));
    cJSON_Delete(o);
}

/* ---- the box, headless ---- */

static bool shows(ui *u, grid *g, const char *text) {
    ui_render(u, g);
    char *t = grid_to_text(g, NULL);
    bool found = strstr(t, text) != NULL;
    if (!found) fprintf(stderr, "not on screen: '%s'\n%s\n", text, t);
    free(t);
    return found;
}

static int runs;
static gen_request asked;

/* The run op: "generate" starts an idle job for the current teacher, as the workbench's does with its own. */
static int fake_run(app_state *st, job_runner *jr, wb_action a) {
    if (a != ACT_GENERATE) return gf_fail("only generate here");
    teacher_state *t = app_cur(st);
    int id = wbt_start(st, jr, "generate", t);
    if (id < 0) return -1;
    runs++;
    asked = t->gen.req;
    gen_begin(&t->gen, id, t->model_arg, "cpu");
    return 0;
}

#define LONG_ERROR "/a/long/path/to/a/student/folder/that/is/long/enough/to/need/more/than/one/line/of/the/box/tokenizer.json: byte-level vocabulary lacks the character for byte 0x04"

static int failing_job(job_ctx *ctx, void *p) {
    (void)ctx;
    (void)p;
    return gf_fail(LONG_ERROR);
}

static int failing_run(app_state *st, job_runner *jr, wb_action a) {
    (void)a;
    teacher_state *t = app_cur(st);
    if (app_start_job(st, jr, "generate", failing_job, NULL, t) != 0) return -1;
    gen_begin(&t->gen, st->job.id, t->model_arg, "cpu");
    return 0;
}

/* The workbench a box test drives: st running jobs with `run`, its runner, a
 * ui on a 100 x 30 grid, teacher `path` (named by its file name; model_arg
 * `path` when set_arg) current. */
static teacher_state *box_bench(app_state *st, job_runner *jr, ui_prefs *prefs, ui *u, grid *g, app_run_fn run,
                                const char *path, bool set_arg) {
    app_state_init(st);
    st->run = run;
    assert_int_equal(job_runner_init(jr), 0);
    ui_prefs_default(prefs);
    ui_init(u, st, jr, prefs, utf8_256);
    grid_init(g, 100, 30);
    teacher_state *t = app_teacher(st, path);
    snprintf(t->name, sizeof t->name, "%s", strrchr(path, '/') + 1);
    if (set_arg) snprintf(t->model_arg, sizeof t->model_arg, "%s", path);
    return t;
}

static void box_bench_free(app_state *st, job_runner *jr, grid *g) {
    grid_free(g);
    job_runner_free(jr);
    app_state_free(st);
}

/* A run that fails before it begins shows its whole error, wrapped, in the box. */
static void box_shows_a_failure_whole(void **state) {
    (void)state;
    app_state st;
    job_runner jr;
    ui_prefs prefs;
    ui u;
    grid g;
    teacher_state *t = box_bench(&st, &jr, &prefs, &u, &g, failing_run, "/m/t.bin", false);
    app_switch(&st, t);
    ui_key(&u, '7');
    ui_key(&u, 'g');
    ui_key(&u, UK_ENTER);
    wbt_drain(&st, &jr); /* its end, within 10 s */
    assert_false(st.job.active);
    assert_true(shows(&u, &g, "│ failed:"));
    assert_true(shows(&u, &g, "│ /a/long/path/to/a/student"));
    assert_true(shows(&u, &g, "lacks the character for byte 0x04")); /* its end too, on the next line */
    assert_true(u.typing);
    box_bench_free(&st, &jr, &g);
}

static void box_keys_and_job(void **state) {
    (void)state;
    app_state st;
    job_runner jr;
    ui_prefs prefs;
    ui u;
    grid g;
    teacher_state *t = box_bench(&st, &jr, &prefs, &u, &g, fake_run, "/m/stories260K.bin", true);
    teacher_state_set_shape(t, 5, 8);
    app_switch(&st, t);
    result_row r;
    result_row_init(&r);
    r.kind = RUN_ABLATE, r.keep = 0.25;
    snprintf(r.strategy, sizeof r.strategy, "ar");
    snprintf(r.init, sizeof r.init, "random");
    teacher_add_result(t, &r); /* no folder */
    r.kind = RUN_EVALUATE, r.keep = 0.5;
    snprintf(r.strategy, sizeof r.strategy, "uniform");
    snprintf(r.init, sizeof r.init, "taylor-calibrate");
    snprintf(r.student, sizeof r.student, "/s/stories260K-uniform-50-taylor-calibrate");
    teacher_add_result(t, &r);
    ui_key(&u, '7');
    assert_true(shows(&u, &g, "g prompt box"));
    /* g: the box on the selected row (the newest), with the keyboard */
    ui_key(&u, 'g');
    assert_true(u.v.results.box);
    assert_true(u.typing);
    assert_true(shows(&u, &g, "prompt box: student uniform 50% t-calib"));
    assert_true(shows(&u, &g, "folder /s/stories260K-uniform-50-taylor-calibrate"));
    assert_true(shows(&u, &g, "greedy \xc2\xb7 64 tokens \xc2\xb7 seed 1"));
    assert_true(shows(&u, &g, "Tab greedy/sampled"));
    /* every other key is text: q, digits, c, g, ? */
    for (const char *p = "q1c g?"; *p; p++) ui_key(&u, (unsigned char)*p);
    assert_false(u.quit);
    assert_false(u.help);
    assert_int_equal(u.screen, SCR_RESULTS);
    assert_string_equal(u.v.results.prompt.text, "q1c g?");
    ui_key(&u, 0x15); /* ^U */
    for (const char *p = "Tom's \xc3\xa9t\xc3\xa9"; *p; p++) ui_key(&u, (unsigned char)*p);
    assert_true(shows(&u, &g, "prompt: Tom's \xc3\xa9t\xc3\xa9"));
    /* the request's keys */
    ui_key(&u, UK_DOWN);
    ui_key(&u, UK_DOWN);
    assert_int_equal(t->gen.req.max_new, 16);
    for (int i = 0; i < 12; i++) ui_key(&u, UK_UP);
    assert_int_equal(t->gen.req.max_new, GEN_MAX_NEW);
    for (int i = 0; i < 20; i++) ui_key(&u, UK_DOWN);
    assert_int_equal(t->gen.req.max_new, 1);
    ui_key(&u, UK_UP);
    ui_key(&u, UK_TAB);
    assert_true(t->gen.req.sampled);
    assert_true(shows(&u, &g, "sampled at temperature 0.8 \xc2\xb7 2 tokens"));
    for (int i = 0; i < 30; i++) ui_key(&u, UK_PGUP);
    assert_int_equal(t->gen.req.temp_tenths, GEN_MAX_TEMP);
    for (int i = 0; i < 30; i++) ui_key(&u, UK_PGDN);
    assert_int_equal(t->gen.req.temp_tenths, 1);
    ui_key(&u, UK_TAB); /* back to greedy; PgUp samples again */
    ui_key(&u, UK_PGUP);
    assert_true(t->gen.req.sampled);
    assert_int_equal(t->gen.req.temp_tenths, 2);
    ui_key(&u, 0x12); /* ^R */
    assert_int_equal(t->gen.req.seed, 2);
    ui_key(&u, 0x14); /* ^T: the teacher, and back */
    assert_string_equal(t->gen.req.student, "");
    assert_true(shows(&u, &g, "prompt box: teacher stories260K.bin"));
    assert_true(shows(&u, &g, "(^T: the row's student)"));
    ui_key(&u, 0x14);
    assert_string_equal(t->gen.req.student, "/s/stories260K-uniform-50-taylor-calibrate");
    /* F1: help lists the box's keys */
    ui_key(&u, UK_F1);
    assert_true(u.help);
    assert_true(shows(&u, &g, "prompt box (every other key is text):"));
    ui_key(&u, 'x'); /* any key closes help, and is not typed */
    assert_false(u.help);
    assert_string_equal(u.v.results.prompt.text, "Tom's \xc3\xa9t\xc3\xa9");
    /* Enter: the job, with the request as the box shows it */
    ui_key(&u, UK_ENTER);
    assert_int_equal(runs, 1);
    assert_string_equal(asked.prompt, "Tom's \xc3\xa9t\xc3\xa9");
    assert_int_equal(asked.max_new, 2);
    assert_true(asked.sampled);
    assert_int_equal(asked.seed, 2);
    assert_false(u.typing); /* the frame's keys pass while it runs */
    assert_true(shows(&u, &g, "c stop"));
    assert_true(shows(&u, &g, "last run: student uniform 50% t-calib \xc2\xb7 sampled at temperature 0.2"));
    ui_key(&u, 'a'); /* a Results key waits: no ablation */
    ui_key(&u, UK_ENTER);
    assert_int_equal(runs, 1);
    ui_key(&u, 'c'); /* the frame's cancel */
    assert_true(st.job.cancel_requested);
    wbt_finish(&st, &jr);
    assert_true(shows(&u, &g, "cancelled"));
    assert_true(u.typing); /* its end gives the keys back */
    /* Esc closes it; g on the ablation row: no folder, so the teacher */
    ui_key(&u, UK_ESC);
    assert_false(u.v.results.box);
    assert_false(u.typing);
    assert_true(shows(&u, &g, "g prompt box"));
    ui_key(&u, UK_UP);
    ui_key(&u, 'g');
    assert_string_equal(t->gen.req.student, "");
    assert_true(shows(&u, &g, "the ablation row ar 25% random has no folder"));
    ui_key(&u, 0x14);
    assert_string_equal(t->gen.req.student, "");
    /* another teacher closes it */
    teacher_state *o = app_teacher(&st, "/m/other.bin");
    app_switch(&st, o);
    ui_render(&u, &g);
    assert_false(u.v.results.box);
    assert_false(u.typing);
    box_bench_free(&st, &jr, &g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wrap_rules),
        cmocka_unit_test(wrap_clean_bytes),
        cmocka_unit_test(quoting_and_command),
        cmocka_unit_test(lines_under_the_text),
        cmocka_unit_test(events_go_to_their_generation),
        cmocka_unit_test(rows_say_their_seed),
        cmocka_unit_test(box_keys_and_job),
        cmocka_unit_test(box_shows_a_failure_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
