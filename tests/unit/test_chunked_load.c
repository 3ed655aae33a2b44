/* Loading in bounded chunks (model_put_chunked) gives the same bits as
 * converting whole tensors: every fixture format (Hugging Face safetensors in
 * bf16, f16 and f32, one file and sharded; GGUF f32 / f16 with llama's
 * permuted q / k; llama.c legacy, v1 and v2 Q8_0), plus the real stories260K
 * and SmolLM2-135M Q4_1 (GGUF k-quants and q4_1) when they are on disk, is
 * loaded twice: with a staging buffer larger than any tensor (one chunk per
 * tensor: what the loaders did before chunking) and with a tiny one (every
 * tensor cut into many chunks of whole rows, heads or quantization groups).
 * The parameter blocks are compared with memcmp: exact, no tolerance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "formats/model_load.h"
#include "model/model.h"

static void path_of(char *out, size_t n, const char *rel) {
    const char *root = getenv("GRAFT_ROOT");
    snprintf(out, n, "%s/%s", root ? root : ".", rel);
}

static float *load_block(const char *path, size_t stage, size_t *n_out, size_t *largest) {
    model m;
    const model_load_hooks o = {.stage_bytes = stage};
    if (model_load_hooked(&m, path, NULL, &o) != 0) fail_msg("%s: %s", path, gf_last_error());
    const size_t n = m.layout.total;
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    assert_int_equal(be_download(m.be, x, GF_F32, m.params, n), 0);
    *largest = 0;
    for (int i = 0; i < m.layout.n; i++)
        if (m.layout.t[i].n > *largest) *largest = m.layout.t[i].n;
    *n_out = n;
    model_free(&m);
    return x;
}

/* Whole tensors vs chunks of at most `small` bytes. */
static void same_bits(const char *path, size_t small) {
    size_t n1, n2, largest, l2;
    float *whole = load_block(path, (size_t)1 << 30, &n1, &largest);
    float *chunked = load_block(path, small, &n2, &l2);
    /* the small stage really cuts: the largest tensor takes several chunks */
    assert_true(largest * sizeof(float) > 4 * small);
    assert_int_equal(n1, n2);
    if (memcmp(whole, chunked, n1 * sizeof *whole) != 0) {
        size_t i = 0;
        while (i < n1 && !memcmp(whole + i, chunked + i, sizeof *whole)) i++;
        fail_msg("%s: value %zu differs: %a (whole tensors) vs %a (chunks of %zu bytes)", path, i, whole[i], chunked[i],
                 small);
    }
    free(whole);
    free(chunked);
}

static void fixture(const char *rel, size_t small) {
    char p[4096];
    path_of(p, sizeof p, rel);
    same_bits(p, small);
}

static void hf_bf16(void **s) { (void)s, fixture("tests/fixtures/hf/llama", 256); }
static void hf_f16_sharded(void **s) { (void)s, fixture("tests/fixtures/hf/qwen2", 256); }
static void hf_f32(void **s) { (void)s, fixture("tests/fixtures/hf/qwen3", 256); }
/* llama: q / k rows un-permuted head by head */
static void gguf_llama_f32(void **s) { (void)s, fixture("tests/fixtures/gguf/llama.gguf", 256); }
static void gguf_qwen2_f16(void **s) { (void)s, fixture("tests/fixtures/gguf/qwen2.gguf", 256); }
static void gguf_qwen3_f32(void **s) { (void)s, fixture("tests/fixtures/gguf/qwen3.gguf", 256); }
static void llama2c_legacy(void **s) { (void)s, fixture("tests/fixtures/llama2c/tiny_legacy.bin", 64); }
static void llama2c_v1(void **s) { (void)s, fixture("tests/fixtures/llama2c/tiny_v1.bin", 64); }
static void llama2c_v2_q8(void **s) { (void)s, fixture("tests/fixtures/llama2c/tiny_v2.bin", 64); }

static void optional(const char *path, size_t small) {
    struct stat st;
    if (stat(path, &st) != 0) {
        print_message("skipped: %s not on disk\n", path);
        skip();
    }
    same_bits(path, small);
}

static void stories260k(void **s) {
    (void)s;
    const char *sh = getenv("GRAFT_SHARED");
    char p[4096];
    snprintf(p, sizeof p, "%s/models/tinyllamas/stories260K/stories260K.bin", sh ? sh : "../shared");
    optional(p, 4096);
}

/* q4_1, q8_0 / q6_k tensors of a real GGUF (scripts/fetch-teachers.sh smollm2) */
static void smollm2_q4_1(void **s) {
    (void)s;
    const char *d = getenv("GRAFT_TEACHERS");
    char p[4096];
    if (d && *d) snprintf(p, sizeof p, "%s/SmolLM2-135M-Instruct.Q4_1.gguf", d);
    else snprintf(p, sizeof p, "%s/.cache/graft/teachers/SmolLM2-135M-Instruct.Q4_1.gguf", getenv("HOME") ? getenv("HOME") : ".");
    optional(p, (size_t)1 << 20);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hf_bf16),        cmocka_unit_test(hf_f16_sharded), cmocka_unit_test(hf_f32),
        cmocka_unit_test(gguf_llama_f32), cmocka_unit_test(gguf_qwen2_f16), cmocka_unit_test(gguf_qwen3_f32),
        cmocka_unit_test(llama2c_legacy), cmocka_unit_test(llama2c_v1),     cmocka_unit_test(llama2c_v2_q8),
        cmocka_unit_test(stories260k),    cmocka_unit_test(smollm2_q4_1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
