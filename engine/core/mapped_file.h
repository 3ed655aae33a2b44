/* Read-only memory mapping of a whole file (weights are mapped, never read whole). */
#ifndef GRAFT_CORE_MAPPED_FILE_H
#define GRAFT_CORE_MAPPED_FILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uint8_t *data; /* NULL for an empty file */
    size_t size;
    char *path;
} mapped_file;

/* 0 on success; -1 with a one-line error naming the path otherwise (a path
 * that is not a regular file is refused without blocking). */
int mapped_file_open(mapped_file *f, const char *path);
void mapped_file_close(mapped_file *f);
/* Drops the pages of [p, p + n) (inside a mapping of mapped_file_open) from
 * this process once they are read: the page cache keeps them and a later
 * read maps them again, so loading a large file holds only what is being
 * converted (resident memory stays bounded). */
void mapped_release(const void *p, size_t n);

/* 0 when path is a regular file; else -1 with "PATH is a FIFO, not a
 * regular file" (or the open's error), without blocking on a FIFO. */
int regular_file_check(const char *path);

/* Reads a whole regular file of at most max_bytes into a NUL-terminated
 * malloc'd buffer: FIFOs, devices and folders are refused at once (they
 * would block or never end), as is a larger file; NULL with a one-line
 * error naming the path. */
char *read_file_bounded(const char *path, size_t max_bytes, size_t *len_out);
/* read_file_bounded with TEXT_FILE_MAX: configs, tokenizers, training texts
 * (a text is held whole in memory with its token ids). */
#define TEXT_FILE_MAX ((size_t)4 << 30)
char *read_text_file(const char *path, size_t *len_out);

#endif
