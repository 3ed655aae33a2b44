#include "method/train_student.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include <stdio.h>

#include "method/method_opts.h"
#include "select/select.h"
#include "convert/build.h"
#include "student/calib_split.h"
#include "student/student.h"
#include "student/report_json.h"
#include "student/student_io.h"

struct train_student {
    student s;
};

bool train_student_is_folder(const char *path) { return student_folder_detect(path); }

/* Trainable copy of a student: its teacher part and the GDN blocks of its is_gdn layers, one flat block. */
static int wrap_student(cli_student *cs, const student *s, int ctx) {
    (void)ctx;
    memset(cs, 0, sizeof *cs);
    mixer_kind *kinds = gf_calloc((size_t)s->L, sizeof *kinds);
    for (int l = 0; l < s->L; l++) kinds[l] = s->is_gdn[l] ? MIX_GDN : MIX_ATTN;
    int rc = tf_trainable(&cs->tm, s->m, &s->gcfg, kinds, s->gdn);
    free(kinds);
    return rc;
}

int train_student_load(cli_student *cs, train_student **handle, const char *dir, const char *tokenizer, int ctx,
                       const char **init_name) {
    memset(cs, 0, sizeof *cs);
    train_student *h = gf_calloc(1, sizeof *h);
    if (student_load(&h->s, dir, tokenizer) != 0) {
        free(h);
        return -1;
    }
    if (wrap_student(cs, &h->s, ctx) != 0) {
        student_free(&h->s);
        free(h);
        return -1;
    }
    *init_name = student_init_name(h->s.set.init);
    *handle = h;
    return 0;
}

int train_student_init_check(const char *init) {
    student_init i;
    return student_init_parse(init, &i);
}

const student_settings *train_student_settings(const train_student *h) { return &h->s.set; }

int train_student_build(cli_student *cs, train_student **handle, model *m, const char *init_s, const char *strategy,
                        double keep, const char *calib, const char *text, long seed, int ctx, char *layers,
                        size_t layers_size, const method_cli *base, const progress_sink *progress,
                        const stage2_observer *obs) {
    memset(cs, 0, sizeof *cs);
    const int L = m->cfg.n_layers;
    student_init init;
    method_cli mo;
    method_cli_default(&mo);
    if (base) mo = *base;
    student_settings set;
    strategy_spec ss;
    if (student_init_parse(init_s, &init) != 0 || method_cli_settings(&mo, seed, init, &set) != 0 ||
        strategy_parse(strategy, L, &ss) != 0)
        return -1;
    if (!m->tok) return gf_fail("%s has no tokenizer (pass --tokenizer PATH)", m->path);
    int k = 0;
    if (ss.kind != STRATEGY_MANUAL && keep_count(keep, L, &k) != 0) return -1;
    const bool scores = ss.kind == STRATEGY_AR || ss.kind == STRATEGY_GA_S2;
    token_split sp = {0};
    teacher_capture cal = {0}, held = {0};
    layer_selection sel = {0};
    train_student *h = gf_calloc(1, sizeof *h);
    int rc = -1, have_s = 0;
    if (token_split_make(&sp, m->tok, calib, scores ? (text ? text : calib) : NULL, &mo.split) != 0) goto done;
    if (method_capture(m, &sp, &cal, &held, progress) != 0) goto done;
    if (student_init_empty(&h->s, m, &set) != 0) goto done;
    have_s = 1;
    if (method_select_and_build(&h->s, &sel, &ss, k, &sp, &cal, &held, mo.split.ctx, progress, obs) != 0) goto done;
    if (student_n_gdn(&h->s) == 0) {
        gf_fail("%s keeps attention in every layer: nothing to convert", strategy);
        goto done;
    }
    if (wrap_student(cs, &h->s, ctx) != 0) goto done;
    layer_list_text(h->s.is_gdn, L, layers, layers_size);
    rc = 0;
done:
    layer_selection_free(&sel);
    teacher_capture_free(&cal);
    teacher_capture_free(&held);
    token_split_free(&sp);
    if (rc != 0) {
        if (have_s) student_free(&h->s);
        free(h);
    } else {
        *handle = h;
    }
    return rc;
}

int train_student_save(const cli_student *cs, train_student *h, const char *out_dir, const cJSON *config_extra) {
    student *s = &h->s;
    const transformer *tm = &cs->tm;
    gf_backend *be = tm->be;
    /* the trained tensors back into the student's own blocks */
    for (int i = 0; i < tm->layout.n; i++) {
        const param_entry *e = &tm->layout.t[i];
        const gf_buf dst = e->kind == TK_GDN ? s->gdn[e->layer] : model_view(&s->m->w, e->layer, e->kind);
        be_copy(be, dst, gf_at(tm->params, e->off), e->n);
    }
    if (be_sync(be) != 0) return -1;
    char *tok = teacher_tokenizer_path(s->m->path, s->m->cfg.vocab_size, NULL);
    cJSON *report = student_report_json(s);
    int rc = student_save_with(s, out_dir, tok, report, config_extra);
    cJSON_Delete(report);
    free(tok);
    return rc;
}

void train_student_close(train_student *h) {
    if (!h) return;
    student_free(&h->s);
    free(h);
}
