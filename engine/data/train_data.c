#include "data/train_data.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "core/path.h"
#include "core/vec.h"
#include "eval/generate.h"

static uint64_t mix64(uint64_t x) { /* splitmix64 finalizer */
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* One file's documents appended to ids (BOS before each). */
static int add_file(const char *path, const tokenizer *tok, int_vec *ids) {
    size_t len;
    char *text = read_text_file(path, &len);
    if (!text) return -1;
    if (str_ends_with(path, ".jsonl")) {
        long line_no = 0;
        for (char *line = text, *next; line && *line; line = next) {
            line_no++;
            next = strchr(line, '\n');
            if (next) *next++ = '\0';
            if (strspn(line, " \t\r") == strlen(line)) continue;
            cJSON *o = cJSON_Parse(line);
            const cJSON *t = o ? cJSON_GetObjectItemCaseSensitive(o, "text") : NULL;
            if (!cJSON_IsString(t)) {
                cJSON_Delete(o);
                free(text);
                return gf_fail("%s:%ld: not a JSON object with a string \"text\" field", path, line_no);
            }
            tokenizer_encode(tok, t->valuestring, strlen(t->valuestring), true, ids);
            cJSON_Delete(o);
        }
    } else {
        tokenizer_encode(tok, text, len, true, ids);
    }
    free(text);
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int add_folder(const char *dir, const tokenizer *tok, int_vec *ids) {
    DIR *dp = opendir(dir);
    if (!dp) return gf_fail("%s: cannot open the folder (%s)", dir, strerror(errno));
    char **names = NULL;
    int n = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        if (e->d_name[0] == '.' || !(str_ends_with(e->d_name, ".txt") || str_ends_with(e->d_name, ".jsonl"))) continue;
        names = gf_realloc(names, (size_t)(n + 1) * sizeof *names);
        size_t L = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = gf_malloc(L);
        snprintf(names[n++], L, "%s/%s", dir, e->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    int rc = n ? 0 : gf_fail("%s: no .txt or .jsonl files", dir);
    for (int i = 0; i < n; i++) {
        if (rc == 0) rc = add_file(names[i], tok, ids);
        free(names[i]);
    }
    free(names);
    return rc;
}

int train_data_open(train_data *d, const char *path, const tokenizer *tok, int ctx, double eval_frac, uint64_t seed) {
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    d->seed = seed;
    d->perm_epoch = -1;
    if (ctx < 2) return gf_fail("--ctx must be at least 2, got %d", ctx);
    if (!(eval_frac >= 0 && eval_frac <= 0.5)) return gf_fail("--eval-frac must be in [0, 0.5], got %g", eval_frac);
    struct stat st;
    if (stat(path, &st) != 0) return gf_fail("%s: no such file or folder", path);
    int_vec ids = {0};
    int rc = S_ISDIR(st.st_mode) ? add_folder(path, tok, &ids) : add_file(path, tok, &ids);
    const size_t n_win = ids.len / (size_t)ctx;
    if (rc == 0 && n_win < 2)
        rc = gf_fail("%s: %zu tokens make %zu windows of %d; at least 2 are needed (one held out)", path, ids.len,
                     n_win, ctx);
    if (rc != 0) {
        int_vec_free(&ids);
        return -1;
    }
    int n_eval = (int)(eval_frac * (double)n_win + 0.5);
    if (n_eval < 1) n_eval = 1;
    d->n_eval = n_eval;
    d->n_train = (int)n_win - n_eval;
    d->train = gf_malloc((size_t)d->n_train * ctx * sizeof(int));
    d->eval = gf_malloc((size_t)n_eval * ctx * sizeof(int));
    memcpy(d->train, ids.data, (size_t)d->n_train * ctx * sizeof(int));
    memcpy(d->eval, ids.data + (size_t)d->n_train * ctx, (size_t)n_eval * ctx * sizeof(int));
    d->perm = gf_malloc((size_t)d->n_train * sizeof(int));
    int_vec_free(&ids);
    return 0;
}

static uint64_t nonzero(uint64_t s) { return s ? s : 1; }

uint64_t train_data_sample_seed(const train_data *d, long g) { return nonzero(mix64(d->seed) + 2 * (uint64_t)g + 1); }
/* held-out sequence i: a stream disjoint from the training one */
static uint64_t eval_seed(const train_data *d, int i) { return nonzero(mix64(d->seed ^ 0xE7A1ull) + (uint64_t)i); }

/* n <= TRAIN_DATA_SAMPLE_BLOCK sequences, training (first = g) or held-out (first = i), into out [n, ctx] */
static int sample_rows(const train_data *d, int n, bool held_out, long first, int *out) {
    uint64_t seeds[TRAIN_DATA_SAMPLE_BLOCK];
    for (int i = 0; i < n; i++)
        seeds[i] = held_out ? eval_seed(d, (int)first + i) : train_data_sample_seed(d, first + i);
    return generate_rows(d->teacher, d->bos, n, d->ctx, 1.0, seeds, out);
}

int train_data_sampled(train_data *d, const model *teacher, int ctx, int n_eval, uint64_t seed) {
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    d->seed = seed;
    d->sampled = true;
    d->teacher = teacher;
    d->perm_epoch = -1;
    if (ctx < 2) return gf_fail("--ctx must be at least 2, got %d", ctx);
    d->bos = teacher->cfg.bos_id >= 0 ? teacher->cfg.bos_id : (teacher->tok ? tokenizer_bos(teacher->tok) : -1);
    if (d->bos < 0) d->bos = 0;
    d->n_eval = n_eval < 1 ? 1 : n_eval;
    d->eval = gf_malloc((size_t)d->n_eval * ctx * sizeof(int));
    d->block = gf_malloc((size_t)TRAIN_DATA_SAMPLE_BLOCK * ctx * sizeof(int));
    d->block_id = -1;
    for (int i = 0; i < d->n_eval; i += TRAIN_DATA_SAMPLE_BLOCK) {
        const int n = d->n_eval - i < TRAIN_DATA_SAMPLE_BLOCK ? d->n_eval - i : TRAIN_DATA_SAMPLE_BLOCK;
        if (sample_rows(d, n, true, i, d->eval + (size_t)i * ctx) != 0) return -1;
    }
    return 0;
}

void train_data_free(train_data *d) {
    free(d->train);
    free(d->eval);
    free(d->perm);
    free(d->block);
    memset(d, 0, sizeof *d);
}

static void shuffle_for(train_data *d, long g) {
    const long epoch = g / d->n_train;
    if (epoch != d->perm_epoch) { /* Fisher-Yates from a seed of (seed, epoch) */
        uint64_t s = mix64(d->seed * 0x100000001B3ull + (uint64_t)epoch);
        for (int i = 0; i < d->n_train; i++) d->perm[i] = i;
        for (int i = d->n_train - 1; i > 0; i--) {
            s = mix64(s);
            int j = (int)(s % (uint64_t)(i + 1)), t = d->perm[i];
            d->perm[i] = d->perm[j];
            d->perm[j] = t;
        }
        d->perm_epoch = epoch;
    }
}

long train_data_window(train_data *d, long g) {
    if (d->sampled) return g;
    shuffle_for(d, g);
    return d->perm[g % d->n_train];
}

int train_data_get(train_data *d, long g, int *out) {
    if (d->sampled) {
        const long blk = g / TRAIN_DATA_SAMPLE_BLOCK;
        if (blk != d->block_id) {
            d->block_id = -1;
            if (sample_rows(d, TRAIN_DATA_SAMPLE_BLOCK, false, blk * TRAIN_DATA_SAMPLE_BLOCK, d->block) != 0) return -1;
            d->block_id = blk;
        }
        memcpy(out, d->block + (size_t)(g % TRAIN_DATA_SAMPLE_BLOCK) * d->ctx, (size_t)d->ctx * sizeof(int));
        return 0;
    }
    shuffle_for(d, g);
    memcpy(out, d->train + (size_t)d->perm[g % d->n_train] * d->ctx, (size_t)d->ctx * sizeof(int));
    return 0;
}

const int *train_data_eval(const train_data *d, int i) { return d->eval + (size_t)i * d->ctx; }
