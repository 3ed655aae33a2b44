/* Where the workbench keeps its files (XDG folders) and JSON files written
 * atomically: a temp file in the same folder, fsync, rename. */
#ifndef GRAFT_WORKBENCH_JSON_FILE_H
#define GRAFT_WORKBENCH_JSON_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* "$XDG_VAR/graft/leaf", or "$HOME/fallback/graft/leaf"; NULL when neither is set. Caller frees. */
char *persist_path(const char *xdg_var, const char *home_fallback, const char *leaf);

/* mkdir -p of the folder holding path. 0, or -1 with a one-line error. */
int make_parent_dirs(const char *path);
/* Writes JSON to a temp file in the same folder, fsyncs it and renames it over
 * path (creating the folders). 0, or -1 with a one-line error. */
int json_write_atomic(const char *path, const cJSON *root);
/* Parses a JSON file. NULL with *missing = true when absent; NULL with a
 * one-line error ("path: not valid JSON near byte 12") when unreadable. */
cJSON *json_read_file(const char *path, bool *missing);
/* Copies the string o[key] into dst (n bytes, truncated); dst stays as it is when that is not a string. */
void json_get_str(const cJSON *o, const char *key, char *dst, size_t n);

#endif
