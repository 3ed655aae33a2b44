/* Small questions about paths and names that loaders and writers ask. */
#ifndef GRAFT_CORE_PATH_H
#define GRAFT_CORE_PATH_H

#include <stdbool.h>

bool path_is_file(const char *path);                 /* a regular file (after symlinks) */
bool path_is_dir(const char *path);                  /* a directory (after symlinks) */
bool str_ends_with(const char *s, const char *suffix);

#endif
