/* libFuzzer harness: the JSON graft tui --import reads (graft ablate / race /
 * stats / halflife --json), up to three files separated by FUZZ_SEP imported in
 * turn into one session. When a file imports, what it brought is used: the
 * status line and the best-variant line are made, the Results, Recover and
 * Stats screens drawn, and the session written and read back, which must
 * succeed (the workbench saves imported rows with the session). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "harness.h"
#include "ui.h"
#include "workbench/best_variant.h"
#include "workbench/import_runs.h"
#include "workbench/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* up to three files imported in turn into one session (stats, then half-lives that need its shape) */
    const uint8_t *part[3];
    size_t len[3];
    const int n = fuzz_split(data, size, part, len, 3);
    app_state st;
    app_state_init(&st);
    import_report rep, done;
    teacher_state *last = NULL;
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "run%d.json", i);
        if (import_run_file(&st, fuzz_write(name, part[i], len[i]), &rep) != 0) fuzz_rejected("import_run_file");
        else last = rep.teacher, done = rep;
        fuzz_remove(name);
    }
    if (!last) {
        app_state_free(&st);
        return 0;
    }
    char line[600];
    import_report_line(&done, &st, line, sizeof line);
    best_variant_line(last, line, sizeof line);
    app_switch(&st, last);
    ui_prefs prefs;
    ui_prefs_default(&prefs);
    ui u;
    ui_init(&u, &st, NULL, &prefs, (theme){true, DEPTH_256, 0});
    grid g;
    grid_init(&g, 100, 30);
    static const char *const screens[] = {"results", "recover", "stats", "calibrate"};
    for (size_t i = 0; i < sizeof screens / sizeof screens[0]; i++) {
        if (!ui_select_screen(&u, screens[i])) abort();
        ui_render(&u, &g);
    }
    grid_free(&g);
    const char *saved = fuzz_path("session.json");
    if (session_write(&st, saved) != 0) abort();
    app_state back;
    app_state_init(&back);
    if (session_read(&back, saved) != 0) abort(); /* what the workbench wrote it must read */
    app_state_free(&back);
    app_state_free(&st);
    fuzz_remove("session.json");
    gf_clear_error();
    return 0;
}
