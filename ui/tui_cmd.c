/* `graft tui`: the workbench, a demo of it, or a text snapshot of one screen. */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <math.h>

#include "app.h"
#include "method/args.h"
#include "cli/common.h"
#include "core/error.h"
#include "demo.h"
#include "keys.h"
#include "persist/persist.h"
#include "ui.h"
#include "workbench/import_runs.h"
#include "workbench/session.h"
#include "workbench/workbench.h"

/* Keys for --keys: characters as themselves, plus <up> <down> <left> <right> <tab> <enter>
 * <pgup> <pgdn> <esc> <backspace> <home> <end> <f1> <f10> <btab>. */
static int next_key(const char **p) {
    static const struct { const char *name; int key; } names[] = {
        {"<up>", UK_UP}, {"<down>", UK_DOWN}, {"<left>", UK_LEFT}, {"<right>", UK_RIGHT},
        {"<tab>", UK_TAB}, {"<enter>", UK_ENTER}, {"<pgdn>", UK_PGDN}, {"<pgup>", UK_PGUP},
        {"<esc>", UK_ESC}, {"<backspace>", UK_BACKSPACE}, {"<home>", UK_HOME}, {"<end>", UK_END},
        {"<f1>", UK_F1}, {"<f10>", UK_F10}, {"<btab>", UK_BTAB},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i].name);
        if (!strncmp(*p, names[i].name, n)) {
            *p += n;
            return names[i].key;
        }
    }
    return (unsigned char)*(*p)++;
}

/* What the screen shows as JSON (nvtop's habit): the text lines, and on Stats
 * the cursor with every known value of that head. */
static void print_json(ui *u, grid *g) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "screen", ui_screen(u->screen)->title);
    cJSON_AddNumberToObject(root, "width", g->w);
    cJSON_AddNumberToObject(root, "height", g->h);
    cJSON *lines = cJSON_AddArrayToObject(root, "lines");
    char buf[8192];
    for (int y = 0; y < g->h; y++) {
        grid_row_text(g, y, buf, sizeof buf);
        cJSON_AddItemToArray(lines, cJSON_CreateString(buf));
    }
    const teacher_state *st = app_cur(u->st);
    const stats_view *sv = &u->v.stats;
    if (st) cJSON_AddStringToObject(root, "teacher", st->name);
    if (u->screen == SCR_STATS && st && st->n_layers > 0 && st->n_heads > 0) {
        cJSON *cur = cJSON_AddObjectToObject(root, "cursor");
        cJSON_AddNumberToObject(cur, "layer", sv->cur_layer);
        cJSON_AddNumberToObject(cur, "head", sv->cur_head);
        cJSON_AddStringToObject(cur, "metric", metric_get((head_metric)sv->metric)->key);
        cJSON *vals = cJSON_AddObjectToObject(cur, "values");
        for (int i = 0; i < st->n_inits; i++) {
            cJSON *one = cJSON_AddObjectToObject(vals, st->inits[i].name);
            for (int m = 0; m < MET_COUNT; m++) {
                if (!st->inits[i].m[m]) continue;
                double v = st->inits[i].m[m][sv->cur_layer * st->n_heads + sv->cur_head];
                if (isfinite(v)) cJSON_AddNumberToObject(one, metric_get((head_metric)m)->key, v);
                else cJSON_AddNullToObject(one, metric_get((head_metric)m)->key);
            }
        }
    }
    char *txt = cJSON_Print(root);
    puts(txt);
    free(txt);
    cJSON_Delete(root);
}

static int snapshot(app_state *st, ui_prefs *prefs, const char *screen_name, const char *size, const char *keys,
                    bool json) {
    int w = 100, h = 30;
    if (size && (sscanf(size, "%dx%d", &w, &h) != 2 || w < 20 || h < 6 || w > 1000 || h > 1000)) {
        fprintf(stderr, "graft tui: --size wants WxH (at least 20x6), got '%s'\n", size);
        return 2;
    }
    theme th = {.palette = prefs->palette};
    const char *nc = getenv("NO_COLOR");
    theme_detect(&th, nc && nc[0] ? 0 : 256);
    ui u;
    ui_init(&u, st, NULL, prefs, th);
    if (screen_name && !ui_select_screen(&u, screen_name)) {
        fprintf(stderr, "graft tui: unknown screen '%s' (1-9 or a tab name)\n", screen_name);
        return 2;
    }
    meter_sample(&u.meter, job_now(), 0); /* memory in use now; CPU needs two samples */
    for (const char *p = keys ? keys : ""; *p;) ui_key(&u, next_key(&p));
    grid g;
    grid_init(&g, w, h);
    ui_render(&u, &g);
    if (json) {
        print_json(&u, &g);
    } else {
        char *txt = grid_to_text(&g, NULL);
        fputs(txt, stdout);
        free(txt);
    }
    grid_free(&g);
    return 0;
}

/* --keep / --strategy preset the Plan of the teacher the workbench opens
 * (a snapshot: of the session's current teacher). */
static int plan_presets(app_state *st, double keep, const char *strategy, bool snapshot) {
    if (!isnan(keep) && !(keep > 0 && keep < 1)) {
        fprintf(stderr, "graft tui: retention ratio must be in (0, 1), got %g\n", keep);
        return 2;
    }
    if (strategy && !strncmp(strategy, "manual", 6)) {
        fprintf(stderr, "graft tui: a manual plan is made on the Plan screen (2, space toggles a layer); "
                        "--strategy takes uniform, ar or ga-s2 here\n");
        return 2;
    }
    if (strategy && strategy_index(strategy) < 0) {
        fprintf(stderr, "graft tui: unknown strategy '%s' (uniform, ar, ga-s2)\n", strategy);
        return 2;
    }
    teacher_state *t = snapshot ? app_cur(st) : NULL; /* live: the workbench applies them on load */
    if (t && (!isnan(keep) || strategy)) {
        if (!isnan(keep)) t->keep_ratio = keep;
        if (strategy) snprintf(t->strategy, sizeof t->strategy, "%s", strategy);
        teacher_plan_recompute(t);
    }
    return 0;
}

/* --import FILE ...: each file's runs under the teacher it names (import_runs.h). A
 * snapshot shows the last file's teacher (nothing loads there). 0, or 1 with the
 * file's one-line error. */
static int import_files(app_state *st, const str_list *files, bool snapshot) {
    teacher_state *last = NULL;
    /* statistics first: they give a new teacher's shape, which half-lives and races from folders need */
    int order[64], n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < files->n; i++) {
            import_kind k;
            if (import_file_kind(files->items[i], &k) != 0) {
                fprintf(stderr, "graft tui: --import %s\n", gf_last_error());
                return 1;
            }
            if ((k == IMPORT_STATS) == (pass == 0)) order[n++] = i;
        }
    for (int j = 0; j < n; j++) {
        const int i = order[j];
        import_report rep;
        if (import_run_file(st, files->items[i], &rep) != 0) {
            fprintf(stderr, "graft tui: --import %s\n", gf_last_error());
            return 1;
        }
        char line[512];
        import_report_line(&rep, st, line, sizeof line);
        app_log(st, LOG_INFO, "%s", line);
        snprintf(st->notice, sizeof st->notice, "%.400s%s", line, files->n > 1 ? " (and the other --import files: 8 Log)" : "");
        last = rep.teacher;
    }
    if (snapshot && last) app_switch(st, last);
    return 0;
}

int cmd_tui(int argc, char **argv) {
    bool demo = false, help = false, json = false;
    const char *snap = NULL, *size = NULL, *keys = NULL, *text = NULL, *strategy = NULL, *session = NULL;
    double keep = NAN;
    str_list imports = {0};
    common_opts co;
    common_opts_default(&co);
    opt_spec specs[] = {
        {"demo", OPT_FLAG, &demo, "fill the workbench with synthetic statistics (no model needed)"},
        {"snapshot", OPT_STR, &snap, "print SCREEN (1-9 or its name) as text and exit"},
        {"size", OPT_STR, &size, "snapshot size WxH (default 100x30)"},
        {"keys", OPT_STR, &keys, "keys to press before the snapshot, e.g. 'mm<down><right>'"},
        {"json", OPT_FLAG, &json, "snapshot as JSON: the text lines, and the Stats cursor's values"},
        {"text", OPT_STR, &text, "corpus for statistics and calibration (default: GRAFT_TEXT or tinystories)"},
        {"keep", OPT_DOUBLE, &keep, "the Plan's retention ratio in (0, 1) (default: the session's, else 0.5)"},
        {"strategy", OPT_STR, &strategy, "the Plan's strategy: uniform | ar | ga-s2 (default: the session's)"},
        {"session", OPT_STR, &session, "a session of its own: $XDG_STATE_HOME/graft/sessions/NAME.json (default: session.json)"},
        {"import", OPT_STR_LIST, &imports, "JSON of graft ablate / race / stats / halflife --json to show under the teacher it "
                                           "names, marked imported (repeat for several files)"},
        {"threads", OPT_INT, &co.threads, "CPU threads (default: all cores)"},
        {"seed", OPT_LONG, &co.seed, "random seed of the students the jobs build (default 1)"},
        {"device", OPT_STR, &co.device, "cpu (default) or cuda[:N]"},
        {"tokenizer", OPT_STR, &co.tokenizer, "tokenizer file of MODEL (default: found beside it)"},
        {"help", OPT_FLAG, &help, "this help"},
    };
    int n_specs = sizeof specs / sizeof specs[0];
    const char *pos[2];
    int n_pos = 0;
    if (args_parse(argc, argv, specs, n_specs, pos, 2, &n_pos)) {
        fprintf(stderr, "graft tui: %s\n", gf_last_error());
        return 2;
    }
    if (help) {
        printf("usage: graft tui [MODEL] [--import RUN.json ...] [--demo] [--session NAME] [--snapshot SCREEN [--size WxH] [--keys K] [--json]]\n");
        args_usage(specs, n_specs);
        return 0;
    }
    int setup = cli_setup("tui", &co);
    if (setup) return setup;
    if (co.tokenizer && n_pos == 0) {
        fprintf(stderr, "graft tui: --tokenizer goes with a MODEL named on the command line\n");
        return 2;
    }
    if (session && session_name_check(session) != 0) {
        fprintf(stderr, "graft tui: %s\n", gf_last_error());
        return 2;
    }
    const char *env = getenv("GRAFT_UI_DEMO");
    if (env && !strcmp(env, "1")) demo = true;
    setlocale(LC_ALL, "");
    int rc;
    if (!snap) { /* a terminal that cannot draw the workbench: say so before anything starts */
        char why[256];
        if (ui_terminal_check(why, sizeof why) != 0) {
            fprintf(stderr, "graft tui: %s\n", why);
            return 2;
        }
    }
    app_state st;
    app_state_init(&st);
    ui_prefs prefs;
    ui_prefs_default(&prefs);
    persist_load_settings(&prefs, &st);
    if (session) snprintf(st.session_name, sizeof st.session_name, "%s", session);
    if (!demo && !snap) persist_lock_session(&st); /* one writer per session; a snapshot only reads */
    if (!demo) persist_load_session(&st);
    if ((rc = plan_presets(&st, keep, strategy, snap != NULL)) != 0) {
        app_state_free(&st);
        return rc;
    }
    if (demo) {
        demo_fill(&st, 28, 12);
        st.run = demo_run;
        st.ephemeral = true;
    }
    if (snap) {
        rc = import_files(&st, &imports, true);
        if (rc == 0) rc = snapshot(&st, &prefs, snap, size, keys, json);
    } else {
        job_runner jr;
        workbench wb = {0};
        if (job_runner_init(&jr)) {
            fprintf(stderr, "graft tui: %s\n", gf_last_error());
            app_state_free(&st);
            return 1;
        }
        workbench_opts wo = {.tokenizer = co.tokenizer, .seed = co.seed, .keep = keep, .strategy = strategy};
        if (!demo && workbench_attach(&wb, &st, &jr, n_pos > 0 ? pos[0] : NULL, text, &wo) != 0) {
            fprintf(stderr, "graft tui: %s\n", gf_last_error());
            job_runner_free(&jr);
            workbench_free(&wb);
            app_state_free(&st);
            return 1;
        }
        /* after attach: its corpus check would drop an imported teacher perplexity measured on another text */
        if ((rc = import_files(&st, &imports, false)) != 0) {
            job_cancel(&jr);
            job_wait(&jr);
            job_runner_free(&jr);
            workbench_free(&wb);
            app_state_free(&st);
            return rc;
        }
        rc = ui_run(&st, &jr, &prefs) ? 1 : 0;
        if (rc) fprintf(stderr, "graft tui: %s\n", gf_last_error());
        job_runner_free(&jr);
        workbench_free(&wb);
    }
    app_state_free(&st);
    return rc;
}
