/* Settings and session files, in XDG locations, written atomically.
 *
 *   settings  $XDG_CONFIG_HOME/graft/config.json  (default ~/.config)
 *             {"palette": "viridis", "refresh_hz": 30, "keys": {"metric": "x"}}
 *   session   $XDG_STATE_HOME/graft/session.json  (default ~/.local/state)
 *             {"teacher", "strategy", "keep_ratio", "corpus", "eval_init", "teacher_ppl",
 *              "plan": {"layers", "heads", "kv_heads", "head_dim", "kv_bytes", "kept": [...],
 *                       "scores": {"ar": [...], "ga-s2": [...]}},
 *              "results": {"header": [...], "rows": [[...], ...]},
 *              "recent": [{"arg": "ORG/NAME[@REV][:PATH] or a path", "path": "resolved"}, ...]}
 *             (recent teachers, most recent first; older files without it still read)
 *
 * A missing file means defaults. A corrupt one means defaults plus a one-line
 * warning in the log: never a crash, never a refusal to start. */
#ifndef GRAFT_UI_PERSIST_H
#define GRAFT_UI_PERSIST_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "app_state.h"

/* "$XDG_VAR/graft/leaf", or "$HOME/fallback/graft/leaf"; NULL when neither is set. Caller frees. */
char *persist_path(const char *xdg_var, const char *home_fallback, const char *leaf);

/* Writes JSON to a temp file in the same folder, fsyncs it and renames it over
 * path (creating the folders). 0, or -1 with a one-line error. */
int json_write_atomic(const char *path, const cJSON *root);
/* Parses a JSON file. NULL with *missing = true when absent; NULL with a
 * one-line error ("path: not valid JSON near byte 12") when unreadable. */
cJSON *json_read_file(const char *path, bool *missing);

/* Explicit paths (tests). Read: 0 ok or missing, -1 corrupt (defaults kept, error set). */
int settings_read(app_state *st, const char *path);
int settings_write(const app_state *st, const char *path);
int session_read(app_state *st, const char *path);
int session_write(const app_state *st, const char *path);

/* XDG paths; problems become warnings in the log. */
void persist_load_settings(app_state *st);
void persist_save_settings(app_state *st);
void persist_load_session(app_state *st);
void persist_save_session(app_state *st); /* not for ephemeral (demo) state */

#endif
