/* The session file, $XDG_STATE_HOME/graft/session.json (default ~/.local/state):
 *
 *   {"version": 2, "corpus": "...", "current": "<key of the current teacher>",
 *    "settings": {"stage2_steps": 300, ...},                       (settings.h)
 *    "teachers": [{"key", "arg", "name", "model_arg", "shape", "lines": [...],
 *                  "plan": {"layers", "heads", "kv_heads", "head_dim", "kv_bytes", "strategy",
 *                           "keep_ratio", "kept": [...], "scores": {"ar": [...], "ga-s2": [...]},
 *                           "score_corpus"},
 *                  "teacher_ppl": {"ppl", "corpus", "windows", "ctx"},
 *                  "results": [{"run": "evaluate", "strategy", "keep", "init", ...}, ...]}, ...],
 *    "recent": [{"arg": "ORG/NAME[@REV][:PATH] or a path", "path": "resolved"}, ...]}
 *
 * Everything computed is stored under the teacher it belongs to. Statistics,
 * Stage 1 / Stage 2 numbers and race curves live for the session only (the
 * statistics are recomputed when the teacher loads). A session of the first
 * format (one plan and one results table for whatever teacher) restores its
 * recent teachers only. A missing file means defaults; a corrupt one means
 * defaults plus a one-line warning in the log: never a crash. */
#ifndef GRAFT_WORKBENCH_SESSION_H
#define GRAFT_WORKBENCH_SESSION_H

#include "workbench/state.h"

/* Explicit paths (tests). Read: 0 ok or missing, -1 corrupt (what was read stays, error set). */
int session_read(app_state *st, const char *path);
int session_write(const app_state *st, const char *path);

/* XDG paths; problems become warnings in the log. */
void persist_load_session(app_state *st);
void persist_save_session(app_state *st); /* not for ephemeral (demo) state */

#endif
