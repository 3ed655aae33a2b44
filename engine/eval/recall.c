#include "eval/recall.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"

void recall_request_default(recall_request *rq) {
    memset(rq, 0, sizeof *rq);
    for (int t = 0; t < RECALL_TASK_COUNT; t++) rq->tasks[rq->n_tasks++] = (recall_task)t;
    const int L[] = {1024, 2048, 4096};
    for (int i = 0; i < 3; i++) rq->lengths[rq->n_lengths++] = L[i];
    for (int d = 0; d <= 100; d += 25) rq->depths[rq->n_depths++] = d;
    rq->samples = 4;
    rq->chat = RECALL_CHAT_AUTO;
}

/* splits list at commas into items (copied into buf); returns the count or -1 */
static int split(const char *what, const char *list, char *buf, size_t n, char **items, int max) {
    if (!list || !*list) return gf_fail("%s: an empty list", what);
    if (strlen(list) >= n) return gf_fail("%s: the list is too long", what);
    strcpy(buf, list);
    int k = 0;
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (k == max) return gf_fail("%s: at most %d items", what, max);
        items[k++] = p;
    }
    if (k == 0) return gf_fail("%s: an empty list", what);
    return k;
}

int recall_parse_tasks(recall_request *rq, const char *list) {
    char buf[512], *items[RECALL_TASK_COUNT + 1];
    if (list && strcmp(list, "all") == 0) {
        rq->n_tasks = 0;
        for (int t = 0; t < RECALL_TASK_COUNT; t++) rq->tasks[rq->n_tasks++] = (recall_task)t;
        return 0;
    }
    int n = split("--tasks", list, buf, sizeof buf, items, RECALL_TASK_COUNT);
    if (n < 0) return -1;
    recall_task got[RECALL_TASK_COUNT];
    for (int i = 0; i < n; i++) {
        if (recall_task_parse(items[i], &got[i]) != 0) return gf_fail_prefix("--tasks");
        for (int j = 0; j < i; j++)
            if (got[j] == got[i]) return gf_fail("--tasks: '%s' is given twice", items[i]);
    }
    memcpy(rq->tasks, got, (size_t)n * sizeof *got);
    rq->n_tasks = n;
    return 0;
}

/* One list item: a length (a whole number in [16, 2^24], "4k" = 4096) or a depth (a percent in [0, 100]). */
static int parse_item(bool length, const char *s, double *out) {
    char *end;
    double v = length ? (double)strtol(s, &end, 10) : strtod(s, &end);
    if (length && end != s && (*end == 'k' || *end == 'K')) v *= 1024, end++;
    if (end == s || *end || !(length ? v >= 16 && v <= (double)(1L << 24) : v >= 0 && v <= 100))
        return length ? gf_fail("--lengths: '%s' is not a whole number of tokens in [16, 16777216] (4k = 4096)", s)
                      : gf_fail("--depths: '%s' is not a percent in [0, 100]", s);
    *out = v;
    return 0;
}

/* The items of list into out[0..n) (the request keeps its old list on an error). */
static int parse_numbers(bool length, const char *list, int max, double *out, int *n_out) {
    char buf[512], *items[RECALL_MAX_DEPTHS > RECALL_MAX_LENGTHS ? RECALL_MAX_DEPTHS : RECALL_MAX_LENGTHS];
    int n = split(length ? "--lengths" : "--depths", list, buf, sizeof buf, items, max);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++)
        if (parse_item(length, items[i], &out[i]) != 0) return -1;
    *n_out = n;
    return 0;
}

int recall_parse_lengths(recall_request *rq, const char *list) {
    double v[RECALL_MAX_LENGTHS];
    int n;
    if (parse_numbers(true, list, RECALL_MAX_LENGTHS, v, &n) != 0) return -1;
    for (int i = 0; i < n; i++) rq->lengths[i] = (int)v[i];
    rq->n_lengths = n;
    return 0;
}

int recall_parse_depths(recall_request *rq, const char *list) {
    double v[RECALL_MAX_DEPTHS];
    int n;
    if (parse_numbers(false, list, RECALL_MAX_DEPTHS, v, &n) != 0) return -1;
    memcpy(rq->depths, v, (size_t)n * sizeof *v);
    rq->n_depths = n;
    return 0;
}

int recall_validate(const recall_request *rq, const model_config *cfg) {
    if (rq->n_tasks < 1 || rq->n_lengths < 1 || rq->n_depths < 1)
        return gf_fail("recall needs at least one task, length and depth");
    if (rq->samples < 1 || rq->samples > 100000) return gf_fail("--samples %d is outside [1, 100000]", rq->samples);
    if (rq->batch < 0 || rq->batch > 4096) return gf_fail("--batch %d is outside [0, 4096] (0: automatic)", rq->batch);
    for (int i = 0; i < rq->n_lengths; i++)
        if (cfg->max_seq > 0 && rq->lengths[i] > cfg->max_seq)
            return gf_fail("--lengths: %d is beyond the model's %d positions (its max_seq; RoPE was trained no "
                           "further)",
                           rq->lengths[i], cfg->max_seq);
    return 0;
}

/* ---- the run ---- */

static int argmax(const float *x, int V) {
    int best = 0;
    for (int i = 1; i < V; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

static bool is_stop(const int *stop, int n, int id) {
    for (int i = 0; i < n; i++)
        if (stop[i] == id) return true;
    return false;
}

/* prompts per forward for prompts of T tokens within S positions */
static int pick_batch(transformer *tf, const recall_request *rq, int T, int S) {
    if (rq->batch > 0) return rq->batch < rq->samples ? rq->batch : rq->samples;
    if (be_is_host(tf->be)) return 1;
    size_t free_b = 0, total_b = 0;
    if (be_mem_info(tf->be, &free_b, &total_b) != 0) return 1;
    tf_run_opts o1 = {.B = 1, .T = T, .S = S, .decode = true, .logit_rows = 1};
    tf_run_opts o2 = o1;
    o2.B = 2, o2.logit_rows = 2;
    const gf_dtype act = be_act(tf->be);
    const bool dev = !be_is_host(tf->be);
    const size_t one = tf_run_measure(&tf->cfg, &tf->gcfg, tf->kind, &o1, act, dev);
    const size_t two = tf_run_measure(&tf->cfg, &tf->gcfg, tf->kind, &o2, act, dev);
    const size_t per = two > one ? two - one : one, budget = free_b / 2;
    int b = budget > one ? 1 + (int)((budget - one) / per) : 1;
    if (b > rq->samples) b = rq->samples;
    return b > 64 ? 64 : b;
}

/* samples of one (task, length, depth) cell, batch at a time */
typedef struct {
    transformer *tf;
    const model *m;
    const recall_request *rq;
    const recall_haystack *hay;
    const progress_sink *pr;
    recall_on_sample on_sample;
    void *ud;
    recall_result *res;
    double done, total; /* progress, in prompt tokens */
    int stop[4], n_stop;
    float *logits;      /* [batch, V] */
} run_ctx;

static uint64_t sample_seed(uint64_t seed, recall_task t, int length, double depth, int i) {
    uint64_t h = seed * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t)t * 0xBF58476D1CE4E5B9ULL + (uint64_t)length * 0x94D049BB133111EBULL;
    h ^= (uint64_t)llround(depth * 1000) * 0xD6E8FEB86659FD93ULL + (uint64_t)i;
    return h;
}

static int run_batch(run_ctx *c, tf_run *r, recall_cell *cell, recall_text *texts, int_vec *prompts, int B, int T,
                     int max_new, int first) {
    const int V = c->m->cfg.vocab_size;
    gf_backend *be = c->tf->be;
    const gf_buf lbuf = tf_run_logits(r, NULL);
    int *flat = gf_malloc((size_t)B * T * sizeof *flat);
    for (int b = 0; b < B; b++) memcpy(flat + (size_t)b * T, prompts[b].data, (size_t)T * sizeof *flat);
    double t0 = clock_now_s();
    int rc = tf_forward(r, flat, B, T, 0, NULL);
    free(flat);
    int_vec *gen = gf_calloc((size_t)B, sizeof *gen);
    bool *done = gf_calloc((size_t)B, sizeof *done);
    int *next = gf_malloc((size_t)B * sizeof *next);
    for (int b = 0; b < B && rc == 0; b++) { /* each prompt's last row */
        tf_logits(r, b * T + T - 1, 1, lbuf);
        rc = be_download(be, c->logits + (size_t)b * V, GF_F32, lbuf, (size_t)V);
    }
    double t1 = clock_now_s();
    c->res->prefill_seconds += t1 - t0;
    c->res->prefill_tokens += (double)B * T;
    int live = B;
    for (int step = 0; rc == 0; step++) {
        for (int b = 0; b < B; b++) {
            next[b] = argmax(c->logits + (size_t)b * V, V);
            if (done[b]) continue;
            if (is_stop(c->stop, c->n_stop, next[b])) done[b] = true, live--;
            else int_vec_push(&gen[b], next[b]), c->res->generated_tokens++;
            if (!done[b] && (int)gen[b].len >= max_new) done[b] = true, live--;
        }
        if (live == 0 || T + step + 1 >= T + max_new) break;
        if (progress_cancelled(c->pr)) {
            rc = gf_fail("cancelled");
            break;
        }
        if ((rc = tf_forward(r, next, B, 1, T + step, NULL)) != 0) break;
        tf_logits(r, 0, B, lbuf);
        rc = be_download(be, c->logits, GF_F32, lbuf, (size_t)B * V);
    }
    c->res->decode_seconds += clock_now_s() - t1;
    for (int b = 0; b < B && rc == 0; b++) {
        char *pred = tokenizer_decode(c->m->tok, gen[b].data, gen[b].len, NULL);
        const double score = recall_score(pred, texts[b].answer, texts[b].n_answers);
        cell->correct += score;
        cell->n++;
        if (c->on_sample) {
            const recall_sample s = {cell->task,      cell->length,   first + b,          max_new, cell->depth,
                                     prompts[b].data, T,              pred,               score,   texts[b].answer,
                                     texts[b].n_answers};
            c->on_sample(c->ud, &s);
        }
        free(pred);
    }
    for (int b = 0; b < B; b++) int_vec_free(&gen[b]);
    free(gen);
    free(done);
    free(next);
    return rc;
}

static int run_cell(run_ctx *c, recall_cell *cell) {
    const int max_new = recall_task_max_new(cell->task), L = cell->length, T = L - max_new;
    if (T < 1) return gf_fail("length %d is too short for %s (it answers in up to %d tokens)", L, recall_task_name(cell->task), max_new);
    const int B = pick_batch(c->tf, c->rq, T, L);
    if (B > c->res->batch) c->res->batch = B;
    const tf_run_opts ro = {.B = B, .T = T, .S = L, .decode = true, .logit_rows = B, .cancel = c->pr ? c->pr->cancel : NULL};
    tf_run *r;
    if (tf_run_open(&r, c->tf, &ro) != 0) return -1;
    c->logits = gf_malloc((size_t)B * c->m->cfg.vocab_size * sizeof *c->logits);
    recall_text *texts = gf_calloc((size_t)B, sizeof *texts);
    int_vec *prompts = gf_calloc((size_t)B, sizeof *prompts);
    const double t0 = clock_now_s();
    int rc = 0;
    for (int first = 0; first < c->rq->samples && rc == 0; first += B) {
        const int n = c->rq->samples - first < B ? c->rq->samples - first : B;
        for (int b = 0; b < n && rc == 0; b++) {
            const uint64_t seed = sample_seed(c->rq->seed, cell->task, L, cell->depth, first + b);
            rc = recall_text_make(&texts[b], cell->task, cell->depth / 100.0, seed);
            if (rc == 0) rc = recall_prompt_build(c->hay, &texts[b], T, seed, &prompts[b]);
            if (rc != 0) {
                char where[64];
                snprintf(where, sizeof where, "%s at length %d", recall_task_name(cell->task), L);
                gf_fail_prefix(where);
            }
        }
        if (rc == 0) rc = run_batch(c, r, cell, texts, prompts, n, T, max_new, first);
        for (int b = 0; b < n; b++) {
            recall_text_free(&texts[b]);
            int_vec_free(&prompts[b]);
        }
        c->done += (double)n * L;
        char what[96];
        snprintf(what, sizeof what, "recall %s %d", recall_task_name(cell->task), L);
        progress_report(c->pr, what, c->done, c->total);
        if (rc == 0 && progress_cancelled(c->pr)) rc = gf_fail("cancelled");
    }
    cell->seconds = clock_now_s() - t0;
    free(texts);
    free(prompts);
    free(c->logits);
    c->logits = NULL;
    tf_run_close(r);
    return rc;
}

static int open_haystack(const model *m, const recall_request *rq, recall_haystack *hay) {
    if (!m->tok) return gf_fail("the model has no tokenizer (recall prompts are text)");
    if (recall_validate(rq, &m->cfg) != 0) return -1;
    /* a file haystack: enough of the text for the longest prompt several times over */
    int longest = 0;
    for (int i = 0; i < rq->n_lengths; i++) longest = rq->lengths[i] > longest ? rq->lengths[i] : longest;
    return rq->haystack ? recall_haystack_file(hay, m->tok, rq->chat, rq->haystack, (size_t)longest * 16 + 65536)
                        : recall_haystack_repeat(hay, m->tok, rq->chat);
}

static int check_prompts(const recall_haystack *hay, const recall_request *rq) {
    int rc = 0;
    for (int t = 0; t < rq->n_tasks && rc == 0; t++)
        for (int l = 0; l < rq->n_lengths && rc == 0; l++) {
            const recall_task task = rq->tasks[t];
            const int L = rq->lengths[l], T = L - recall_task_max_new(task);
            if (T < 1)
                return gf_fail("length %d is too short for %s (it answers in up to %d tokens)", L, recall_task_name(task),
                               recall_task_max_new(task));
            for (int d = 0; d < rq->n_depths && rc == 0; d++) {
                const uint64_t seed = sample_seed(rq->seed, task, L, rq->depths[d], 0);
                recall_text text;
                int_vec ids = {0};
                rc = recall_text_make(&text, task, rq->depths[d] / 100.0, seed);
                if (rc == 0) {
                    rc = recall_prompt_build(hay, &text, T, seed, &ids);
                    recall_text_free(&text);
                }
                int_vec_free(&ids);
                if (rc != 0) {
                    char where[64];
                    snprintf(where, sizeof where, "%s at length %d", recall_task_name(task), L);
                    gf_fail_prefix(where);
                }
            }
        }
    return rc;
}

int recall_check_prompts(const model *m, const recall_request *rq) {
    recall_haystack hay;
    if (open_haystack(m, rq, &hay) != 0) return -1;
    const int rc = check_prompts(&hay, rq);
    recall_haystack_free(&hay);
    return rc;
}

int recall_run(transformer *tf, const model *m, const recall_request *rq, const progress_sink *pr,
               recall_on_sample on_sample, void *ud, recall_result *out) {
    memset(out, 0, sizeof *out);
    const double t0 = clock_now_s();
    recall_haystack hay;
    if (open_haystack(m, rq, &hay) != 0) return -1;
    /* every cell's prompt fits before the first cell runs: a long run does not fail at its last length */
    if (check_prompts(&hay, rq) != 0) {
        recall_haystack_free(&hay);
        return -1;
    }
    out->chat = hay.chat;
    out->n_cells = rq->n_tasks * rq->n_lengths * rq->n_depths;
    out->cells = gf_calloc((size_t)out->n_cells, sizeof *out->cells);
    run_ctx c = {tf, m, rq, &hay, pr, on_sample, ud, out, 0, 0, {0}, 0, NULL};
    c.n_stop = recall_chat_stops(m->tok, hay.chat, c.stop, 4);
    int k = 0;
    for (int t = 0; t < rq->n_tasks; t++)
        for (int l = 0; l < rq->n_lengths; l++)
            for (int d = 0; d < rq->n_depths; d++, k++) {
                out->cells[k] = (recall_cell){rq->tasks[t], rq->lengths[l], rq->depths[d], 0, 0, 0};
                c.total += (double)rq->samples * rq->lengths[l];
            }
    int rc = 0;
    for (k = 0; k < out->n_cells && rc == 0; k++) rc = run_cell(&c, &out->cells[k]);
    recall_haystack_free(&hay);
    out->seconds = clock_now_s() - t0;
    if (rc != 0) recall_result_free(out);
    return rc;
}

void recall_result_free(recall_result *r) {
    free(r->cells);
    memset(r, 0, sizeof *r);
}

double recall_result_accuracy(const recall_result *r) {
    double c = 0;
    long n = 0;
    for (int i = 0; i < r->n_cells; i++) c += r->cells[i].correct, n += r->cells[i].n;
    return n > 0 ? c / (double)n : NAN;
}

cJSON *recall_cell_json(const recall_cell *c) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "task", recall_task_name(c->task));
    cJSON_AddNumberToObject(x, "length", c->length);
    cJSON_AddNumberToObject(x, "depth", c->depth);
    cJSON_AddNumberToObject(x, "n", c->n);
    cJSON_AddNumberToObject(x, "correct", c->correct);
    cJSON_AddNumberToObject(x, "accuracy", c->n > 0 ? c->correct / c->n : 0);
    cJSON_AddNumberToObject(x, "seconds", c->seconds);
    return x;
}

cJSON *recall_result_json(const recall_result *r, const recall_request *rq, const char *model_name) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", model_name);
    cJSON *tasks = cJSON_AddArrayToObject(o, "tasks");
    for (int t = 0; t < rq->n_tasks; t++) cJSON_AddItemToArray(tasks, cJSON_CreateString(recall_task_name(rq->tasks[t])));
    cJSON *cells = cJSON_AddArrayToObject(o, "cells");
    for (int i = 0; i < r->n_cells; i++) cJSON_AddItemToArray(cells, recall_cell_json(&r->cells[i]));
    cJSON_AddNumberToObject(o, "seconds", r->seconds);
    cJSON_AddNumberToObject(o, "accuracy", r->n_cells ? recall_result_accuracy(r) : 0);
    cJSON_AddStringToObject(o, "chat", recall_chat_name(r->chat));
    cJSON_AddNumberToObject(o, "samples", rq->samples);
    cJSON_AddNumberToObject(o, "seed", (double)rq->seed);
    cJSON_AddStringToObject(o, "haystack", rq->haystack ? rq->haystack : "repeat");
    cJSON_AddNumberToObject(o, "batch", r->batch);
    cJSON *tp = cJSON_AddObjectToObject(o, "throughput");
    cJSON_AddNumberToObject(tp, "prefill_tokens", r->prefill_tokens);
    cJSON_AddNumberToObject(tp, "prefill_seconds", r->prefill_seconds);
    cJSON_AddNumberToObject(tp, "generated_tokens", r->generated_tokens);
    cJSON_AddNumberToObject(tp, "decode_seconds", r->decode_seconds);
    return o;
}

void recall_result_summary(const recall_result *r, FILE *f) {
    for (int i = 0; i < r->n_cells;) {
        int j = i;
        double c = 0;
        int n = 0;
        for (; j < r->n_cells && r->cells[j].task == r->cells[i].task && r->cells[j].length == r->cells[i].length; j++)
            c += r->cells[j].correct, n += r->cells[j].n;
        fprintf(f, "recall %-12s %6d tokens: %5.1f %% of %d samples (%d depths)\n", recall_task_name(r->cells[i].task),
                r->cells[i].length, n > 0 ? 100.0 * c / n : 0.0, n, j - i);
        i = j;
    }
}
