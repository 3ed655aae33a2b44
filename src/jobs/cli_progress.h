/* The command-line front end of jobs: runs one job to completion on the
 * calling thread's behalf, drawing its progress as a bar on stderr when stderr
 * is a terminal, printing its log lines to stderr, and cancelling it when the
 * caller's stop flag is set (its Ctrl-C handler's: src/cli/signals.h). */
#ifndef GRAFT_JOBS_CLI_PROGRESS_H
#define GRAFT_JOBS_CLI_PROGRESS_H

#include <stdatomic.h>
#include <stddef.h>

#include "jobs/job.h"

/* Runs fn(arg) as job `name` and waits, cancelling it within 200 ms once *stop
 * is non-zero (NULL: never). Returns 0 with *result (may be NULL) set from
 * EV_DONE, or -1 with the job's one-line error ("cancelled" after a stop).
 * Data and file events are passed to on_event when it is non-NULL. */
int job_run_cli(const char *name, job_fn fn, void *arg, void **result, atomic_int *stop,
                void (*on_event)(const event *ev, void *user), void *user);

/* "label  [#######.....]  42%  420/1000  12.3/s  eta 47s" fitted to width columns. */
void cli_progress_format(char *buf, size_t n, const event *ev, int width);

#endif
