/* Recall prompts assembled in tokens, so that every prompt of a cell has
 * exactly the length asked (and a cell's samples go through the model as one
 * batch): the instruction (BOS and the chat template's user turn first), the
 * haystack cut to the tokens left, the needles at their depths, the question,
 * the template's turn change and the answer's opening. Each piece is
 * tokenized on its own; a needle goes where a haystack unit (repeat) or a
 * sentence (a text file) ends.
 *
 * The chat template is recognized, not interpreted: a tokenizer with
 * <|im_start|> and <|im_end|> as single tokens gets ChatML (Qwen2/2.5,
 * SmolLM2), one with <|start_header_id|> and <|eot_id|> Llama 3's; no system
 * turn is written. */
#ifndef GRAFT_EVAL_RECALL_PROMPT_H
#define GRAFT_EVAL_RECALL_PROMPT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/vec.h"
#include "eval/recall_task.h"
#include "tokenizer/tokenizer.h"

typedef enum { RECALL_CHAT_AUTO, RECALL_CHAT_NONE, RECALL_CHAT_CHATML, RECALL_CHAT_LLAMA3 } recall_chat;

/* "auto", "none", "chatml", "llama3"; -1 with the expected names */
int recall_chat_parse(const char *name, recall_chat *out);
const char *recall_chat_name(recall_chat c);
/* The template the tokenizer's special tokens name (RECALL_CHAT_NONE when none). */
recall_chat recall_chat_detect(const tokenizer *tok);
/* Ids that end the answer besides EOS (the template's end of turn); returns how many (<= max). */
int recall_chat_stops(const tokenizer *tok, recall_chat c, int *stop, int max);

typedef struct {
    const tokenizer *tok;
    recall_chat chat;        /* resolved (never AUTO) */
    bool file;               /* a text file's sentences; else one repeated filler unit */
    int_vec text;            /* the file's tokens, or the unit's */
    unsigned char *boundary; /* [text.len]: a needle may go before token i (file) */
} recall_haystack;

/* RULER's repeated filler ("The grass is green. ..."), one unit a line. */
int recall_haystack_repeat(recall_haystack *h, const tokenizer *tok, recall_chat chat);
/* The text of path (UTF-8), its first max_bytes bytes; -1 when it cannot be
 * read or holds no sentence end. */
int recall_haystack_file(recall_haystack *h, const tokenizer *tok, recall_chat chat, const char *path,
                         size_t max_bytes);
void recall_haystack_free(recall_haystack *h);

/* The prompt of sample s in exactly n tokens (seed places the needles with
 * random depths and, for a file, where the text starts); -1 with "n tokens
 * are too few: the instruction, question and needles take m" when they do
 * not fit. */
int recall_prompt_build(const recall_haystack *h, const recall_text *s, int n, uint64_t seed, int_vec *ids);

#endif
