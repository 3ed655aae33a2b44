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

/* 0 on success; -1 with a one-line error naming the path otherwise. */
int mapped_file_open(mapped_file *f, const char *path);
void mapped_file_close(mapped_file *f);
/* Drops the pages of [p, p + n) (inside a mapping of mapped_file_open) from
 * this process once they are read: the page cache keeps them and a later
 * read maps them again, so loading a large file holds only what is being
 * converted (resident memory stays bounded). */
void mapped_release(const void *p, size_t n);

/* Reads a whole (small) text file into a NUL-terminated malloc'd buffer. */
char *read_text_file(const char *path, size_t *len_out);

#endif
