#include "eval/recall_prompt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/rng.h"

static const char *const chat_names[] = {"auto", "none", "chatml", "llama3"};

int recall_chat_parse(const char *name, recall_chat *out) {
    for (int i = 0; i < 4; i++)
        if (strcmp(name, chat_names[i]) == 0) {
            *out = (recall_chat)i;
            return 0;
        }
    return gf_fail("unknown chat template '%s' (expected auto, none, chatml or llama3)", name);
}

const char *recall_chat_name(recall_chat c) { return c >= 0 && c <= RECALL_CHAT_LLAMA3 ? chat_names[c] : "?"; }

/* the id of text when the tokenizer reads it as one token, else -1 */
static int single_token(const tokenizer *tok, const char *text) {
    int_vec v = {0};
    tokenizer_encode(tok, text, strlen(text), false, &v);
    int id = v.len == 1 ? v.data[0] : -1;
    int_vec_free(&v);
    return id;
}

recall_chat recall_chat_detect(const tokenizer *tok) {
    if (single_token(tok, "<|im_start|>") >= 0 && single_token(tok, "<|im_end|>") >= 0) return RECALL_CHAT_CHATML;
    if (single_token(tok, "<|start_header_id|>") >= 0 && single_token(tok, "<|eot_id|>") >= 0)
        return RECALL_CHAT_LLAMA3;
    return RECALL_CHAT_NONE;
}

int recall_chat_stops(const tokenizer *tok, recall_chat c, int *stop, int max) {
    int n = 0, id;
    if (max > n && (id = tokenizer_eos(tok)) >= 0) stop[n++] = id;
    const char *end = c == RECALL_CHAT_CHATML ? "<|im_end|>" : c == RECALL_CHAT_LLAMA3 ? "<|eot_id|>" : NULL;
    if (end && max > n && (id = single_token(tok, end)) >= 0) stop[n++] = id;
    return n;
}

static const char *user_open(recall_chat c) {
    return c == RECALL_CHAT_CHATML   ? "<|im_start|>user\n"
           : c == RECALL_CHAT_LLAMA3 ? "<|start_header_id|>user<|end_header_id|>\n\n"
                                     : "";
}
static const char *turn_change(recall_chat c) {
    return c == RECALL_CHAT_CHATML   ? "<|im_end|>\n<|im_start|>assistant\n"
           : c == RECALL_CHAT_LLAMA3 ? "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
                                     : " ";
}

static void encode(const tokenizer *tok, const char *text, bool bos, int_vec *out) {
    tokenizer_encode(tok, text, strlen(text), bos, out);
}

/* RULER's repeat haystack */
static const char filler[] = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.\n";

int recall_haystack_repeat(recall_haystack *h, const tokenizer *tok, recall_chat chat) {
    memset(h, 0, sizeof *h);
    h->tok = tok;
    h->chat = chat == RECALL_CHAT_AUTO ? recall_chat_detect(tok) : chat;
    encode(tok, filler, false, &h->text);
    if (h->text.len == 0) return gf_fail("the tokenizer gives no tokens for the filler text");
    return 0;
}

static bool sentence_end(const char *piece) {
    size_t n = strlen(piece);
    while (n > 0 && piece[n - 1] == ' ') n--;
    return n > 0 && strchr(".!?\n", piece[n - 1]) != NULL;
}

int recall_haystack_file(recall_haystack *h, const tokenizer *tok, recall_chat chat, const char *path,
                         size_t max_bytes) {
    memset(h, 0, sizeof *h);
    h->tok = tok;
    h->chat = chat == RECALL_CHAT_AUTO ? recall_chat_detect(tok) : chat;
    h->file = true;
    FILE *f = fopen(path, "rb");
    if (!f) return gf_fail("%s: %s", path, strerror(errno));
    char *buf = gf_malloc(max_bytes + 1);
    size_t n = fread(buf, 1, max_bytes, f);
    const bool bad = ferror(f);
    fclose(f);
    buf[n] = 0;
    if (bad) {
        free(buf);
        return gf_fail("%s: read error", path);
    }
    tokenizer_encode(tok, buf, n, false, &h->text);
    free(buf);
    h->boundary = gf_malloc(h->text.len + 1);
    size_t ends = 0;
    h->boundary[0] = 1; /* the text's start, as after a sentence */
    for (size_t i = 1; i < h->text.len; i++) {
        char *p = tokenizer_decode_piece(tok, h->text.data[i - 1], h->text.data[i - 1]);
        h->boundary[i] = sentence_end(p);
        ends += h->boundary[i];
        free(p);
    }
    if (ends == 0) {
        recall_haystack_free(h);
        return gf_fail("%s: no sentence end (. ! ? or a line break) in the text to put needles after", path);
    }
    return 0;
}

void recall_haystack_free(recall_haystack *h) {
    int_vec_free(&h->text);
    free(h->boundary);
    memset(h, 0, sizeof *h);
}

/* a needle may go before haystack token j of a haystack starting at text
 * token o (j == H: at its end, when a unit or sentence ends there) */
static bool can_insert(const recall_haystack *h, size_t o, int j) {
    if (j == 0) return true;
    if (!h->file) return j % (int)h->text.len == 0;
    return h->boundary[(o + (size_t)j) % h->text.len];
}

typedef struct {
    int at; /* haystack tokens before it */
    int order;
} placed;

static int cmp_placed(const void *a, const void *b) {
    const placed *x = a, *y = b;
    return x->at != y->at ? (x->at > y->at) - (x->at < y->at) : x->order - y->order;
}

int recall_prompt_build(const recall_haystack *h, const recall_text *s, int n, uint64_t seed, int_vec *ids) {
    const recall_chat c = h->chat;
    int_vec head = {0}, tail = {0}, needle[RECALL_MAX_NEEDLES] = {{0}};
    size_t hl = strlen(user_open(c)) + strlen(s->head) + 2;
    char *text = gf_malloc(hl);
    snprintf(text, hl, "%s%s\n", user_open(c), s->head);
    encode(h->tok, text, true, &head);
    free(text);
    size_t tl = strlen(s->question) + strlen(turn_change(c)) + strlen(s->opening) + 2;
    text = gf_malloc(tl);
    snprintf(text, tl, "\n%s%s%s", s->question, turn_change(c), s->opening);
    encode(h->tok, text, false, &tail);
    free(text);
    long fixed = (long)head.len + (long)tail.len;
    for (int i = 0; i < s->n_needles; i++) {
        size_t nl = strlen(s->needle[i]) + 2;
        text = gf_malloc(nl);
        snprintf(text, nl, h->file ? " %s" : "%s\n", s->needle[i]);
        encode(h->tok, text, false, &needle[i]);
        free(text);
        fixed += (long)needle[i].len;
    }
    const long H = n - fixed;
    int rc = 0;
    if (H < 0) {
        rc = gf_fail("%d tokens are too few: the instruction, question and needles take %ld", n, fixed);
        goto done;
    }
    rng64 r;
    rng_seed2(&r, seed, 0x6e656564);
    const size_t o = h->file ? rng_next(&r) % h->text.len : 0; /* where the file's text starts */
    /* the insertion points: each needle at its depth (or a random one), moved
       to the nearest point where a unit or sentence ends (forward for a chain) */
    placed at[RECALL_MAX_NEEDLES];
    for (int i = 0; i < s->n_needles; i++) {
        const int lo = s->after_previous[i] && i > 0 ? at[i - 1].at : 0;
        const double d = s->depth[i] >= 0 ? s->depth[i] : rng_uniform(&r);
        int want = lo + (int)(d * (double)(H - lo) + 0.5), best = -1;
        for (int dist = 0; best < 0; dist++) {
            if (want - dist >= lo && can_insert(h, o, want - dist)) best = want - dist;
            else if (want + dist <= H && can_insert(h, o, want + dist)) best = want + dist;
        }
        at[i] = (placed){best, i};
    }
    qsort(at, (size_t)s->n_needles, sizeof *at, cmp_placed);
    int_vec_reserve(ids, ids->len + (size_t)n);
    for (size_t i = 0; i < head.len; i++) int_vec_push(ids, head.data[i]);
    int k = 0;
    for (int j = 0; j <= H; j++) {
        for (; k < s->n_needles && at[k].at == j; k++) {
            const int_vec *nd = &needle[at[k].order];
            for (size_t i = 0; i < nd->len; i++) int_vec_push(ids, nd->data[i]);
        }
        if (j < H) int_vec_push(ids, h->text.data[(o + (size_t)j) % h->text.len]);
    }
    for (size_t i = 0; i < tail.len; i++) int_vec_push(ids, tail.data[i]);
done:
    int_vec_free(&head);
    int_vec_free(&tail);
    for (int i = 0; i < s->n_needles; i++) int_vec_free(&needle[i]);
    return rc;
}
