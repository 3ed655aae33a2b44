/* GGUF teachers: load time (parse, dequantize to float32, tokenizer) and
 * forward tokens/s, for the real teachers fetched by scripts/fetch-teachers.sh
 * (skipped when absent), plus dequantization speed per type on the committed
 * fixture blocks. Forward: 256 tokens of gutenberg-60.txt (token ids of its
 * first bytes), logits for every position. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/gguf_dequant.h"
#include "formats/gguf_reader.h"
#include "formats/model_load.h"
#include "model/transformer.h"

static void teacher_dir(char *dir, size_t cap) {
    const char *d = getenv("GRAFT_TEACHERS"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (d && *d) snprintf(dir, cap, "%s", d);
    else if (x && *x) snprintf(dir, cap, "%s/graft/teachers", x);
    else snprintf(dir, cap, "%s/.cache/graft/teachers", h ? h : ".");
}

static void bench_teacher(const char *file, const char *shared, int T) {
    char dir[4096], path[4500], text[4500];
    teacher_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("%-42s skipped (not fetched: sh scripts/fetch-teachers.sh)\n", file);
        return;
    }
    fclose(f);
    model m;
    double t0 = bench_now();
    if (model_load(&m, path, NULL) != 0) {
        printf("%-42s load failed: %s\n", file, gf_last_error());
        return;
    }
    double load = bench_now() - t0;
    printf("%-42s load %6.2f s  (%zu params as float32, %.2f GB; weights %s)\n", file, load, m.layout.total,
           m.layout.total * 4e-9, m.weights_dtype);
    snprintf(text, sizeof text, "%s/data/gutenberg-60.txt", shared);
    mapped_file mf;
    int_vec ids = {0};
    if (m.tok && mapped_file_open(&mf, text) == 0) {
        size_t n = mf.size < 8000 ? mf.size : 8000;
        t0 = bench_now();
        tokenizer_encode(m.tok, (const char *)mf.data, n, false, &ids);
        double dt = bench_now() - t0;
        printf("%-42s tokenize %zu bytes -> %zu ids in %.1f ms\n", "", n, ids.len, dt * 1e3);
        mapped_file_close(&mf);
    }
    while ((int)ids.len < T) int_vec_push(&ids, (int)(ids.len * 131 % (size_t)m.cfg.vocab_size));
    transformer tf;
    tf_run *run;
    const tf_run_opts ro = {.B = 1, .T = T, .logit_rows = 32};
    if (tf_view(&tf, &m, NULL, NULL, NULL) == 0 && tf_run_open(&run, &tf, &ro) == 0) {
        const int rows = 32;
        double best = 1e30;
        for (int r = 0; r < 2; r++) {
            t0 = bench_now();
            tf_forward(run, ids.data, 1, T, 0, NULL);
            for (int r0 = 0; r0 < T; r0 += rows) tf_logits(run, r0, T - r0 < rows ? T - r0 : rows, tf_run_logits(run, NULL));
            be_sync(m.be);
            double dt = bench_now() - t0;
            if (dt < best) best = dt;
        }
        printf("%-42s forward T=%d  %8.1f tok/s (best of 2)\n", "", T, T / best);
        tf_run_close(run);
        tf_free(&tf);
    }
    int_vec_free(&ids);
    model_free(&m);
}

static void bench_dequant(const char *root) {
    char path[4200];
    snprintf(path, sizeof path, "%s/tests/fixtures/gguf/dequant.gguf", root);
    gguf_file g;
    if (gguf_open(&g, path) != 0) {
        printf("dequant: skipped (%s)\n", gf_last_error());
        return;
    }
    for (size_t i = 0; i < g.n_tensors; i++) {
        const gguf_tensor *t = &g.tensors[i];
        if (strstr(t->name, ".expected")) continue;
        float *out = malloc(t->n_elems * sizeof *out);
        const int reps = 20000;
        double t0 = bench_now();
        for (int r = 0; r < reps; r++) gguf_dequantize(t->type, t->data, out, t->n_elems);
        double dt = bench_now() - t0;
        printf("dequant %-5s %8.0f M values/s (one thread)\n", t->name, t->n_elems * (double)reps / dt * 1e-6);
        free(out);
    }
    gguf_close(&g);
}

int main(void) {
    const char *shared = getenv("GRAFT_SHARED"), *root = getenv("GRAFT_ROOT");
    if (!shared) shared = "../shared";
    if (!root) root = ".";
    bench_dequant(root);
    bench_teacher("SmolLM2-135M-Instruct.Q4_1.gguf", shared, 256);
    bench_teacher("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", shared, 256);
    return 0;
}
