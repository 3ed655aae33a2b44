/* Tokenizer throughput: MB/s encoding the first 4 MB of gutenberg-60.txt with
 * Qwen3 and Llama 3 (tokenizer.json), and tinystories.txt with llama2.c's
 * tok512.bin. Files that are missing are skipped. Load time is reported apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "core/vec.h"
#include "tokenizer/tokenizer.h"

static void bench(const char *label, tokenizer *t, const char *text, size_t len, double load_s) {
    int_vec ids = {0};
    double t0 = clock_now_s();
    tokenizer_encode(t, text, len, false, &ids);
    double cold = clock_now_s() - t0;
    size_t n = ids.len;
    ids.len = 0;
    t0 = clock_now_s();
    tokenizer_encode(t, text, len, false, &ids); /* word cache warm */
    double warm = clock_now_s() - t0;
    double mb = (double)len / 1e6;
    printf("bench_tokenizer %-8s %6.2f MB  %8zu ids  load %.2f s  encode %6.1f MB/s (cold cache)  %6.1f MB/s (warm)\n",
           label, mb, n, load_s, mb / cold, mb / warm);
    int_vec_free(&ids);
}

int main(void) {
    const char *shared = getenv("GRAFT_SHARED");
    if (!shared || !*shared) shared = "../shared";
    char path[4096], text_path[4096];
    mapped_file f;
    snprintf(text_path, sizeof text_path, "%s/data/gutenberg-60.txt", shared);
    if (mapped_file_open(&f, text_path) == 0) {
        size_t len = f.size < (4u << 20) ? f.size : (4u << 20);
        const char *names[] = {"qwen3", "llama3"};
        for (int k = 0; k < 2; k++) {
            snprintf(path, sizeof path, "%s/tokenizers/%s/tokenizer.json", shared, names[k]);
            tokenizer *t;
            double t0 = clock_now_s();
            if (tokenizer_load_hf(&t, path) != 0) {
                printf("bench_tokenizer %s: skipped (%s)\n", names[k], gf_last_error());
                continue;
            }
            bench(names[k], t, (const char *)f.data, len, clock_now_s() - t0);
            tokenizer_free(t);
        }
        mapped_file_close(&f);
    } else {
        printf("bench_tokenizer: skipped gutenberg (%s)\n", gf_last_error());
    }
    snprintf(text_path, sizeof text_path, "%s/data/tinystories.txt", shared);
    snprintf(path, sizeof path, "%s/models/tinyllamas/stories260K/tok512.bin", shared);
    if (mapped_file_open(&f, text_path) == 0) {
        tokenizer *t;
        double t0 = clock_now_s();
        if (tokenizer_load_llama2c(&t, path, 512) == 0) {
            bench("tok512", t, (const char *)f.data, f.size, clock_now_s() - t0);
            tokenizer_free(t);
        } else {
            printf("bench_tokenizer tok512: skipped (%s)\n", gf_last_error());
        }
        mapped_file_close(&f);
    } else {
        printf("bench_tokenizer: skipped tinystories (%s)\n", gf_last_error());
    }
    return 0;
}
