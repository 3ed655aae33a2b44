/* The workbench's log: every line with the wall-clock time it was added and
 * its level, kept in a ring of the newest WB_LOG_CAP lines. */
#ifndef GRAFT_WORKBENCH_WB_LOG_H
#define GRAFT_WORKBENCH_WB_LOG_H

#include <stdbool.h>
#include <time.h>

#define WB_LOG_CAP 2000

typedef enum { LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

typedef struct {
    time_t when;     /* wall clock */
    log_level level;
    char *text;      /* owned */
} log_line;

typedef struct {
    log_line lines[WB_LOG_CAP]; /* ring */
    int start, n;
    long total;                 /* lines ever added (to notice news) */
} wb_log;

void wb_log_free(wb_log *l);
void wb_log_add(wb_log *l, log_level level, const char *text);
const log_line *wb_log_get(const wb_log *l, int i); /* 0 = oldest kept; NULL outside */
/* "14:03:27 " (local time), 9 characters and a NUL. */
void wb_log_stamp(const log_line *ln, char buf[16]);
/* True when the line (its time stamp included) contains filter, ignoring case; an empty filter matches all. */
bool wb_log_matches(const log_line *ln, const char *filter);

#endif
