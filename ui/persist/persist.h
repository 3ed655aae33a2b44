/* The user's preferences file, written atomically (src/workbench/json_file.h):
 *
 *   $XDG_CONFIG_HOME/graft/config.json  (default ~/.config)
 *   {"palette": "viridis", "refresh_hz": 30, "keys": {"metric": "x"}}
 *
 * A missing file means defaults. A corrupt one means defaults plus a one-line
 * warning in the log: never a crash, never a refusal to start. The session
 * (teachers, results, run settings) is src/workbench/session.h. */
#ifndef GRAFT_UI_PERSIST_H
#define GRAFT_UI_PERSIST_H

#include "prefs.h"
#include "workbench/state.h"

/* Explicit paths (tests). Read: 0 ok or missing, -1 corrupt (defaults kept, error set). */
int settings_read(ui_prefs *p, const char *path);
int settings_write(const ui_prefs *p, const char *path);

/* XDG path; problems become warnings in st's log. */
void persist_load_settings(ui_prefs *p, app_state *st);
void persist_save_settings(const ui_prefs *p);

#endif
