/* Unit tests: generate_text (the call `graft generate` and the workbench's
 * prompt box share) on stories260K and a hybrid student of it: its ids are
 * generate_tf's, its streamed text is the decoded ids, the context count it
 * reports, the cancel flag (set before, and set after a few tokens), and the
 * fixed state bytes of GDN layers (tf_state_bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "eval/generate.h"
#include "formats/model_load.h"
#include "convert/build.h"
#include "student/student.h"

static model teacher;
static student hybrid;

static int setup(void **state) {
    (void)state;
    const char *sh = getenv("GRAFT_SHARED");
    char p[4096];
    snprintf(p, sizeof p, "%s/models/tinyllamas/stories260K/stories260K.bin", sh ? sh : "../shared");
    if (access(p, R_OK) != 0) return 0; /* each test skips */
    if (model_load(&teacher, p, NULL) != 0 || !teacher.tok) return -1;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    bool mask[5] = {false, true, false, false, true};
    if (student_init_empty(&hybrid, &teacher, &set) != 0 || student_build_layers(&hybrid, mask, NULL, NULL, NULL) != 0 ||
        student_set_gdn(&hybrid, mask) != 0)
        return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    if (teacher.tok) {
        student_free(&hybrid);
        model_free(&teacher);
    }
    return 0;
}

typedef struct {
    char text[8192];
    size_t len;
    int calls, last_context, last_generated, stop_after;
    atomic_int *cancel;
} sink;

static void collect(void *ud, const char *text, int context, int generated) {
    sink *s = ud;
    size_t n = strlen(text);
    if (s->len + n < sizeof s->text) memcpy(s->text + s->len, text, n + 1), s->len += n;
    s->calls++;
    s->last_context = context;
    s->last_generated = generated;
    if (s->cancel && generated == s->stop_after) atomic_store(s->cancel, 1);
}

/* ids and text of generate_text against generate_tf and tokenizer_decode, on one model */
static void check_model(transformer *tf, double temp) {
    const char *prompt = "Once upon a time";
    generate_opts o = {24, temp, 5, true, NULL, NULL, NULL};
    sink s = {0};
    generated_text g;
    assert_int_equal(generate_text(tf, &teacher, prompt, &o, collect, &s, &g), 0);
    assert_true(g.bos);
    assert_true(g.generated > 0 && g.generated <= 24);
    /* the same ids as generate_tf on BOS + the prompt */
    int_vec in = {0}, out = {0};
    tokenizer_encode(teacher.tok, prompt, strlen(prompt), true, &in);
    assert_int_equal(g.prompt_tokens, (int)in.len - 1);
    assert_int_equal(generate_tf(tf, &teacher, in.data, (int)in.len, &o, &out), 0);
    assert_int_equal((int)out.len, g.generated);
    for (int i = 0; i < g.prompt_tokens; i++) assert_int_equal(g.ids.data[i], in.data[i + 1]);
    for (size_t i = 0; i < out.len; i++) assert_int_equal(g.ids.data[g.prompt_tokens + i], out.data[i]);
    /* the streamed text is the decoded ids (BOS in front, as graft generate --json decodes them) */
    int_vec all = {0};
    int_vec_push(&all, tokenizer_bos(teacher.tok));
    for (size_t i = 0; i < g.ids.len; i++) int_vec_push(&all, g.ids.data[i]);
    char *want = tokenizer_decode(teacher.tok, all.data, all.len, NULL);
    assert_string_equal(s.text, want);
    assert_int_equal(strncmp(s.text, prompt, strlen(prompt)), 0);
    /* one call for the prompt, one per token; the context counts BOS, the prompt and the tokens */
    assert_int_equal(s.calls, 1 + g.generated);
    assert_int_equal(s.last_generated, g.generated);
    assert_int_equal(s.last_context, (int)in.len + g.generated);
    free(want);
    int_vec_free(&all);
    int_vec_free(&in);
    int_vec_free(&out);
    generated_text_free(&g);
}

static void text_matches_ids(void **state) {
    (void)state;
    if (!teacher.tok) skip();
    transformer tf;
    assert_int_equal(tf_view(&tf, &teacher, NULL, NULL, NULL), 0);
    check_model(&tf, 0);
    check_model(&tf, 0.8);
    check_model(&hybrid.tf, 0);
    check_model(&hybrid.tf, 0.8);
    tf_free(&tf);
}

static void cancel_stops_it(void **state) {
    (void)state;
    if (!teacher.tok) skip();
    atomic_int flag = 1;
    generate_opts o = {24, 0, 1, false, NULL, NULL, &flag};
    sink s = {0};
    generated_text g;
    /* set before: nothing is generated, the prompt was still shown */
    assert_int_equal(generate_text(&hybrid.tf, &teacher, "Once", &o, collect, &s, &g), -1);
    assert_string_equal(gf_last_error(), "cancelled");
    assert_int_equal(g.generated, 0);
    assert_int_equal(s.calls, 1);
    generated_text_free(&g);
    /* set after the third token: exactly three */
    atomic_store(&flag, 0);
    sink s2 = {.cancel = &flag, .stop_after = 3};
    assert_int_equal(generate_text(&hybrid.tf, &teacher, "Once", &o, collect, &s2, &g), -1);
    assert_string_equal(gf_last_error(), "cancelled");
    assert_int_equal(g.generated, 3);
    assert_int_equal(s2.last_generated, 3);
    generated_text_free(&g);
}

static void nothing_to_condition_on(void **state) {
    (void)state;
    if (!teacher.tok) skip();
    model no_tok = teacher;
    no_tok.tok = NULL;
    generate_opts o = {4, 0, 1, true, NULL, NULL, NULL};
    generated_text g;
    assert_int_equal(generate_text(&hybrid.tf, &no_tok, "x", &o, NULL, NULL, &g), -1);
    assert_non_null(strstr(gf_last_error(), "no tokenizer"));
    generated_text_free(&g);
}

static void state_bytes(void **state) {
    (void)state;
    if (!teacher.tok) skip();
    transformer tf;
    assert_int_equal(tf_view(&tf, &teacher, NULL, NULL, NULL), 0);
    assert_int_equal(tf_state_bytes(&tf), 0); /* every layer attention: no fixed state */
    const gdn_config *c = &hybrid.tf.gcfg;
    size_t per = (size_t)c->H * c->dv * c->dk * 4; /* float32 state */
    if (c->conv) per += (size_t)(GDN_CONV_K - 1) * gdn_qkv_width(c) * gf_dtype_size(be_act(hybrid.tf.be));
    assert_true(per > 0);
    assert_int_equal(tf_state_bytes(&hybrid.tf), 2 * per); /* two GDN layers */
    /* and the KV cache: three of five layers keep it */
    assert_int_equal(tf_kv_bytes_per_token(&hybrid.tf) * 5, tf_kv_bytes_per_token(&tf) * 3);
    tf_free(&tf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_matches_ids),
        cmocka_unit_test(cancel_stops_it),
        cmocka_unit_test(nothing_to_condition_on),
        cmocka_unit_test(state_bytes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
