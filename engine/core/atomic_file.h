/* Writing a file so that a crash, a full disk or a second writer never leaves
 * it half-written: the bytes go to a temporary sibling unique to the process
 * and call ("PATH.<pid>.<n>.tmp"), which is flushed, fsync'd and renamed over
 * PATH; then the folder is fsync'd so the rename survives a crash. On any
 * failure the temporary file is removed and PATH is left as it was.
 *
 * Several files that must change together (a student folder) finish each
 * temporary file first and rename them only when all are complete. */
#ifndef GRAFT_CORE_ATOMIC_FILE_H
#define GRAFT_CORE_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *f;    /* write here (binary); NULL after finish / discard */
    char *path; /* the destination */
    char *tmp;  /* the temporary sibling */
} atomic_file;

/* "PATH.<pid>.<n>.tmp", malloc'd (also for other kinds of temporary entries,
 * such as the Hub cache's symlinks). */
char *atomic_temp_path(const char *path);

/* Creates the temporary file. 0, or -1 with a one-line error. */
int atomic_file_open(atomic_file *a, const char *path);
/* Flushes, fsyncs and closes the temporary file: 0, or -1 with an error
 * naming PATH (the temporary file is then removed; a is left discarded). */
int atomic_file_finish(atomic_file *a);
/* Renames a finished file into place and fsyncs its folder; -1 with an
 * error (the temporary file removed) when the rename fails. Frees a. */
int atomic_file_commit(atomic_file *a);
/* finish, then commit. */
int atomic_file_close(atomic_file *a);
/* Gives up: closes and removes the temporary file; frees a. Safe after any
 * of the above and on a zeroed atomic_file. */
void atomic_file_discard(atomic_file *a);

/* The whole of data[0..n) as PATH. */
int atomic_write(const char *path, const void *data, size_t n);

#endif
