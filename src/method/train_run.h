/* The train operation: recovery training of a student against its teacher
 * (METHOD.md section 9), then the teacher's held-out perplexity on the same
 * windows. `graft train` runs it; the race (method/race_run.h) runs the same
 * trainer once per initialization. */
#ifndef GRAFT_METHOD_TRAIN_RUN_H
#define GRAFT_METHOD_TRAIN_RUN_H

#include <stdatomic.h>

#include "method/request.h"
#include "method/train_cli.h"
#include "method/train_student.h"

typedef struct {
    train_result res;
    double teacher_nll;    /* NaN when stopped */
    const char *init_name; /* "copy", "random", or the folder's init */
    cli_student st;
    train_student *handle; /* a student folder's (NULL otherwise) */
    transformer tt;
    train_data data;
    bool have_st, have_res;
} train_outcome;

/* Trains r->pos[0] against teacher with tc (the request's training options,
 * train_cli_finish'ed, hooks on_step / on_eval set by the caller): a student
 * folder (folder), else src (the model of pos[0]; the teacher itself when it
 * is the same file) copied or converted by --keep / --strategy. stop: the
 * cancel flag. 0 (stopped: o->res.stopped_by set), or -1 with an error. */
int method_train_run(const request *r, train_cli *tc, model *teacher, const model *src, bool folder, atomic_int *stop,
                     train_outcome *o);
void train_outcome_free(train_outcome *o);

/* Loads a training checkpoint's master parameters into tf (its parameters
 * too when they are another block); *step and *tokens get how far it had trained. */
int method_checkpoint_load(const char *path, transformer *tf, long *step, long *tokens);

#endif
