/* Long-context recall tasks in the manner of RULER (Hsieh et al. 2024), the
 * families that need no external data, and their scoring:
 *
 *   passkey      the classic pass-key prompt: a five-digit key in filler
 *   niah-number  one needle "One of the special magic numbers for KEY is: V."
 *                (word key, seven-digit value; RULER's niah_single_1)
 *   niah-word    the same with a word value (adjective-noun)
 *   multikey     four needles of four keys, one asked (niah_multikey_1)
 *   multivalue   four values of one key, all asked (niah_multivalue)
 *   multiquery   four keys, all asked (niah_multiquery)
 *   vt           variable tracking: one chain VAR A = 12345, VAR B = VAR A,
 *                ... of four hops; every variable holding the value is asked
 *
 * A sample is made as text pieces (recall_text): the instruction before the
 * context, the needles with where each goes (a depth in [0, 1], or random),
 * the question and the answer's opening after it, and the answers. The
 * prompt itself is assembled in tokens (recall_prompt.h) so that its length
 * is exact. Scoring is RULER's string_match_all: a sample scores the share of
 * its answers found, case-insensitively, in the generated text. */
#ifndef GRAFT_EVAL_RECALL_TASK_H
#define GRAFT_EVAL_RECALL_TASK_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    RECALL_PASSKEY,
    RECALL_NIAH_NUMBER,
    RECALL_NIAH_WORD,
    RECALL_MULTIKEY,
    RECALL_MULTIVALUE,
    RECALL_MULTIQUERY,
    RECALL_VT,
    RECALL_TASK_COUNT
} recall_task;

const char *recall_task_name(recall_task t);
/* -1 with "unknown recall task 'x' (expected ...)" */
int recall_task_parse(const char *name, recall_task *out);
/* Tokens a sample may generate (RULER's tokens_to_generate, cut to what the
 * answers need: the prompt of a length-L cell has L minus this many tokens). */
int recall_task_max_new(recall_task t);

#define RECALL_MAX_NEEDLES 8
#define RECALL_MAX_ANSWERS 8

typedef struct {
    char *head;                         /* instruction before the context */
    char *needle[RECALL_MAX_NEEDLES];   /* in context order when placed at the same point */
    double depth[RECALL_MAX_NEEDLES];   /* where: share of the context before it, [0, 1]; < 0: random */
    bool after_previous[RECALL_MAX_NEEDLES]; /* random, but after needle i-1 (a chain's order) */
    int n_needles;
    char *question;                     /* after the context */
    char *opening;                      /* the answer's first words (RULER's answer prefix) */
    char *answer[RECALL_MAX_ANSWERS];
    int n_answers;
} recall_text;

/* One sample of task t with its asked needle at depth (in [0, 1]), drawn from
 * seed. The question and the answer's opening are apart so that a chat
 * template's turn change can go between them. */
int recall_text_make(recall_text *out, recall_task t, double depth, uint64_t seed);
void recall_text_free(recall_text *s);

/* RULER's string_match_all for one sample: the share of answers[0..n) that
 * occur in pred, ignoring case, in [0, 1]. */
double recall_score(const char *pred, char *const *answers, int n);

#endif
