#include "cli/train_student.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include <stdio.h>

#if __has_include("student/student_io.h")
#include "student/student.h"
#include "student/report_json.h"
#include "student/student_io.h"

struct train_student {
    student s;
};

bool train_student_available(void) { return true; }
bool train_student_is_folder(const char *path) { return student_folder_detect(path); }

int train_student_load(cli_student *cs, train_student **handle, const char *dir, const char *tokenizer, int ctx,
                       const char **init_name) {
    memset(cs, 0, sizeof *cs);
    train_student *h = gf_calloc(1, sizeof *h);
    if (student_load(&h->s, dir, tokenizer) != 0) {
        free(h);
        return -1;
    }
    student *s = &h->s;
    const model_config *cfg = &s->m->cfg;
    model_weights_alloc(&cs->w, cfg);
    memcpy(cs->w.block, s->m->w.block, cs->w.n_floats * sizeof(float));
    hybrid_mixers *hy = &cs->hyb;
    hy->cfg = *cfg;
    hy->n_layers = cfg->n_layers;
    hy->gdn = gf_calloc((size_t)cfg->n_layers, sizeof *hy->gdn);
    hy->mixers = gf_calloc((size_t)cfg->n_layers, sizeof *hy->mixers);
    cs->has_hyb = true;
    for (int l = 0; l < cfg->n_layers; l++) {
        if (!s->is_gdn[l]) continue;
        if (gdn_mixer_init(&hy->gdn[l], &s->gcfg) != 0) goto fail;
        memcpy(hy->gdn[l].p.block, s->layers[l].block, hy->gdn[l].p.n * sizeof(float));
        gdn_mixer_bind(&hy->gdn[l], &hy->mixers[l]);
    }
    if (train_model_init(&cs->tm, cfg, &cs->w, false, true, hy->mixers, ctx) != 0) goto fail;
    *init_name = student_init_name(s->set.init);
    *handle = h;
    return 0;
fail:
    cli_student_free(cs);
    student_free(s);
    free(h);
    return -1;
}

int train_student_save(const cli_student *cs, train_student *h, const char *out_dir) {
    student *s = &h->s;
    memcpy(s->m->w.block, cs->w.block, cs->w.n_floats * sizeof(float));
    for (int l = 0; l < s->L; l++)
        if (s->is_gdn[l]) memcpy(s->layers[l].block, cs->hyb.gdn[l].p.block, cs->hyb.gdn[l].p.n * sizeof(float));
    char *tok = teacher_tokenizer_path(s->m->path, s->m->cfg.vocab_size, NULL);
    cJSON *report = student_report_json(s);
    int rc = student_save(s, out_dir, tok, report);
    cJSON_Delete(report);
    free(tok);
    return rc;
}

void train_student_close(train_student *h) {
    if (!h) return;
    student_free(&h->s);
    free(h);
}

#else /* engine/student not in this tree yet */

struct train_student {
    int unused;
};

bool train_student_available(void) { return false; }

bool train_student_is_folder(const char *path) {
    size_t n = strlen(path) + 16;
    char *cfg = gf_malloc(n);
    snprintf(cfg, n, "%s/config.json", path);
    size_t len;
    char *text = read_text_file(cfg, &len);
    free(cfg);
    bool is = text && strstr(text, "\"graft_student\"");
    free(text);
    gf_clear_error();
    return is;
}

int train_student_load(cli_student *s, train_student **handle, const char *dir, const char *tokenizer, int ctx,
                       const char **init_name) {
    (void)s, (void)handle, (void)tokenizer, (void)ctx, (void)init_name;
    return gf_fail("%s is a student folder, and this build has no student support (engine/student)", dir);
}

int train_student_save(const cli_student *s, train_student *handle, const char *out_dir) {
    (void)s, (void)handle;
    return gf_fail("%s: this build cannot write student folders (engine/student)", out_dir);
}

void train_student_close(train_student *h) { (void)h; }

#endif
