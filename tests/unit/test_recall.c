/* Unit tests: the recall tasks (engine/eval/recall_task.h) on hand-made
 * cases (the scorer, each generator's needles, answers and question, seeds),
 * the prompts assembled in tokens (exact length, needle order by depth, a
 * file haystack, too few tokens), the option lists, and a run on stories260K
 * (cells, batch-independent prompts, cancel). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/error.h"
#include "eval/recall.h"
#include "model_util.h"

/* ---- scorer ---- */

static void test_score_hand_cases(void **state) {
    (void)state;
    char *one[] = {"1234567"};
    assert_true(recall_score(" 1234567.", one, 1) == 1.0);
    assert_true(recall_score(" 123456.", one, 1) == 0.0);
    assert_true(recall_score("", one, 1) == 0.0);
    char *word[] = {"Calm-Lantern"};
    assert_true(recall_score("it is calm-lantern", word, 1) == 1.0); /* case ignored */
    char *four[] = {"1111111", "2222222", "3333333", "4444444"};
    assert_true(recall_score("2222222, 4444444 and 5555555", four, 4) == 0.5); /* a share of the answers */
    assert_true(recall_score("4444444 3333333 2222222 1111111", four, 4) == 1.0); /* any order */
    assert_true(recall_score("anything", four, 0) == 0.0);
}

/* ---- generators ---- */

static bool contains(const char *s, const char *x) { return strstr(s, x) != NULL; }

static void test_generators(void **state) {
    (void)state;
    const int needles[RECALL_TASK_COUNT] = {1, 1, 1, 4, 4, 4, 5};
    const int answers[RECALL_TASK_COUNT] = {1, 1, 1, 1, 4, 4, 5};
    for (int t = 0; t < RECALL_TASK_COUNT; t++) {
        recall_text s, again, other;
        assert_int_equal(recall_text_make(&s, (recall_task)t, 0.25, 7), 0);
        assert_int_equal(s.n_needles, needles[t]);
        assert_int_equal(s.n_answers, answers[t]);
        assert_true(s.depth[0] == 0.25); /* the asked needle at the depth given */
        for (int i = 1; i < s.n_needles; i++) assert_true(s.depth[i] < 0);
        for (int a = 0; a < s.n_answers; a++) { /* every answer is in some needle */
            bool found = false;
            for (int i = 0; i < s.n_needles; i++) found |= contains(s.needle[i], s.answer[a]);
            assert_true(found);
        }
        assert_true(contains(s.needle[0], s.answer[0]));
        assert_true(s.head && s.question && s.opening && strlen(s.head) > 20);
        /* the same seed makes the same sample; another seed another */
        assert_int_equal(recall_text_make(&again, (recall_task)t, 0.25, 7), 0);
        assert_int_equal(recall_text_make(&other, (recall_task)t, 0.25, 8), 0);
        assert_string_equal(s.needle[0], again.needle[0]);
        assert_string_equal(s.question, again.question);
        assert_string_not_equal(s.needle[0], other.needle[0]);
        recall_text_free(&s);
        recall_text_free(&again);
        recall_text_free(&other);
    }
    recall_text s;
    assert_int_equal(recall_text_make(&s, RECALL_TASK_COUNT, 0.5, 1), -1);
    recall_text_free(&s);
    assert_int_equal(recall_text_make(&s, RECALL_PASSKEY, 1.5, 1), -1);
    recall_text_free(&s);
}

/* the key asked is needle 0's and no other needle's; multiquery asks every key */
static void test_keys_asked(void **state) {
    (void)state;
    recall_text s;
    assert_int_equal(recall_text_make(&s, RECALL_MULTIKEY, 0.5, 3), 0);
    char key[64];
    assert_int_equal(sscanf(s.needle[0], "One of the special magic numbers for %63s", key), 1);
    assert_true(contains(s.question, key));
    for (int i = 1; i < s.n_needles; i++) {
        char other[64];
        assert_int_equal(sscanf(s.needle[i], "One of the special magic numbers for %63s", other), 1);
        assert_false(contains(s.question, other));
        assert_false(contains(s.needle[i], s.answer[0]));
    }
    recall_text_free(&s);
    assert_int_equal(recall_text_make(&s, RECALL_MULTIQUERY, 0.5, 3), 0);
    for (int i = 0; i < s.n_needles; i++) {
        char k[64];
        assert_int_equal(sscanf(s.needle[i], "One of the special magic numbers for %63s", k), 1);
        assert_true(contains(s.question, k));
    }
    assert_true(contains(s.question, ", and "));
    recall_text_free(&s);
    /* a chain: VAR A = value, then each variable assigned the previous one */
    assert_int_equal(recall_text_make(&s, RECALL_VT, 0.5, 3), 0);
    char v0[8], v[8], prev[8];
    int value = 0;
    assert_int_equal(sscanf(s.needle[0], "VAR %7s = %d", v0, &value), 2);
    assert_true(value >= 10000 && value <= 99999);
    assert_string_equal(v0, s.answer[0]);
    for (int i = 1; i < s.n_needles; i++) {
        assert_int_equal(sscanf(s.needle[i], "VAR %7s = VAR %7s", v, prev), 2);
        assert_string_equal(prev, s.answer[i - 1]);
        assert_string_equal(v, s.answer[i]);
        assert_true(s.after_previous[i]);
    }
    char num[16];
    snprintf(num, sizeof num, "%d", value);
    assert_true(contains(s.question, num));
    recall_text_free(&s);
}

/* ---- lists ---- */

static void test_lists(void **state) {
    (void)state;
    recall_request rq;
    recall_request_default(&rq);
    assert_int_equal(rq.n_tasks, RECALL_TASK_COUNT);
    assert_int_equal(recall_parse_lengths(&rq, "1k,2048"), 0);
    assert_int_equal(rq.n_lengths, 2);
    assert_int_equal(rq.lengths[0], 1024);
    assert_int_equal(rq.lengths[1], 2048);
    assert_int_equal(recall_parse_lengths(&rq, "12x"), -1);
    assert_int_equal(recall_parse_lengths(&rq, ""), -1);
    assert_int_equal(recall_parse_depths(&rq, "0,33.5,100"), 0);
    assert_true(rq.depths[1] == 33.5);
    assert_int_equal(recall_parse_depths(&rq, "101"), -1);
    assert_int_equal(recall_parse_depths(&rq, "nan"), -1);
    assert_int_equal(recall_parse_tasks(&rq, "vt,passkey"), 0);
    assert_int_equal(rq.n_tasks, 2);
    assert_int_equal(rq.tasks[0], RECALL_VT);
    assert_int_equal(recall_parse_tasks(&rq, "vt,vt"), -1);
    assert_int_equal(recall_parse_tasks(&rq, "needle"), -1);
    assert_non_null(strstr(gf_last_error(), "needle"));
    assert_int_equal(recall_parse_tasks(&rq, "all"), 0);
    assert_int_equal(rq.n_tasks, RECALL_TASK_COUNT);
    model_config cfg = {0};
    cfg.max_seq = 2048;
    assert_int_equal(recall_parse_lengths(&rq, "1k,4k"), 0);
    assert_int_equal(recall_validate(&rq, &cfg), -1);
    assert_non_null(strstr(gf_last_error(), "2048 positions"));
    cfg.max_seq = 4096;
    assert_int_equal(recall_validate(&rq, &cfg), 0);
    rq.samples = 0;
    assert_int_equal(recall_validate(&rq, &cfg), -1);
}

/* ---- prompts and runs on stories260K ---- */

static model teacher;

static int setup(void **state) {
    (void)state;
    return stories_load(&teacher) < 0 ? -1 : 0; /* not there: those tests skip */
}

static int teardown(void **state) {
    (void)state;
    if (teacher.tok) model_free(&teacher);
    return 0;
}

/* where needle text x starts in the decoded prompt, as a share of its length */
static double where(const tokenizer *tok, const int_vec *ids, const char *x) {
    char *t = tokenizer_decode(tok, ids->data, ids->len, NULL);
    const char *p = strstr(t, x);
    double r = p ? (double)(p - t) / (double)strlen(t) : -1;
    free(t);
    return r;
}

static void test_prompt_exact_and_ordered(void **state) {
    (void)state;
    if (!teacher.tok) skip();
    recall_haystack h;
    assert_int_equal(recall_haystack_repeat(&h, teacher.tok, RECALL_CHAT_AUTO), 0);
    assert_int_equal(h.chat, RECALL_CHAT_NONE); /* llama2.c: no template tokens */
    double prev = -1;
    for (int d = 0; d <= 4; d++) {
        recall_text s;
        int_vec ids = {0};
        assert_int_equal(recall_text_make(&s, RECALL_PASSKEY, d / 4.0, 11), 0);
        assert_int_equal(recall_prompt_build(&h, &s, 480, 11, &ids), 0);
        assert_int_equal((int)ids.len, 480);
        assert_int_equal(ids.data[0], tokenizer_bos(teacher.tok));
        const double w = where(teacher.tok, &ids, s.needle[0]);
        assert_true(w > prev); /* deeper needles come later */
        prev = w;
        recall_text_free(&s);
        int_vec_free(&ids);
    }
    /* too few tokens for the instruction, question and needles */
    recall_text s;
    int_vec ids = {0};
    assert_int_equal(recall_text_make(&s, RECALL_MULTIQUERY, 0.5, 1), 0);
    assert_int_equal(recall_prompt_build(&h, &s, 64, 1, &ids), -1);
    assert_non_null(strstr(gf_last_error(), "too few"));
    recall_text_free(&s);
    int_vec_free(&ids);
    /* a chain keeps its order */
    assert_int_equal(recall_text_make(&s, RECALL_VT, 0.2, 5), 0);
    assert_int_equal(recall_prompt_build(&h, &s, 500, 5, &ids), 0);
    for (int i = 1; i < s.n_needles; i++)
        assert_true(where(teacher.tok, &ids, s.needle[i]) > where(teacher.tok, &ids, s.needle[i - 1]));
    recall_text_free(&s);
    int_vec_free(&ids);
    recall_haystack_free(&h);
}

static void test_file_haystack(void **state) {
    (void)state;
    if (!teacher.tok) skip();
    char path[] = "/tmp/graft_recall_hayXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "Tom saw a big red ball. He ran to it! Was it his? The sun was warm and bright.\n";
    for (int i = 0; i < 20; i++) assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    recall_haystack h;
    assert_int_equal(recall_haystack_file(&h, teacher.tok, RECALL_CHAT_NONE, path, 1 << 20), 0);
    recall_text s;
    int_vec ids = {0};
    assert_int_equal(recall_text_make(&s, RECALL_NIAH_NUMBER, 0.5, 2), 0);
    assert_int_equal(recall_prompt_build(&h, &s, 400, 2, &ids), 0);
    assert_int_equal((int)ids.len, 400);
    char *t = tokenizer_decode(teacher.tok, ids.data, ids.len, NULL);
    const char *p = strstr(t, s.needle[0]);
    assert_non_null(p);
    while (p > t && p[-1] == ' ') p--; /* the needle's own space (and llama2.c's before each piece) */
    assert_true(p > t && strchr(".!?\n", p[-1]) != NULL); /* after a sentence's end */
    free(t);
    recall_text_free(&s);
    int_vec_free(&ids);
    recall_haystack_free(&h);
    /* a text without any sentence end has nowhere to put a needle */
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "no end here", 11), 11);
    close(fd);
    assert_int_equal(recall_haystack_file(&h, teacher.tok, RECALL_CHAT_NONE, path, 1 << 20), -1);
    unlink(path);
    assert_int_equal(recall_haystack_file(&h, teacher.tok, RECALL_CHAT_NONE, path, 1 << 20), -1);
}

typedef struct {
    int n;
    int_vec ids[8];
} collected;

static void collect(void *ud, const recall_sample *s) {
    collected *c = ud;
    if (c->n >= 8) return;
    assert_true(s->score >= 0 && s->score <= 1);
    for (int i = 0; i < s->n_ids; i++) int_vec_push(&c->ids[c->n], s->ids[i]);
    c->n++;
}

static void test_run(void **state) {
    (void)state;
    if (!teacher.tok) skip();
    transformer tf;
    assert_int_equal(tf_view(&tf, &teacher, NULL, NULL, NULL), 0);
    recall_request rq;
    recall_request_default(&rq);
    assert_int_equal(recall_parse_tasks(&rq, "passkey"), 0);
    assert_int_equal(recall_parse_lengths(&rq, "256"), 0);
    assert_int_equal(recall_parse_depths(&rq, "0,100"), 0);
    rq.samples = 2;
    recall_result r1, r2;
    collected c1 = {0}, c2 = {0};
    rq.batch = 1;
    assert_int_equal(recall_run(&tf, &teacher, &rq, NULL, collect, &c1, &r1), 0);
    rq.batch = 2;
    assert_int_equal(recall_run(&tf, &teacher, &rq, NULL, collect, &c2, &r2), 0);
    assert_int_equal(r1.n_cells, 2);
    assert_int_equal(r2.batch, 2);
    for (int i = 0; i < r1.n_cells; i++) {
        assert_int_equal(r1.cells[i].n, 2);
        assert_true(r1.cells[i].correct >= 0 && r1.cells[i].correct <= 2);
        assert_int_equal(r1.cells[i].length, 256);
    }
    assert_true(r1.cells[1].depth == 100);
    /* the prompts do not depend on the batch */
    assert_int_equal(c1.n, 4);
    assert_int_equal(c2.n, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal((int)c1.ids[i].len, 256 - recall_task_max_new(RECALL_PASSKEY));
        assert_memory_equal(c1.ids[i].data, c2.ids[i].data, c1.ids[i].len * sizeof(int));
        int_vec_free(&c1.ids[i]);
        int_vec_free(&c2.ids[i]);
    }
    cJSON *j = recall_result_json(&r1, &rq, "stories260K");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "cells")), 2);
    assert_non_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cells"), 0), "accuracy"));
    cJSON_Delete(j);
    recall_result_free(&r1);
    recall_result_free(&r2);
    /* beyond the model's positions, and cancelled */
    assert_int_equal(recall_parse_lengths(&rq, "4096"), 0);
    assert_int_equal(recall_run(&tf, &teacher, &rq, NULL, NULL, NULL, &r1), -1);
    assert_non_null(strstr(gf_last_error(), "positions"));
    assert_int_equal(recall_parse_lengths(&rq, "256"), 0);
    atomic_int cancel = 1;
    progress_sink pr = {NULL, NULL, &cancel};
    assert_int_equal(recall_run(&tf, &teacher, &rq, &pr, NULL, NULL, &r1), -1);
    assert_string_equal(gf_last_error(), "cancelled");
    tf_free(&tf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_score_hand_cases),
        cmocka_unit_test(test_generators),
        cmocka_unit_test(test_keys_asked),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_prompt_exact_and_ordered),
        cmocka_unit_test(test_file_haystack),
        cmocka_unit_test(test_run),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
