#include "student/student_export.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "core/path.h"
#include "tokenizer/tokenizer_export.h"

/* scripts/embed-assets.sh, from assets/export/modeling_graft_student.py */
extern const unsigned char graft_asset_modeling_graft_student_py[];
extern const size_t graft_asset_modeling_graft_student_py_len;

static const char MODELING_FILE[] = "modeling_graft_student.py";
/* Files that sit beside a Hugging Face tokenizer.json and travel with it. */
static const char *const TOKENIZER_COMPANIONS[] = {"tokenizer_config.json", "special_tokens_map.json",
                                                   "chat_template.jinja", "generation_config.json"};

const char *student_export_modeling_py(size_t *len) {
    *len = graft_asset_modeling_graft_student_py_len;
    return (const char *)graft_asset_modeling_graft_student_py;
}

/* Writes path as a finished atomic_file, recorded for the commit. */
static int write_tmp(student_export *x, const char *path, const void *data, size_t n) {
    GF_ASSERT(x->n < STUDENT_EXPORT_MAX_FILES);
    atomic_file *a = &x->files[x->n];
    if (atomic_file_open(a, path) != 0) return -1;
    if (n) (void)fwrite(data, 1, n, a->f); /* a short write sets the stream's error, which finish reports */
    if (atomic_file_finish(a) != 0) return -1;
    x->n++;
    return 0;
}

static int write_json_tmp(student_export *x, const char *path, const cJSON *j, bool pretty) {
    char *text = pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
    if (!text) return gf_fail("%s: cannot format JSON", path);
    size_t n = strlen(text);
    text[n] = '\n'; /* replaces the NUL: written with its length */
    int rc = write_tmp(x, path, text, n + 1);
    free(text);
    return rc;
}

static int copy_tmp(student_export *x, const char *src, const char *dst) {
    mapped_file mf;
    if (mapped_file_open(&mf, src) != 0) return -1;
    int rc = write_tmp(x, dst, mf.data, mf.size);
    mapped_file_close(&mf);
    return rc;
}

/* tokenizer_config.json and friends from beside the teacher's tokenizer.json;
 * a generated tokenizer_config.json when there was none. */
static int copy_companions(student_export *x, const student *s, const char *dir, const char *tokenizer_src) {
    char srcdir[PATH_MAX];
    snprintf(srcdir, sizeof srcdir, "%s", tokenizer_src);
    char *slash = strrchr(srcdir, '/');
    if (slash) *slash = 0;
    else snprintf(srcdir, sizeof srcdir, ".");
    bool have_config = false;
    for (size_t i = 0; i < sizeof TOKENIZER_COMPANIONS / sizeof *TOKENIZER_COMPANIONS; i++) {
        char src[PATH_MAX + 64], dst[PATH_MAX + 64];
        snprintf(src, sizeof src, "%s/%s", srcdir, TOKENIZER_COMPANIONS[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, TOKENIZER_COMPANIONS[i]);
        if (!path_is_file(src)) continue;
        if (i == 0) have_config = true;
        if (strcmp(src, dst) != 0 && copy_tmp(x, src, dst) != 0) return -1;
    }
    if (have_config || !s->m->tok) return 0;
    char dst[PATH_MAX + 64];
    snprintf(dst, sizeof dst, "%s/%s", dir, TOKENIZER_COMPANIONS[0]);
    cJSON *cfg = tokenizer_export_config(s->m->tok, s->m->cfg.max_seq);
    int rc = write_json_tmp(x, dst, cfg, true);
    cJSON_Delete(cfg);
    return rc;
}

/* tokenizer.json + tokenizer_config.json written from graft's tokenizer. */
static int write_tokenizer(student_export *x, const student *s, const char *dir) {
    cJSON *tj = tokenizer_export_json(s->m->tok);
    if (!tj) {
        x->tokenizer_note = gf_strdup(gf_last_error());
        gf_clear_error();
        return 0;
    }
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/tokenizer.json", dir);
    int rc = write_json_tmp(x, p, tj, false);
    cJSON_Delete(tj);
    if (rc != 0) return -1;
    x->tokenizer_json = gf_strdup("tokenizer.json");
    cJSON *cfg = tokenizer_export_config(s->m->tok, s->m->cfg.max_seq);
    snprintf(p, sizeof p, "%s/%s", dir, TOKENIZER_COMPANIONS[0]);
    rc = write_json_tmp(x, p, cfg, true);
    cJSON_Delete(cfg);
    return rc;
}

int student_export_write_tmp(student_export *x, const student *s, const char *dir, const char *tokenizer_src) {
    memset(x, 0, sizeof *x);
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, MODELING_FILE);
    size_t n;
    const char *py = student_export_modeling_py(&n);
    if (write_tmp(x, p, py, n) != 0) return -1;
    if (tokenizer_src && str_ends_with(tokenizer_src, ".json")) return copy_companions(x, s, dir, tokenizer_src);
    if (s->m->tok) return write_tokenizer(x, s, dir);
    return 0;
}

void student_export_config(cJSON *cfg, const student *s, const student_export *x) {
    const cJSON *mt = cJSON_GetObjectItem(cfg, "model_type");
    cJSON *g = cJSON_GetObjectItem(cfg, "graft_student");
    GF_ASSERT(cJSON_IsString(mt) && cJSON_IsObject(g));
    /* the teacher's blocks, named for graft's loader (formats/hf_config.c) and the modeling file */
    cJSON_AddStringToObject(g, "teacher_model_type", mt->valuestring);
    cJSON_ReplaceItemInObject(cfg, "model_type", cJSON_CreateString("graft_student"));
    const char *arch = "GraftStudentForCausalLM";
    cJSON_ReplaceItemInObject(cfg, "architectures", cJSON_CreateStringArray(&arch, 1));
    cJSON *am = cJSON_AddObjectToObject(cfg, "auto_map");
    cJSON_AddStringToObject(am, "AutoConfig", "modeling_graft_student.GraftStudentConfig");
    cJSON_AddStringToObject(am, "AutoModel", "modeling_graft_student.GraftStudentModel");
    cJSON_AddStringToObject(am, "AutoModelForCausalLM", "modeling_graft_student.GraftStudentForCausalLM");
    const model_config *c = &s->m->cfg;
    if (c->rope_scaling.type == ROPE_SCALING_FACTORS) { /* GGUF rope_freqs.weight: no HF rope type says it */
        cJSON *f = cJSON_AddArrayToObject(g, "rope_freq_factors");
        for (int i = 0; i < c->head_dim / 2; i++)
            cJSON_AddItemToArray(f, cJSON_CreateNumber((double)c->rope_scaling.freq_factors[i]));
    }
    if (x && x->tokenizer_note) {
        char note[512];
        snprintf(note, sizeof note, "not written: %s", x->tokenizer_note);
        cJSON_AddStringToObject(g, "hf_tokenizer", note);
    }
}

int student_export_commit(student_export *x) {
    int rc = 0;
    for (int i = 0; i < x->n; i++) {
        if (rc == 0) rc = atomic_file_commit(&x->files[i]);
        else atomic_file_discard(&x->files[i]);
    }
    x->n = 0;
    return rc;
}

void student_export_abort(student_export *x) {
    for (int i = 0; i < x->n; i++) atomic_file_discard(&x->files[i]);
    x->n = 0;
}

void student_export_free(student_export *x) {
    for (int i = 0; i < x->n; i++) atomic_file_discard(&x->files[i]);
    free(x->tokenizer_json);
    free(x->tokenizer_note);
    memset(x, 0, sizeof *x);
}
