#include "workbench/wb_log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void wb_log_free(wb_log *l) {
    for (int i = 0; i < l->n; i++) free(l->lines[(l->start + i) % WB_LOG_CAP].text);
    memset(l, 0, sizeof *l);
}

void wb_log_add(wb_log *l, log_level level, const char *text) {
    if (l->n == WB_LOG_CAP) {
        free(l->lines[l->start].text);
        l->start = (l->start + 1) % WB_LOG_CAP;
        l->n--;
    }
    log_line *ln = &l->lines[(l->start + l->n) % WB_LOG_CAP];
    ln->when = time(NULL);
    ln->level = level;
    ln->text = gf_strdup(text);
    l->n++;
    l->total++;
}

const log_line *wb_log_get(const wb_log *l, int i) {
    if (i < 0 || i >= l->n) return NULL;
    return &l->lines[(l->start + i) % WB_LOG_CAP];
}

void wb_log_stamp(const log_line *ln, char buf[16]) {
    struct tm tm;
    localtime_r(&ln->when, &tm);
    snprintf(buf, 16, "%02d:%02d:%02d ", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static bool contains_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return true;
    }
    return n == 0;
}

bool wb_log_matches(const log_line *ln, const char *filter) {
    if (!filter || !filter[0]) return true;
    char stamp[16];
    wb_log_stamp(ln, stamp);
    return contains_nocase(ln->text, filter) || contains_nocase(stamp, filter);
}
