#include "method/train_run.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "train/checkpoint.h"

int method_train_run(const request *r, train_cli *tc, model *teacher, const model *src, bool folder, atomic_int *stop,
                     train_outcome *o) {
    memset(o, 0, sizeof *o);
    o->teacher_nll = NAN;
    o->init_name = "copy";
    const char *student_arg = r->pos[0];
    if (folder) {
        if (train_cli_converts(tc) || tc->noise > 0)
            return gf_fail("--keep, --strategy and --noise build students from the teacher; %s is already a student", student_arg);
        if (train_student_load(&o->st, &o->handle, student_arg, r->co.tokenizer, tc->to.ctx, &o->init_name) != 0) return -1;
        o->have_st = true;
    }
    const model_config *scfg = folder ? &o->st.tm.cfg : &src->cfg;
    if (scfg->dim != teacher->cfg.dim || scfg->n_layers != teacher->cfg.n_layers || scfg->vocab_size != teacher->cfg.vocab_size)
        return gf_fail("student %s and teacher %s have different shapes", student_arg, tc->teacher);
    if (tf_view(&o->tt, teacher, NULL, NULL, NULL) != 0) return -1;
    if (train_cli_recall(tc, teacher) != 0) return -1;
    if (cli_train_data(&o->data, teacher, tc) != 0) return -1;
    if (!folder) {
        o->init_name = train_cli_converts(tc) ? student_init_name(INIT_RANDOM) : "copy";
        if (cli_student_build(&o->st, src, tc, o->init_name, tc->to.seed) != 0) return -1;
        o->have_st = true;
    }
    o->have_res = true;
    if (train_run(&tc->to, &o->st.tm, &o->tt, &o->data, stop, &o->res) != 0) return -1;
    if (o->res.stopped_by) return 0;
    return train_eval_nll(&o->tt, &o->data, tc->to.eval_seqs, tc->to.batch, &o->teacher_nll);
}

int method_checkpoint_load(const char *path, transformer *tf, long *step, long *tokens) {
    train_state st;
    const train_blocks b = {tf->be, &tf->layout, tf->master, gf_none(), gf_none()};
    if (checkpoint_read(path, &st, &b) != 0) return -1;
    if (!gf_same(tf->master, tf->params)) be_copy(tf->be, tf->params, tf->master, tf->layout.total);
    *step = st.step;
    *tokens = st.tokens;
    train_state_free(&st);
    return 0;
}

void train_outcome_free(train_outcome *o) {
    if (o->have_res) train_result_free(&o->res);
    if (o->have_st) cli_student_free(&o->st);
    train_student_close(o->handle);
    o->handle = NULL;
    train_data_free(&o->data);
    tf_free(&o->tt);
}
