/* Each screen's view state: cursors, scroll positions, what is being typed.
 * One struct per screen; only that screen's file touches it. */
#ifndef GRAFT_UI_SCREENS_VIEWS_H
#define GRAFT_UI_SCREENS_VIEWS_H

#include <stdbool.h>

#include "widgets/entry.h"
#include "widgets/heatmap.h"
#include "workbench/teacher_state.h"

typedef struct {
    int metric, init;            /* the metric shown, the init (index into the teacher's inits) */
    bool side_by_side;
    bool log_scale[MET_COUNT];
    int cur_layer, cur_head, heat_first_row;
    heatmap_layout heat[APP_MAX_INITS];
    int n_heat;
    bool follow_hl;              /* h was pressed: show the half-life p50 once the measurement lands */
} stats_view;

typedef struct {
    int cursor, first;           /* layer under the cursor, first layer shown */
    int row_y0, rows;            /* where the layer rows were drawn (clicks) */
    bool edit;                   /* typing a retention ratio */
    char buf[8];                 /* what is typed so far (percent) */
} plan_view;

typedef struct {
    int cursor;                  /* selected row in the shown order (set from sel_seq when drawn) */
    long sel_seq;                /* the selected row (its seq): it stays selected when the order
                                  * changes; -1: the newest row, whichever it is */
    int first;                   /* first row shown */
    int rows;                    /* rows shown at the last draw */
    int row_y0;                  /* the screen row of the first table row (clicks), 0 none */
    bool searching;              /* typing the search (/) */
    entry search;
    int sort_col;                /* result_col, or -1: run order */
    bool sort_desc;
    /* the prompt box (g): it generates from the row selected when it opened, or the teacher */
    bool box;
    entry prompt;
    char box_teacher[1024];      /* the key of the teacher it opened for (another one closes it) */
    char row_student[256];       /* that row's student folder, "" when the row has none */
    char row_digest[11];         /* the request that made it (the row's digest), "" unknown */
    char row_label[96];          /* "student uniform 60% t-calib", "" when it opened on no row */
    bool recall;                 /* the Recall view (R) is open */
    bool importing;              /* I: typing the path of a run's JSON (import_prompt.c) */
    entry import_entry;
} results_view;

typedef struct {
    int layer, head;             /* the layer shown (-1: the latest done), head under the cursor */
    bool editing;                /* typing the half-life override */
    bool fix_typing;             /* the entry is a fix's half-life (X), not the override */
    entry entry;
} calibrate_view;

typedef struct {
    int layer;                   /* the layer whose chart is large (-1: all small) */
} align_view;

typedef struct {
    entry open_entry;
    int recent_cur;              /* cursor in the recent teachers list */
} teacher_view;

typedef struct {
    int scroll;                  /* lines scrolled up from the newest */
    int hscroll;                 /* columns scrolled right */
    bool filtering;              /* typing the filter (\\) */
    entry filter;
    bool searching;              /* typing the search (/) */
    entry search;
    long hit;                    /* the line found (its number since the start, wb_log total), -1 none */
    int rows;                    /* lines shown at the last draw (where a hit must land) */
    bool history;                /* the job history instead of the lines */
    int hist_scroll;             /* jobs scrolled up from the newest, in the history */
} log_view;

typedef struct {
    int cursor;                  /* settings_field under the cursor */
    int first;                   /* first field shown (the list scrolls when short of rows) */
    int row_y0, rows;            /* where the fields were drawn (clicks) */
    bool editing;
    entry edit;
} settings_view;

typedef struct {
    stats_view stats;
    plan_view plan;
    results_view results;
    calibrate_view calibrate;
    align_view align;
    teacher_view teacher;
    log_view log;
    settings_view settings;
} views;

#endif
