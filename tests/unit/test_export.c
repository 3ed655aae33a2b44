/* The Hugging Face export beside a student's weights (engine/student/student_export.c,
 * engine/tokenizer/tokenizer_export.c): config.json keys and the embedded modeling
 * file, graft reading its own exported folders back (also an older folder whose
 * model_type is the teacher's), GGUF RoPE factors through the folder, and the
 * tokenizer.json writer: round trip through graft's tokenizer.json loader and the
 * one-line refusals. The tokenizers library and transformers are checked by
 * tests/integration/export_*.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/model_load.h"
#include "convert/build.h"
#include "student/student_export.h"
#include "student/student_io.h"
#include "tokenizer/tokenizer_export.h"

static void fixture(char *out, size_t n, const char *rel) {
    const char *root = getenv("GRAFT_ROOT");
    snprintf(out, n, "%s/tests/fixtures/%s", root ? root : ".", rel);
}

static cJSON *read_json(const char *path) {
    size_t len;
    char *text = read_text_file(path, &len);
    assert_non_null(text);
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    assert_non_null(j);
    return j;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void rm_rf(const char *dir) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* A student of `teacher` with GDN on `mask`, saved into a fresh temp folder. */
static void save_student(const char *teacher, const bool *mask, char *dir, model *m, student *s) {
    char p[4096];
    fixture(p, sizeof p, teacher);
    assert_int_equal(model_load(m, p, NULL), 0);
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    assert_int_equal(student_init_empty(s, m, &set), 0);
    assert_int_equal(student_build_layers(s, mask, NULL, NULL, NULL), 0);
    assert_int_equal(student_set_gdn(s, mask), 0);
    assert_non_null(mkdtemp(dir));
    if (student_save(s, dir, NULL, NULL) != 0) fail_msg("%s", gf_last_error());
}

static double nll_of(const student *s) {
    int ids[24];
    for (int i = 0; i < 24; i++) ids[i] = (i * 13 + 3) % s->m->cfg.vocab_size;
    double nll;
    long n;
    assert_int_equal(student_eval_nll(s, ids, 24, 24, &nll, &n, NULL), 0);
    assert_true(isfinite(nll));
    return nll;
}

static void config_keys_and_modeling_file(void **state) {
    (void)state;
    model m;
    student s;
    char dir[] = "/tmp/graft_export_XXXXXX";
    const bool mask[3] = {false, true, false};
    save_student("hf/llama", mask, dir, &m, &s);
    char p[4200];
    snprintf(p, sizeof p, "%s/config.json", dir);
    cJSON *j = read_json(p);
    assert_string_equal(cJSON_GetObjectItem(j, "model_type")->valuestring, "graft_student");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "architectures"), 0)->valuestring,
                        "GraftStudentForCausalLM");
    cJSON *am = cJSON_GetObjectItem(j, "auto_map");
    assert_string_equal(cJSON_GetObjectItem(am, "AutoModelForCausalLM")->valuestring,
                        "modeling_graft_student.GraftStudentForCausalLM");
    assert_string_equal(cJSON_GetObjectItem(am, "AutoConfig")->valuestring, "modeling_graft_student.GraftStudentConfig");
    cJSON *g = cJSON_GetObjectItem(j, "graft_student");
    assert_string_equal(cJSON_GetObjectItem(g, "teacher_model_type")->valuestring, "llama");
    assert_null(cJSON_GetObjectItem(g, "rope_freq_factors")); /* llama3 scaling stays in rope_scaling */
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "rope_scaling"), "rope_type")->valuestring, "llama3");
    /* the modeling file is the embedded asset, byte for byte */
    snprintf(p, sizeof p, "%s/modeling_graft_student.py", dir);
    size_t len, want;
    char *py = read_text_file(p, &len);
    const char *asset = student_export_modeling_py(&want);
    assert_true(want > 1000);
    assert_int_equal(len, want);
    assert_memory_equal(py, asset, want);
    assert_non_null(strstr(py, "class GraftStudentForCausalLM"));
    free(py);
    /* no tokenizer: none written, no note either */
    snprintf(p, sizeof p, "%s/tokenizer.json", dir);
    assert_int_equal(access(p, F_OK), -1);
    assert_null(cJSON_GetObjectItem(g, "hf_tokenizer"));

    /* graft reads model_type graft_student back, and an older folder (teacher's model_type) too */
    student r;
    if (student_load(&r, dir, NULL) != 0) fail_msg("%s", gf_last_error());
    assert_int_equal(r.m->cfg.arch, ARCH_LLAMA);
    assert_float_equal(nll_of(&r), nll_of(&s), 1e-9 * fabs(nll_of(&s)));
    student_free(&r);
    cJSON_ReplaceItemInObject(j, "model_type", cJSON_CreateString("llama"));
    cJSON_DeleteItemFromObject(g, "teacher_model_type");
    char *text = cJSON_Print(j);
    snprintf(p, sizeof p, "%s/config.json", dir);
    write_text(p, text);
    free(text);
    if (student_load(&r, dir, NULL) != 0) fail_msg("%s", gf_last_error());
    student_free(&r);
    /* graft_student model type without the teacher's: one line */
    cJSON_ReplaceItemInObject(j, "model_type", cJSON_CreateString("graft_student"));
    text = cJSON_Print(j);
    write_text(p, text);
    free(text);
    assert_int_equal(student_load(&r, dir, NULL), -1);
    assert_non_null(strstr(gf_last_error(), "teacher_model_type"));
    cJSON_Delete(j);
    rm_rf(dir);
    student_free(&s);
    model_free(&m);
}

/* GGUF llama3 scaling arrives as per-frequency factors: the folder carries them
 * and the reloaded student computes the same perplexity. */
static void gguf_rope_factors_round_trip(void **state) {
    (void)state;
    model m;
    student s;
    char dir[] = "/tmp/graft_export_XXXXXX";
    const bool mask[3] = {true, false, false};
    save_student("gguf/llama.gguf", mask, dir, &m, &s);
    assert_int_equal(m.cfg.rope_scaling.type, ROPE_SCALING_FACTORS);
    char p[4200];
    snprintf(p, sizeof p, "%s/config.json", dir);
    cJSON *j = read_json(p);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "rope_scaling")));
    cJSON *f = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "graft_student"), "rope_freq_factors");
    assert_int_equal(cJSON_GetArraySize(f), m.cfg.head_dim / 2);
    for (int i = 0; i < m.cfg.head_dim / 2; i++)
        assert_float_equal(cJSON_GetArrayItem(f, i)->valuedouble, m.cfg.rope_scaling.freq_factors[i], 0);
    student r;
    if (student_load(&r, dir, NULL) != 0) fail_msg("%s", gf_last_error());
    assert_int_equal(r.m->cfg.rope_scaling.type, ROPE_SCALING_FACTORS);
    /* same weights, same RoPE: float32 results identical up to summation order */
    assert_float_equal(nll_of(&r), nll_of(&s), 1e-6 * fabs(nll_of(&s)));
    student_free(&r);
    /* a factor list of the wrong length is refused with one line */
    cJSON_DeleteItemFromArray(f, 0);
    char *text = cJSON_Print(j);
    write_text(p, text);
    free(text);
    assert_int_equal(student_load(&r, dir, NULL), -1);
    assert_non_null(strstr(gf_last_error(), "rope_freq_factors"));
    cJSON_Delete(j);
    rm_rf(dir);
    student_free(&s);
    model_free(&m);
}

static const char TEXT[] = "Once upon a time, Lily found a shiny key. \"Look!\" she said.\n\tTwo  spaces, \xc3\xa9t\xc3\xa9, "
                           "\xe4\xb8\xad\xe6\x96\x87, \xf0\x9f\x98\x80 and 12345.";

/* tokenizer.json for stories260K's llama2.c tokenizer, read back by graft's own
 * tokenizer.json loader: the same ids, BOS included. */
static void llama2c_tokenizer_json_round_trip(void **state) {
    (void)state;
    const char *sh = getenv("GRAFT_SHARED");
    char p[4096];
    snprintf(p, sizeof p, "%s/models/tinyllamas/stories260K/tok512.bin", sh ? sh : "../shared");
    if (access(p, R_OK) != 0) skip();
    tokenizer *t, *back;
    assert_int_equal(tokenizer_load_llama2c(&t, p, 512), 0);
    cJSON *tj = tokenizer_export_json(t);
    if (!tj) fail_msg("%s", gf_last_error());
    cJSON *model = cJSON_GetObjectItem(tj, "model");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(model, "byte_fallback")));
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(model, "vocab"), "<0x0A>")->valueint, 13);
    char dir[] = "/tmp/graft_export_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[4200];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    char *text = cJSON_PrintUnformatted(tj);
    write_text(path, text);
    free(text);
    cJSON_Delete(tj);
    cJSON *cfg = tokenizer_export_config(t, 512);
    assert_string_equal(cJSON_GetObjectItem(cfg, "bos_token")->valuestring, "<s>");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cfg, "add_bos_token")));
    snprintf(p, sizeof p, "%s/tokenizer_config.json", dir);
    text = cJSON_Print(cfg);
    write_text(p, text);
    free(text);
    cJSON_Delete(cfg);
    if (tokenizer_load_hf(&back, path) != 0) fail_msg("%s", gf_last_error());
    int_vec a = {0}, b = {0};
    tokenizer_encode(t, TEXT, strlen(TEXT), true, &a);
    tokenizer_encode(back, TEXT, strlen(TEXT), true, &b);
    assert_true(a.len > 20);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len * sizeof *a.data);
    assert_int_equal(tokenizer_bos(back), 1);
    int_vec_free(&a);
    int_vec_free(&b);
    tokenizer_free(back);
    tokenizer_free(t);
    rm_rf(dir);
}

/* A llama2.c vocabulary whose byte tokens are not at ids 3..258 has no
 * faithful tokenizer.json: NULL and one line saying why. */
static void llama2c_without_byte_tokens_is_refused(void **state) {
    (void)state;
    char path[] = "/tmp/graft_export_tok_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    const int V = 300;
    uint32_t max_len = 8;
    fwrite(&max_len, 4, 1, f);
    for (int i = 0; i < V; i++) {
        char piece[16];
        int n = snprintf(piece, sizeof piece, i < 3 ? "<s%d>" : "t%d", i);
        float score = (float)-i;
        fwrite(&score, 4, 1, f);
        fwrite(&n, 4, 1, f);
        fwrite(piece, 1, (size_t)n, f);
    }
    assert_int_equal(fclose(f), 0);
    tokenizer *t;
    assert_int_equal(tokenizer_load_llama2c(&t, path, V), 0);
    assert_null(tokenizer_export_json(t));
    assert_non_null(strstr(gf_last_error(), "byte token"));
    tokenizer_free(t);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config_keys_and_modeling_file),
        cmocka_unit_test(gguf_rope_factors_round_trip),
        cmocka_unit_test(llama2c_tokenizer_json_round_trip),
        cmocka_unit_test(llama2c_without_byte_tokens_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
