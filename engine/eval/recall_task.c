#include "eval/recall_task.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/rng.h"

static const char *const task_names[RECALL_TASK_COUNT] = {
    "passkey", "niah-number", "niah-word", "multikey", "multivalue", "multiquery", "vt",
};

/* enough for the answers in the tokenizers graft reads (a seven-digit value
 * is at most 7 tokens + punctuation; four of them with "and"), with room for
 * a model that restates the question first */
static const int task_max_new[RECALL_TASK_COUNT] = {24, 32, 40, 32, 72, 72, 48};

const char *recall_task_name(recall_task t) { return t >= 0 && t < RECALL_TASK_COUNT ? task_names[t] : "?"; }

int recall_task_parse(const char *name, recall_task *out) {
    for (int t = 0; t < RECALL_TASK_COUNT; t++)
        if (strcmp(name, task_names[t]) == 0) {
            *out = (recall_task)t;
            return 0;
        }
    return gf_fail("unknown recall task '%s' (expected passkey, niah-number, niah-word, multikey, multivalue, "
                   "multiquery or vt)",
                   name);
}

int recall_task_max_new(recall_task t) { return task_max_new[t]; }

/* Keys and word values: adjective-noun pairs as RULER's, from our own short lists (1,600 pairs). */
static const char *const adjectives[] = {
    "ancient", "bitter", "brave", "calm",    "clever", "crimson", "curious", "distant", "eager",  "fancy",
    "fierce",  "gentle", "golden", "hollow", "humble", "icy",     "jolly",   "lively",  "lonely", "loud",
    "lucky",   "mellow", "misty",  "narrow", "noble",  "odd",     "pale",    "polite",  "proud",  "quiet",
    "rapid",   "rusty",  "silent", "silver", "sleepy", "steady",  "swift",   "tender",  "velvet", "wild",
};
static const char *const nouns[] = {
    "anchor", "badger",  "basket", "beacon", "canyon", "castle", "comet",   "dragon", "falcon", "feather",
    "forest", "garden",  "glacier", "harbor", "helmet", "island", "lantern", "meadow", "mirror", "orchard",
    "otter",  "panther", "pebble", "pillow", "pirate", "planet", "puzzle",  "rabbit", "ribbon", "river",
    "saddle", "shadow",  "spider", "statue", "teapot", "thunder", "tractor", "violin", "walrus", "window",
};
#define N_ADJ (sizeof adjectives / sizeof *adjectives)
#define N_NOUN (sizeof nouns / sizeof *nouns)

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
    va_list a, b;
    va_start(a, f);
    va_copy(b, a);
    int n = vsnprintf(NULL, 0, f, a);
    va_end(a);
    char *s = gf_malloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, f, b);
    va_end(b);
    return s;
}

static uint64_t below(rng64 *r, uint64_t n) { return rng_next(r) % n; }

static char *word(rng64 *r) { return fmt("%s-%s", adjectives[below(r, N_ADJ)], nouns[below(r, N_NOUN)]); }
static char *number(rng64 *r, int digits) {
    long lo = 1;
    for (int i = 1; i < digits; i++) lo *= 10;
    return fmt("%ld", lo + (long)below(r, (uint64_t)(9 * lo)));
}
static char *variable(rng64 *r) {
    char v[6];
    for (int i = 0; i < 5; i++) v[i] = (char)('A' + below(r, 26));
    v[5] = 0;
    return gf_strdup(v);
}

static bool taken(char *const *xs, int n, const char *x) {
    for (int i = 0; i < n; i++)
        if (strcmp(xs[i], x) == 0) return true;
    return false;
}

/* n distinct strings from make(r) (the lists are large enough for n <= 8) */
static void distinct(char **out, int n, rng64 *r, char *(*make)(rng64 *)) {
    for (int i = 0; i < n;) {
        char *x = make(r);
        if (taken(out, i, x)) free(x);
        else out[i++] = x;
    }
}
static char *number7(rng64 *r) { return number(r, 7); }

/* "a", "a and b", "a, b, and c" (RULER joins its queries so) */
static char *join_and(char *const *xs, int n) {
    size_t len = 1;
    for (int i = 0; i < n; i++) len += strlen(xs[i]) + 6;
    char *s = gf_malloc(len);
    s[0] = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0) strcat(s, n > 2 ? (i == n - 1 ? ", and " : ", ") : " and ");
        strcat(s, xs[i]);
    }
    return s;
}

static void add_needle(recall_text *s, char *text, double depth, bool after_previous) {
    GF_ASSERT(s->n_needles < RECALL_MAX_NEEDLES);
    s->needle[s->n_needles] = text;
    s->depth[s->n_needles] = depth;
    s->after_previous[s->n_needles++] = after_previous;
}

/* RULER's needle-in-a-haystack template: n_keys needles of n_values each
 * (value type "numbers" or "words"), the first n_query keys asked; the first
 * asked needle goes at depth, the others anywhere. */
static void niah(recall_text *s, rng64 *r, int n_keys, int n_values, int n_query, bool word_values, double depth) {
    const char *type = word_values ? "words" : "numbers";
    const bool one = n_query * n_values == 1;
    char *keys[RECALL_MAX_NEEDLES] = {0}, *values[RECALL_MAX_NEEDLES] = {0};
    distinct(keys, n_keys, r, word);
    distinct(values, n_keys * n_values, r, word_values ? word : number7);
    for (int k = 0; k < n_keys; k++)
        for (int v = 0; v < n_values; v++)
            add_needle(s, fmt("One of the special magic %s for %s is: %s.", type, keys[k], values[k * n_values + v]),
                       k == 0 && v == 0 ? depth : -1, false);
    for (int q = 0; q < n_query; q++)
        for (int v = 0; v < n_values; v++) s->answer[s->n_answers++] = gf_strdup(values[q * n_values + v]);
    char *query = join_and(keys, n_query);
    /* RULER's singular form when one value is asked */
    const int tl = (int)strlen(type) - (one ? 1 : 0);
    s->head = one ? fmt("A special magic %.*s is hidden within the following text. Make sure to memorize it. "
                        "I will quiz you about the %.*s afterwards.",
                        tl, type, tl, type)
                  : fmt("Some special magic %s are hidden within the following text. Make sure to memorize it. "
                        "I will quiz you about the %s afterwards.",
                        type, type);
    s->question = one ? fmt("What is the special magic %.*s for %s mentioned in the provided text?", tl, type, query)
                      : fmt("What are all the special magic %s for %s mentioned in the provided text?", type, query);
    s->opening = one ? fmt("The special magic %.*s for %s mentioned in the provided text is", tl, type, query)
                     : fmt("The special magic %s for %s mentioned in the provided text are", type, query);
    free(query);
    for (int i = 0; i < n_keys; i++) free(keys[i]);
    for (int i = 0; i < n_keys * n_values; i++) free(values[i]);
}

/* RULER's variable tracking, one chain of four hops, no in-context example */
static void vt(recall_text *s, rng64 *r, double depth) {
    enum { HOPS = 4 };
    char *vars[HOPS + 1] = {0};
    distinct(vars, HOPS + 1, r, variable);
    char *value = number(r, 5);
    add_needle(s, fmt("VAR %s = %s", vars[0], value), depth, false);
    for (int i = 1; i <= HOPS; i++) add_needle(s, fmt("VAR %s = VAR %s", vars[i], vars[i - 1]), -1, true);
    for (int i = 0; i <= HOPS; i++) s->answer[s->n_answers++] = vars[i];
    s->head = gf_strdup("Memorize and track the chain(s) of variable assignment hidden in the following text.\n");
    s->question = fmt("Question: Find all variables that are assigned the value %s in the text above.", value);
    s->opening = fmt("Answer: According to the chain(s) of variable assignment in the text above, %d variables are "
                     "assigned the value %s, they are:",
                     HOPS + 1, value);
    free(value);
}

int recall_text_make(recall_text *out, recall_task t, double depth, uint64_t seed) {
    memset(out, 0, sizeof *out);
    if (!(depth >= 0 && depth <= 1)) return gf_fail("recall depth %g is outside [0, 1]", depth);
    rng64 r;
    rng_seed2(&r, seed, (uint64_t)t);
    switch (t) {
    case RECALL_PASSKEY: {
        char *key = number(&r, 5);
        out->head = gf_strdup("There is an important info hidden inside a lot of irrelevant text. Find it and "
                              "memorize it. I will quiz you about the important information there.");
        add_needle(out, fmt("The pass key is %s. Remember it. %s is the pass key.", key, key), depth, false);
        out->question = gf_strdup("What is the pass key?");
        out->opening = gf_strdup("The pass key is");
        out->answer[out->n_answers++] = key;
        break;
    }
    case RECALL_NIAH_NUMBER: niah(out, &r, 1, 1, 1, false, depth); break;
    case RECALL_NIAH_WORD: niah(out, &r, 1, 1, 1, true, depth); break;
    case RECALL_MULTIKEY: niah(out, &r, 4, 1, 1, false, depth); break;
    case RECALL_MULTIVALUE: niah(out, &r, 1, 4, 1, false, depth); break;
    case RECALL_MULTIQUERY: niah(out, &r, 4, 1, 4, false, depth); break;
    case RECALL_VT: vt(out, &r, depth); break;
    default: return gf_fail("recall task %d does not exist", (int)t);
    }
    return 0;
}

void recall_text_free(recall_text *s) {
    free(s->head);
    free(s->question);
    free(s->opening);
    for (int i = 0; i < s->n_needles; i++) free(s->needle[i]);
    for (int i = 0; i < s->n_answers; i++) free(s->answer[i]);
    memset(s, 0, sizeof *s);
}

static char *lower(const char *s) {
    char *o = gf_strdup(s);
    for (char *p = o; *p; p++) *p = (char)tolower((unsigned char)*p);
    return o;
}

double recall_score(const char *pred, char *const *answers, int n) {
    if (n <= 0) return 0;
    char *p = lower(pred);
    int found = 0;
    for (int i = 0; i < n; i++) {
        char *a = lower(answers[i]);
        found += strstr(p, a) != NULL;
        free(a);
    }
    free(p);
    return (double)found / n;
}
