/* Tokenizers: llama2.c tokenizer.bin, Hugging Face tokenizer.json (byte-level
 * BPE as in Qwen2/2.5/3 and Llama 3; SentencePiece-style BPE with Metaspace and
 * byte fallback as in Llama 2 and TinyLlama), and later GGUF metadata.
 * One opaque type; the loader decides the flavour. */
#ifndef GRAFT_TOKENIZER_TOKENIZER_H
#define GRAFT_TOKENIZER_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>

#include "core/vec.h"

typedef struct tokenizer tokenizer;

/* llama2.c format: uint32 max_token_length, then per token: float score,
 * int32 length, bytes. vocab_size comes from the checkpoint header. */
int tokenizer_load_llama2c(tokenizer **out, const char *path, int vocab_size);

/* Hugging Face tokenizer.json with a BPE model: byte-level (kind
 * "bpe-bytelevel": Qwen2/2.5/3, Llama 3) or SentencePiece-style with "\u2581"
 * and byte fallback (kind "bpe-sentencepiece": Llama 2, TinyLlama). BOS/EOS
 * come from tokenizer_config.json beside it when present (bos_token null:
 * no BOS), else from well-known added tokens (<s>, <|begin_of_text|>, ...).
 * The post_processor is not applied: add_bos alone adds BOS.
 * Encoding first replaces each maximal ill-formed UTF-8 subsequence by
 * U+FFFD (Python's bytes.decode("utf-8", errors="replace")); ids then match
 * the tokenizers library fed that string. */
int tokenizer_load_hf(tokenizer **out, const char *path);


void tokenizer_free(tokenizer *t);

/* Appends the ids of text[0..len) to ids. add_bos prepends BOS when the
 * tokenizer has one. Never fails on any byte string (invalid UTF-8 included). */
void tokenizer_encode(const tokenizer *t, const char *text, size_t len, bool add_bos, int_vec *ids);

/* Text of ids (malloc'd, NUL-terminated; *len_out gets the byte length).
 * BOS is left out (but still conditions the next piece, as in llama2.c);
 * other special tokens are rendered as their text. The result is raw bytes:
 * a slice of ids may end inside a UTF-8 sequence. For SentencePiece-style
 * tokenizers one leading space is dropped at the start and after BOS. */
char *tokenizer_decode(const tokenizer *t, const int *ids, size_t n, size_t *len_out);

/* The text of one token as it would appear after `prev` (llama2.c strips the
 * leading space after BOS); malloc'd. */
char *tokenizer_decode_piece(const tokenizer *t, int prev, int id);

int tokenizer_bos(const tokenizer *t); /* -1 when none */
int tokenizer_eos(const tokenizer *t); /* -1 when none */
int tokenizer_vocab_size(const tokenizer *t);
const char *tokenizer_kind(const tokenizer *t); /* "llama2c", "bpe-bytelevel", "bpe-sentencepiece" */

#endif
