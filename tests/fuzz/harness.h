/* Shared pieces of the libFuzzer harnesses (tests/fuzz/fuzz_*.c).
 *
 * graft's loaders read files by path, so each input is written into a private
 * temporary folder first. Inputs that hold several files (a checkpoint and its
 * tokenizer, a tokenizer.json and its tokenizer_config.json) separate them
 * with FUZZ_SEP, a line that mutations rarely create by accident.
 *
 * After a successful load every harness USES what it loaded: tokenizers
 * encode and decode, models run a short forward pass. A broken invariant
 * (an id outside the vocabulary) aborts, so libFuzzer records the input. */
#ifndef GRAFT_FUZZ_HARNESS_H
#define GRAFT_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/model_load.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

#define FUZZ_SEP "\n--graft-fuzz-file--\n"

/* The harness's private folder (created once, removed at exit). */
const char *fuzz_dir(void);
/* fuzz_dir()/name, in one of four static buffers used in turn. */
const char *fuzz_path(const char *name);
/* Writes data[0..n) to fuzz_dir()/name; returns fuzz_path(name). */
const char *fuzz_write(const char *name, const uint8_t *data, size_t n);
/* Removes fuzz_dir()/name if present. */
void fuzz_remove(const char *name);

/* After a load was refused: prints its one-line error when the environment
 * has GRAFT_FUZZ_VERBOSE set (to see why a seed does not load), then clears it. */
void fuzz_rejected(const char *what);

/* Splits data at FUZZ_SEP into at most max parts; returns how many. The last
 * part takes the rest (separators in it stay). */
int fuzz_split(const uint8_t *data, size_t n, const uint8_t **part, size_t *len, int max);

/* Splits data (as fuzz_split) into the files names[0..n): part i becomes
 * names[i]; the files of absent parts are removed (keep_absent: left as the
 * previous input wrote them). Returns how many parts the input had. */
int fuzz_write_parts(const uint8_t *data, size_t size, const char *const *names, int n, bool keep_absent);

/* model_load(path) then, when it loads, fuzz_use_model and model_free. */
void fuzz_load_and_use_model(const char *path);

/* Encodes a few fixed texts (ASCII, accents, CJK, emoji, invalid UTF-8, added
 * tokens' look-alikes), checks every id is in [0, vocab), decodes the ids and
 * every single piece. Aborts on a broken invariant. */
void fuzz_use_tokenizer(const tokenizer *t, int vocab_limit);

/* Runs a short teacher-forced pass (eval_nll) over a few ids when the model is
 * small enough to do so quickly; the ids come from the tokenizer when there is
 * one (checked against the model's vocabulary), else 1, 2, 3. */
void fuzz_use_model(const model *m);

#endif
