/* The matrix-product algorithms GRAFT_CUDA_GEMM_TUNE chose, kept in a file so
 * that later runs take the same ones without timing (and so give the same
 * bits): a JSON object of choices, each a key that names the device, the
 * library version and the product's shape, and the chosen algorithm's
 * identity (its cublasLt configuration attributes, GEMM_ALGO_BYTES bytes) as
 * hex. The CUDA backend uses it (cuda_gemm.cu); nothing here needs a
 * GPU.
 *
 *   {"format": "graft-gemm-choices", "version": 1,
 *    "choices": {"NVIDIA H100 80GB HBM3|cublasLt 130001|TN m 1536 ...": "0a00...", ...}}
 *
 * A run reads the file once when it opens; each new choice is merged into the
 * file as it is then on disk (under an flock on PATH.lock, so ranks that share
 * the file keep each other's choices) and written whole through atomic_file. A
 * file that is not one of these is an error, never overwritten. */
#ifndef GRAFT_BACKEND_GEMM_CHOICES_H
#define GRAFT_BACKEND_GEMM_CHOICES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define GEMM_ALGO_BYTES 64 /* an algorithm's identity: nine 4-byte configuration slots, zero-padded */
#define GEMM_CHOICE_KEY_MAX 512

typedef struct {
    char *key;
    unsigned char algo[GEMM_ALGO_BYTES];
} gemm_choice;

typedef struct gemm_choices {
    char *path; /* NULL: choices are kept in memory only */
    gemm_choice *v;
    size_t n, cap;
    pthread_mutex_t lock; /* the backend's task threads share one table */
} gemm_choices;

/* Opens the table: the file's choices when PATH exists, none when it does not
 * (PATH NULL: none, nothing written). 0, or -1 with a one-line error naming
 * PATH when it cannot be read or is not a choice file. Free with
 * gemm_choices_free either way. */
int gemm_choices_open(gemm_choices *c, const char *path);
/* Whether an algorithm is kept for KEY; its GEMM_ALGO_BYTES bytes into ALGO. */
bool gemm_choices_get(gemm_choices *c, const char *key, unsigned char *algo);
/* Keeps ALGO for KEY, then merges the table into the file: 0, or -1 with a
 * one-line error. The choice is kept in memory either way and the file is
 * left as it was; after such a failure the table writes no more (path NULL),
 * so a run reports it once, not at every later choice. */
int gemm_choices_put(gemm_choices *c, const char *key, const unsigned char *algo);
void gemm_choices_free(gemm_choices *c);

/* The default file: $XDG_CACHE_HOME/graft/gemm-choices.json, else
 * ~/.cache/graft/gemm-choices.json; NULL without either variable. malloc'd. */
char *gemm_choices_default_path(void);

#endif
