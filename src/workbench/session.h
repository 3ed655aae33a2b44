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
 *    "recent": [{"arg": "ORG/NAME[@REV][:PATH] or a path", "path": "resolved"}, ...],
 *    "jobs": [{"name", "outcome": "done|failed|cancelled|interrupted|running", "teacher", "started",
 *              "seconds", "text", "phase", "label", "done", "total", "fraction", "checkpoint"}, ...]}
 *
 * Written atomically after every finished job, every change of what it holds, every
 * little while during a job (so that a job's progress outlives a killed workbench: a
 * "running" job read back is an interrupted one), and on the way out (q, a hang-up,
 * SIGTERM, Ctrl-C). One process writes a session: it holds an flock on session.json.lock;
 * a second one opens it read-only (graft tui --session NAME opens another session,
 * sessions/NAME.json beside it).
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

/* graft tui --session NAME: 0, or -1 with a one-line error (letters, digits, . _ -). */
int session_name_check(const char *name);
/* $XDG_STATE_HOME/graft/session.json, or sessions/NAME.json for st->session_name (malloc'd; NULL without HOME). */
char *session_path(const app_state *st);
/* One writer per session: flock on PATH.lock, held until st is freed. Another process
 * holding it makes st read-only (lock_holder: its pid). -1 with an error when no lock can
 * be made at all. */
int session_lock(app_state *st, const char *path);

/* The live workbench, before it reads: session_lock on the XDG path; read-only and a
 * notice (st->notice, the log) when another process writes the session. */
void persist_lock_session(app_state *st);
/* Reads the XDG path; problems become warnings in the log. */
void persist_load_session(app_state *st);
/* Writes the session atomically (not for ephemeral demo state, nor read-only); -1 with an error. */
int persist_save_session(app_state *st);

#endif
