/* The one progress line the command line draws on stderr, for downloads
 * (src/hub/progress_bar.c), jobs (src/jobs/cli_progress.c) and the method's
 * steps (src/cli/method_opts.c):
 *   "LABEL [##########..........]  42%  AMOUNT  RATE  eta 1m07s"
 * fitted to a width in columns; AMOUNT and RATE come formatted by the caller
 * ("" leaves them out); an eta not known yet (negative) shows as "?", a NaN
 * one is left out. */
#ifndef GRAFT_JOBS_PROGRESS_LINE_H
#define GRAFT_JOBS_PROGRESS_LINE_H

#include <stddef.h>
#include <stdio.h>

void progress_line_format(char *buf, size_t n, int width, const char *label, double fraction, const char *amount,
                          const char *rate, double eta_s);
/* "47s", "2m05s", "1h03m"; "?" when negative. */
void format_duration(char *buf, size_t n, double seconds);
/* Columns of the terminal behind f (80 when it is not one). */
int terminal_columns(FILE *f);

#endif
