/* Runs made headless elsewhere (another machine, a GPU) opened in the
 * workbench: the JSON that `graft ablate --json` (six inits, sigma fits,
 * --stage1-subsets rows), `graft race --json` and `graft stats --json` write
 * becomes Results rows, the race's curves on 6 Recover and the teacher's
 * per-head statistics on 3 Stats; `graft halflife --json` a student's per-head
 * idle and median half-lives on 3 Stats (heat maps, histograms) under its init, under the teacher the JSON names (matched by
 * its path, else its file name; an entry is made for a teacher not in the
 * session). Imported rows carry the file they came from (result_row.source):
 * they are never taken for runs made here, and nothing of theirs is on disk
 * here. A file is read and checked whole before anything changes: a malformed
 * or unknown one is refused with one line naming the file and the field. */
#ifndef GRAFT_WORKBENCH_IMPORT_RUNS_H
#define GRAFT_WORKBENCH_IMPORT_RUNS_H

#include <stdbool.h>
#include <string.h>

#include "workbench/state.h"

/* A row's corpus when its JSON does not name the text (graft before it recorded it). */
#define IMPORT_TEXT_NOT_RECORDED "text not recorded"

/* Whether r was imported from a file that did not name its text (a row run here always names it). */
static inline bool import_text_unknown(const result_row *r) {
    return r->source[0] && !strcmp(r->corpus, IMPORT_TEXT_NOT_RECORDED);
}

typedef enum { IMPORT_ABLATE, IMPORT_RACE, IMPORT_STATS, IMPORT_HALFLIFE } import_kind;

typedef struct {
    import_kind kind;
    char path[1024];          /* the file, absolute */
    char model[1024];         /* the teacher as the JSON names it (or the ablate JSON beside it) */
    teacher_state *teacher;   /* where it went */
    bool created;             /* the teacher's entry was made by this import */
    bool here;                /* the teacher's file is on this machine (opening it loads it) */
    int rows;                 /* Results rows added */
    int curves;               /* race curves (ablate, stats: 0) */
    int layers, heads;        /* stats: the shape; halflife: the GDN heads measured (heads) */
    char init[48];            /* halflife: the initialization its half-lives show under on 3 Stats */
} import_report;

const char *import_kind_name(import_kind k); /* "ablate", "race", "stats", "halflife" */
/* What path holds, from its top-level keys (the file is read, not applied): 0, or -1 with its line. */
int import_file_kind(const char *path, import_kind *k);

/* Reads path and applies it to st. 0, or -1 with a one-line error naming the
 * file and the field ("x.json: rows[3].ppl should be a number"); st is
 * unchanged then. */
int import_run_file(app_state *st, const char *path, import_report *rep);
/* "imported 12 ablate rows of SmolLM2-135M-Instruct.Q4_1.gguf from ablate_train.json (...)" */
void import_report_line(const import_report *rep, const app_state *st, char *buf, size_t n);

/* A teacher just loaded from key (its resolved path): an entry made by an
 * import for the same file name, whose file was not here, becomes this
 * teacher's (its key set to key), so that opening it shows the imported runs. */
void import_adopt_teacher(app_state *st, const char *key);
/* Opening arg where arg names an entry that holds imported runs and whose file
 * is not on this machine: shows that entry (nothing loads; jobs say the
 * teacher is not loaded) and returns true. False otherwise (open as usual). */
bool import_show_teacher(app_state *st, const char *arg);
/* Whether arg names a teacher entry that holds imported runs and whose file is not on this machine
 * (the workbench shows it, never loads it: not the teacher a session starts on). */
bool import_teacher_elsewhere(const app_state *st, const char *arg);
/* Whether t holds anything imported (rows, race curves, statistics). */
bool import_teacher_has_imports(const teacher_state *t);

#endif
