/* The workbench as a whole, minus the terminal: which screen is shown, the
 * view state of each screen (cursor, metric, scroll), and rendering a whole
 * frame into a grid. ui/app.c runs it under curses; snapshot mode and tests
 * run it headless. */
#ifndef GRAFT_UI_UI_H
#define GRAFT_UI_UI_H

#include <stdbool.h>

#include "app_state.h"
#include "grid.h"
#include "jobs/job.h"
#include "theme.h"
#include "widgets/bars.h"
#include "widgets/entry.h"
#include "widgets/heatmap.h"

enum { SCR_TEACHER, SCR_PLAN, SCR_STATS, SCR_CALIBRATE, SCR_ALIGN, SCR_RECOVER, SCR_RESULTS, SCR_LOG, SCR_COUNT };

typedef struct ui ui;

typedef struct {
    const char *title;                        /* "Stats" */
    void (*draw)(ui *u, grid *g, rect r);
    bool (*key)(ui *u, int key);              /* true when handled */
    bool (*click)(ui *u, int x, int y);       /* true when handled */
    const key_hint *keys;                     /* the key bar on this screen */
    int n_keys;
} screen;

struct ui {
    app_state *st;
    job_runner *jr; /* may be NULL (snapshots) */
    theme th;
    int screen;
    bool help, confirm_quit, quit;
    char status[160]; /* a transient one-line message under the screen */
    double now, last_event; /* monotonic seconds, set by the loop (0 headless) */
    /* Stats */
    int metric, init;
    bool side_by_side;
    bool log_scale[16];
    int cur_layer, cur_head, heat_first_row;
    heatmap_layout heat[APP_MAX_INITS];
    int n_heat;
    /* Calibrate / Align */
    int cal_layer, cal_head; /* Calibrate: the layer shown (-1: the latest done), head under the cursor */
    int al_layer;            /* Align: the layer whose chart is large (-1: all small) */
    /* Teacher */
    entry open_entry;
    bool typing;      /* a text entry has focus: every key goes to the screen, none to the frame */
    int recent_cur;   /* cursor in the recent teachers list */
    /* Log */
    int log_scroll; /* lines scrolled up from the newest */
    tabbar_hits tabs;
};

const screen *ui_screen(int i);
void ui_init(ui *u, app_state *st, job_runner *jr, theme th);
/* Draws a whole frame (top line, tabs, screen, key bar, overlays). */
void ui_render(ui *u, grid *g);
/* Handles a key (keys.h codes); true when the frame must be redrawn. */
bool ui_key(ui *u, int key);
/* Handles a left click at (x, y); true when the frame must be redrawn. */
bool ui_click(ui *u, int x, int y);
/* Switches screens by name or number ("stats", "3"); false when unknown. */
bool ui_select_screen(ui *u, const char *name);

#endif
