/* Internals of the Hugging Face tokenizer.json flavours, shared by the loader
 * (hf_tokenizer_load.c), the encode pipeline (hf_encode.c), the decoder
 * (hf_decode.c) and the pieces (bpe_model.c, added_tokens.c, pretokenize.c,
 * normalize.c, bytelevel.c; NFC in nfc.c, UTF-8 repair in utf8.c).
 *
 * Encoding follows the tokenizers library: added tokens are cut out of the
 * raw text first, then each remaining segment is normalized, pre-tokenized
 * into words, and each word goes through the BPE model. */
#ifndef GRAFT_TOKENIZER_HF_TOKENIZER_H
#define GRAFT_TOKENIZER_HF_TOKENIZER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/strmap.h"
#include "core/vec.h"

/* ---- added tokens (added_tokens.c) ---- */

typedef struct {
    char *content;      /* as written (decoding renders this) */
    size_t len;
    char *match;        /* what is searched: content, normalized when `normalized` */
    size_t match_len;
    int id;
    bool special, normalized, lstrip, rstrip, single_word;
} added_token;

typedef struct {
    added_token *tok;
    int n;
    /* per first byte, indices into tok sorted by decreasing length; two sets:
     * tokens matched in raw text and tokens matched after normalization */
    int *raw_first[256], raw_count[256];
    int *norm_first[256], norm_count[256];
    bool any_norm;
} added_vocab;

/* One piece of text: an added token (id >= 0) or plain text (id = -1). */
typedef struct {
    size_t off, len;
    int id;
} text_span;

typedef struct {
    text_span *a;
    size_t n, cap;
} span_list;

void span_push(span_list *l, size_t off, size_t len, int id);
void added_vocab_index(added_vocab *av);
void added_vocab_free(added_vocab *av);
/* Splits s[0..len) on the tokens with normalized == want_normalized; appends
 * spans (text spans may be empty only when no token matched at all). */
void added_vocab_split(const added_vocab *av, bool want_normalized, const char *s, size_t len, span_list *out);

/* ---- normalizers (normalize.c) ---- */

typedef enum { NORM_NFC, NORM_PREPEND, NORM_REPLACE } norm_kind;

typedef struct {
    norm_kind kind;
    char *a, *b; /* PREPEND: a; REPLACE: a -> b */
    size_t alen, blen;
} norm_op;

/* A growable byte buffer. */
typedef struct {
    char *p;
    size_t len, cap;
} byte_buf;

void byte_buf_set(byte_buf *b, const char *s, size_t n);
void byte_buf_append(byte_buf *b, const char *s, size_t n);

/* Applies ops to b in place (tmp is scratch). */
void normalize_apply(const norm_op *ops, int n, byte_buf *b, byte_buf *tmp);

/* NFC makes UTF-8 text at most 3 times longer (UAX #15, "Stream-Safe Text
 * Format" and its expansion table); real tokenizers' normalizers grow text
 * less than 10x (Llama 2: Replace " " -> U+2581 is 3x). A Sequence of
 * Replace ops can grow it exponentially, so tokenizers whose normalizers can
 * make a text more than NORM_MAX_GROWTH times longer are refused on load. */
enum { NORM_NFC_GROWTH = 3, NORM_MAX_GROWTH = 64 };
/* 0, or -1 with an error naming path when ops can grow a text too much. */
int normalize_check_growth(const norm_op *ops, int n, const char *path);

/* ---- pre-tokenizers (pretokenize.c) ---- */

typedef enum { PRE_SPLIT_REGEX, PRE_BYTELEVEL, PRE_METASPACE } pre_kind;

typedef enum { PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER } prepend_scheme;

typedef struct {
    pre_kind kind;
    void *regex;        /* pcre2_code_8 * for SPLIT_REGEX and ByteLevel use_regex */
    char *pattern;      /* SPLIT_REGEX: the pattern as given, kept for tokenizer.json export */
    bool pattern_literal; /* that pattern is a plain string ({"String": ...}), not a regex */
    bool add_prefix_space;     /* ByteLevel */
    char meta[8];              /* Metaspace replacement, UTF-8 */
    size_t meta_len;
    prepend_scheme scheme;
    bool split;
} pre_op;

/* Words: spans into buf. */
typedef struct {
    byte_buf buf;
    span_list words;
} word_list;

/* Compiles a tokenizers-library regex with PCRE2 (UTF, UCP, JIT). Returns
 * NULL with an error set when it does not compile. */
void *pretok_regex_compile(const char *pattern);
void pretok_regex_free(void *re);
/* Runs ops on text, writing the words into out (reset first). first_segment:
 * the text starts the input (Metaspace prepend_scheme "first"). */
void pretokenize(const pre_op *ops, int n, const char *text, size_t len, bool first_segment, word_list *out,
                 word_list *tmp);

/* ---- BPE model (bpe_model.c) ---- */

typedef struct {
    uint64_t *keys; /* (left << 32 | right) + 1, 0 = empty */
    int *vals;      /* merge rank */
    size_t cap;
} pair_map;

typedef struct {
    strmap vocab;         /* piece -> id (model vocabulary only) */
    char **pieces;        /* [vocab_size] text of every id, added tokens included; NULL for holes */
    int *piece_len;
    bool *is_added;       /* [vocab_size] */
    int vocab_size;
    pair_map merges;
    int *merge_result;    /* [n_merges] id of the merged token, by rank */
    int n_merges;
    bool byte_fallback, fuse_unk, ignore_merges;
    int unk_id;           /* -1 when none */
    bool bytelevel;       /* symbols are GPT-2 byte characters */
    int byte_sym[256];    /* bytelevel: id of each byte's character; else id of <0xXX> or -1 */
    int *byte_of_token;   /* [vocab_size] sentencepiece: byte value of <0xXX> tokens, else -1 */
    float *merge_priority;/* [n_merges] or NULL: merge r's priority (higher first, ties leftmost);
                             NULL: by rank (lower first). GGUF SentencePiece: the merged token's score */
    /* per-word cache: word bytes -> ids; short words first try a direct-mapped
     * front cache whose entries hold everything in one cache line */
    pthread_mutex_t cache_lock;
    struct front_entry *front; /* [FRONT_SIZE] */
    strmap cache;
    int_vec cache_ids;    /* concatenated id runs; run k starts at cache_off[k] */
    int_vec cache_off;
} bpe_model;

void pair_map_init(pair_map *m, size_t expected);
void pair_map_put(pair_map *m, int a, int b, int rank);
int pair_map_get(const pair_map *m, int a, int b);
void bpe_model_free(bpe_model *m);
/* Appends the ids of one pre-tokenized word (after the byte mapping for
 * byte-level models). */
void bpe_model_encode_word(bpe_model *m, const char *w, size_t len, int_vec *ids);

/* ---- byte-level mapping (bytelevel.c) ---- */

/* GPT-2's byte -> code point map and its inverse (-1 for other code points). */
uint32_t bytelevel_char(unsigned char b);
int bytelevel_byte(uint32_t cp);

/* ---- the whole tokenizer ---- */

typedef struct {
    bpe_model model;
    added_vocab added;
    norm_op *norm;
    int n_norm;
    pre_op *pre;
    int n_pre;
    /* decoder */
    bool dec_bytelevel;     /* inverse byte map */
    bool dec_byte_fallback; /* <0xXX> -> byte */
    char dec_meta[8];       /* replaced by a space when dec_meta_len > 0 */
    size_t dec_meta_len;
    bool dec_strip_first;   /* one leading space of the first piece goes */
    short dec_byte[0x144];  /* byte of each GPT-2 byte character, -1 for others */
} hf_tokenizer;

/* Building an hf_tokenizer without tokenizer.json (GGUF metadata): allocate
 * it with gf_calloc and pthread_mutex_init(&h->model.cache_lock), fill the
 * model (vocab, pieces, piece_len, is_added, byte_of_token all -1, merges,
 * flags, unk_id, bytelevel), the added tokens, normalizers, pre-tokenizers and
 * decoder flags, then call hf_tokenizer_finish (indexes the added tokens,
 * builds the byte tables and the cache; -1 with an error naming path) and
 * hf_tokenizer_wrap, which takes ownership. A byte-level vocabulary may lack
 * some byte characters (SmolLM2's GGUF does, and so the tokenizer.json graft
 * writes for it): those bytes are dropped, or become unk_id when there is one,
 * as the tokenizers library does. */
int hf_tokenizer_finish(hf_tokenizer *h, const char *path);
struct tokenizer *hf_tokenizer_wrap(hf_tokenizer *h, int bos, int eos);

/* tokenizer.json sections (hf_pipeline_load.c); 0 or -1 with an error */
struct cJSON;
int hf_load_normalizer(hf_tokenizer *h, const struct cJSON *n, const char *path);
int hf_load_pre_tokenizer(hf_tokenizer *h, const struct cJSON *p, const char *path, bool *bytelevel);
void hf_load_decoder(hf_tokenizer *h, const struct cJSON *d);
/* tokenizer.json fields: a string member (NULL when absent or not a string);
 * a bool member (dflt when absent or not a bool). */
const char *hf_json_str(const struct cJSON *o, const char *key);
bool hf_json_bool(const struct cJSON *o, const char *key, bool dflt);

void hf_encode(const hf_tokenizer *h, const char *text, size_t len, int_vec *ids);
void hf_decode_piece(const hf_tokenizer *h, bool first, int id, char **buf, size_t *len, size_t *cap);
void hf_tokenizer_free(hf_tokenizer *h);

#endif
