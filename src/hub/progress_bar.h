/* The command line's view of download events: on a terminal, one redrawn
 * status line on stderr (file, percent, bytes, speed, ETA); otherwise a plain
 * line per finished file and every ~10 seconds; nothing when quiet. */
#ifndef GRAFT_HUB_PROGRESS_BAR_H
#define GRAFT_HUB_PROGRESS_BAR_H

#include <stdbool.h>
#include <stdio.h>

#include "hub/hub.h"

typedef struct {
    FILE *out;
    bool tty;
    bool quiet;
    bool drawn;        /* a status line is on screen */
    double last_plain; /* time of the last plain line */
} hub_progress_bar;

void hub_progress_bar_init(hub_progress_bar *b, FILE *out, bool quiet);
/* A hub_event_fn: pass the bar as user data. */
void hub_progress_bar_event(const hub_event *ev, void *user);
/* "1.2 MB", "340 kB", "12 B". */
void hub_format_bytes(double bytes, char *buf, size_t cap);

#endif
