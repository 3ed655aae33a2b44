#include "screens/import_prompt.h"

#include <string.h>

#include "core/error.h"
#include "screens/screens.h"
#include "workbench/import_runs.h"

void import_prompt_open(ui *u) {
    results_view *v = &u->v.results;
    v->importing = true;
    entry_clear(&v->import_entry);
    u->typing = true;
    ui_say(u, "import: the path of a graft ablate, race or stats --json file (Enter imports, Esc closes)");
}

bool import_prompt_active(ui *u) {
    results_view *v = &u->v.results;
    if (v->importing && !u->typing) v->importing = false; /* a click on a tab took the keyboard */
    return v->importing;
}

int import_prompt_run(ui *u, const char *path) {
    import_report rep;
    if (import_run_file(u->st, path, &rep) != 0) {
        ui_say(u, "%s", gf_last_error());
        app_log(u->st, LOG_WARN, "import: %s", gf_last_error());
        return -1;
    }
    char line[512];
    import_report_line(&rep, u->st, line, sizeof line);
    ui_say(u, "%s", line);
    app_log(u->st, LOG_INFO, "%s", line);
    u->v.results.sel_seq = -1; /* the newest row */
    return 0;
}

bool import_prompt_key(ui *u, int k) {
    results_view *v = &u->v.results;
    entry_result r = entry_key(&v->import_entry, k);
    if (r == ENTRY_CANCEL) {
        v->importing = u->typing = false;
        ui_say(u, "import: closed");
    } else if (r == ENTRY_SUBMIT) {
        v->importing = u->typing = false;
        char *s = v->import_entry.text, *end = s + v->import_entry.len;
        while (*s == ' ') s++; /* blanks around a pasted path are not part of it */
        while (end > s && end[-1] == ' ') *--end = 0;
        if (*s) import_prompt_run(u, s);
        else ui_say(u, "import: no path given");
    }
    return true;
}

void import_prompt_draw(ui *u, grid *g, int x, int y, int w) {
    entry_draw(g, x, y, w, "import JSON: ", &u->v.results.import_entry, true, theme_accent(&u->th));
}
