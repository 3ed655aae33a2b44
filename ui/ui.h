/* The workbench as a whole, minus the terminal: which screen is shown, each
 * screen's view state (its own struct, views.h), the header's resource meter,
 * and rendering a whole frame into a grid. ui/app.c runs it under curses;
 * snapshot mode and tests run it headless. What is shown comes from the
 * workbench state (src/workbench/state.h); the UI starts jobs through its ops. */
#ifndef GRAFT_UI_UI_H
#define GRAFT_UI_UI_H

#include <stdbool.h>

#include "grid.h"
#include "jobs/job.h"
#include "prefs.h"
#include "screens/views.h"
#include "theme.h"
#include "widgets/bars.h"
#include "workbench/meter.h"
#include "workbench/state.h"

enum {
    SCR_TEACHER, SCR_PLAN, SCR_STATS, SCR_CALIBRATE, SCR_ALIGN, SCR_RECOVER, SCR_RESULTS, SCR_LOG, SCR_SETTINGS,
    SCR_COUNT
};

typedef struct ui ui;

typedef struct {
    const char *title;                        /* "Stats" */
    void (*draw)(ui *u, grid *g, rect r);
    bool (*key)(ui *u, int key);              /* true when handled */
    bool (*click)(ui *u, int x, int y);       /* true when handled */
    const key_hint *keys;                     /* the key bar on this screen */
    int n_keys;
    int action;                               /* what Enter starts (wb_action), -1 none */
} screen;

struct ui {
    app_state *st;
    job_runner *jr;   /* may be NULL (snapshots) */
    ui_prefs *prefs;
    theme th;
    int screen;
    bool help, confirm_quit, quit;
    int help_scroll;  /* the help box's first line (it scrolls when the terminal is short) */
    bool typing;      /* a text entry has focus: every key goes to the screen, none to the frame */
    char status[512]; /* a transient one-line message above the key bar */
    int status_job;   /* the job the status speaks of ("started x"): cleared when it ends; 0 none */
    double status_at; /* when it was said (a running job's line takes the row back after a few seconds) */
    double now, last_event; /* monotonic seconds, set by the loop (0 headless) */
    meter meter;      /* the header's CPU / memory / GPU meter */
    tabbar_hits tabs;
    views v;          /* each screen's own view state */
};

const screen *ui_screen(int i);
void ui_init(ui *u, app_state *st, job_runner *jr, ui_prefs *prefs, theme th);
/* Draws a whole frame (top line, tabs, screen, job line, key bar, overlays). */
void ui_render(ui *u, grid *g);
/* Handles a key (keys.h codes); true when the frame must be redrawn. */
bool ui_key(ui *u, int key);
/* Handles a left click at (x, y); true when the frame must be redrawn. */
bool ui_click(ui *u, int x, int y);
/* The mouse wheel (dir -1 up, +1 down) at (x, y): scrolls the help, or the screen's list. */
bool ui_wheel(ui *u, int dir, int x, int y);
/* Switches screens by name or number ("stats", "3"); false when unknown. */
bool ui_select_screen(ui *u, const char *name);
/* Starts a workbench action (the Enter of a screen, or a screen's own key);
 * says what happened on the status line. */
void ui_run_action(ui *u, int action);
/* Sets the status line (printf-style). */
void ui_say(ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
