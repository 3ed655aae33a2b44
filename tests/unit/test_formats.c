/* Unit tests: safetensors reader, config.json parser, Hugging Face folder
 * loader, llama2.c checkpoints (legacy, v1, v2). Every fixture is written here
 * into a fresh mkdtemp folder; malformed files must fail with a clear message. */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* temp paths are short */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host_weights.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/hf_config.h"
#include "formats/model_load.h"
#include "formats/safetensors.h"
#include "convert/build.h"
#include "student/student_io.h"
#include "model/model.h"

/* ---- temp folders ------------------------------------------------------- */

static char g_root[PATH_MAX];
static int g_seq;

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(p);
}

static int group_setup(void **state) {
    (void)state;
    snprintf(g_root, sizeof g_root, "/tmp/graft-test-formats-XXXXXX");
    return mkdtemp(g_root) ? 0 : -1;
}

static int group_teardown(void **state) {
    (void)state;
    return nftw(g_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A new empty folder under the group's root; returns a static-lifetime copy. */
static const char *new_dir(char *buf, size_t cap) {
    snprintf(buf, cap, "%s/d%d", g_root, g_seq++);
    assert_int_equal(mkdir(buf, 0755), 0);
    return buf;
}

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n) assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void write_text(const char *dir, const char *name, const char *text) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_bytes(path, text, strlen(text));
}

/* Asserts rc == -1 and that the error contains `want`. */
static void expect_error(int rc, const char *want) {
    if (rc != -1 || !strstr(gf_last_error(), want))
        fail_msg("expected failure containing \"%s\", got rc=%d error \"%s\"", want, rc, gf_last_error());
}

/* ---- a small safetensors writer ----------------------------------------- */

typedef struct {
    const char *name;
    const char *dtype; /* "F32", "BF16", "F16" */
    int ndim;
    int64_t shape[4];
    const void *data;
    size_t nbytes;
} st_entry;

/* Header padded with spaces to a multiple of 8, as the reference writer does. */
static void write_st(const char *path, const st_entry *e, int n) {
    size_t cap = 4096 + (size_t)n * 256, len = 0;
    char *h = malloc(cap);
    len += (size_t)snprintf(h + len, cap - len, "{\"__metadata__\":{\"format\":\"pt\"}");
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        len += (size_t)snprintf(h + len, cap - len, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", e[i].name, e[i].dtype);
        for (int d = 0; d < e[i].ndim; d++)
            len += (size_t)snprintf(h + len, cap - len, "%s%lld", d ? "," : "", (long long)e[i].shape[d]);
        len += (size_t)snprintf(h + len, cap - len, "],\"data_offsets\":[%zu,%zu]}", off, off + e[i].nbytes);
        off += e[i].nbytes;
    }
    len += (size_t)snprintf(h + len, cap - len, "}");
    while (len % 8) h[len++] = ' ';
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint64_t hl = len;
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)(hl >> (8 * i));
    fwrite(le, 1, 8, f);
    fwrite(h, 1, len, f);
    for (int i = 0; i < n; i++)
        if (e[i].nbytes) fwrite(e[i].data, 1, e[i].nbytes, f);
    fclose(f);
    free(h);
}

/* A file with a given header text (and declared length) and data bytes. */
static void write_raw_st(const char *path, uint64_t declared_len, const char *header, size_t data_len) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)(declared_len >> (8 * i));
    fwrite(le, 1, 8, f);
    fwrite(header, 1, strlen(header), f);
    for (size_t i = 0; i < data_len; i++) fputc((int)(i & 0xff), f);
    fclose(f);
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* ---- half-precision conversions ----------------------------------------- */

static void f16_known_bits(void **state) {
    (void)state;
    assert_true(st_f16_to_f32(0x0000) == 0.0f && !signbit(st_f16_to_f32(0x0000)));
    assert_true(st_f16_to_f32(0x8000) == 0.0f && signbit(st_f16_to_f32(0x8000)));
    assert_true(st_f16_to_f32(0x3c00) == 1.0f);
    assert_true(st_f16_to_f32(0xc000) == -2.0f);
    assert_true(st_f16_to_f32(0x3555) == 0.333251953125f);
    assert_true(st_f16_to_f32(0x7bff) == 65504.0f);            /* largest normal */
    assert_true(st_f16_to_f32(0x0400) == ldexpf(1, -14));      /* smallest normal */
    assert_true(st_f16_to_f32(0x0001) == ldexpf(1, -24));      /* smallest subnormal */
    assert_true(st_f16_to_f32(0x03ff) == 1023 * ldexpf(1, -24)); /* largest subnormal */
    assert_true(st_f16_to_f32(0x8001) == -ldexpf(1, -24));
    assert_true(isinf(st_f16_to_f32(0x7c00)) && st_f16_to_f32(0x7c00) > 0);
    assert_true(isinf(st_f16_to_f32(0xfc00)) && st_f16_to_f32(0xfc00) < 0);
    assert_true(isnan(st_f16_to_f32(0x7e00)));
    assert_int_equal(f32_bits(st_f16_to_f32(0x7c01)), 0x7f802000u); /* NaN payload kept */
    assert_int_equal(f32_bits(st_f16_to_f32(0xfe00)), 0xffc00000u);

    assert_true(st_bf16_to_f32(0x3f80) == 1.0f);
    assert_true(st_bf16_to_f32(0xc040) == -3.0f);
    assert_true(st_bf16_to_f32(0x3e20) == 0.15625f);
    assert_int_equal(f32_bits(st_bf16_to_f32(0x0001)), 0x00010000u); /* subnormal */
    assert_true(isinf(st_bf16_to_f32(0x7f80)));
    assert_true(isnan(st_bf16_to_f32(0x7fc1)));
    assert_int_equal(f32_bits(st_bf16_to_f32(0xff81)), 0xff810000u);

#ifdef __FLT16_MAX__
    /* every f16 bit pattern against the compiler's own _Float16 conversion */
    for (uint32_t b = 0; b < 65536; b++) {
        _Float16 h;
        uint16_t b16 = (uint16_t)b;
        memcpy(&h, &b16, 2);
        float want = (float)h, got = st_f16_to_f32(b16);
        if (isnan(want)) assert_true(isnan(got));
        else assert_int_equal(f32_bits(got), f32_bits(want));
    }
#endif
}

/* ---- safetensors: values and lookups ------------------------------------ */

static void st_reads_each_dtype(void **state) {
    (void)state;
    char d[PATH_MAX], path[PATH_MAX];
    new_dir(d, sizeof d);
    snprintf(path, sizeof path, "%s/t.safetensors", d);
    const float f32v[6] = {1.5f, -2.25f, 0.0f, 3.0e-39f /* subnormal */, 65504.0f, -1e30f};
    const uint16_t bf16v[4] = {0x3f80, 0xc040, 0x3e20, 0x0001};
    const uint16_t f16v[5] = {0x3c00, 0x0001, 0xfc00, 0x3555, 0x8000};
    st_entry e[] = {
        {"a.f32", "F32", 2, {2, 3}, f32v, sizeof f32v},
        {"b.bf16", "BF16", 1, {4}, bf16v, sizeof bf16v},
        {"c.f16", "F16", 3, {1, 5, 1}, f16v, sizeof f16v},
        {"empty", "F32", 2, {0, 7}, NULL, 0},
    };
    write_st(path, e, 4);
    st_file f;
    assert_int_equal(st_open(&f, path), 0);
    assert_int_equal(f.n_tensors, 4);
    assert_null(st_find(&f, "__metadata__"));
    assert_null(st_find(&f, "absent"));

    const st_tensor *a = st_find(&f, "a.f32");
    assert_non_null(a);
    assert_int_equal(a->dtype, ST_F32);
    assert_int_equal(a->ndim, 2);
    assert_int_equal(a->shape[0], 2);
    assert_int_equal(a->shape[1], 3);
    float out[6];
    assert_int_equal(st_read_f32(a, out, 6), 0);
    for (int i = 0; i < 6; i++) assert_int_equal(f32_bits(out[i]), f32_bits(f32v[i]));
    expect_error(st_read_f32(a, out, 5), "holds 6 values");

    const st_tensor *b = st_find(&f, "b.bf16");
    assert_int_equal(b->dtype, ST_BF16);
    assert_int_equal(st_read_f32(b, out, 4), 0);
    assert_true(out[0] == 1.0f && out[1] == -3.0f && out[2] == 0.15625f);
    assert_int_equal(f32_bits(out[3]), 0x00010000u);

    const st_tensor *c = st_find(&f, "c.f16");
    assert_int_equal(c->dtype, ST_F16);
    assert_int_equal(c->n_elems, 5);
    assert_int_equal(st_read_f32(c, out, 5), 0);
    assert_true(out[0] == 1.0f && out[1] == ldexpf(1, -24) && isinf(out[2]) && out[2] < 0);
    assert_true(out[3] == 0.333251953125f && out[4] == 0.0f && signbit(out[4]));

    const st_tensor *z = st_find(&f, "empty");
    assert_int_equal(z->n_elems, 0);
    assert_int_equal(st_read_f32(z, out, 0), 0);
    st_close(&f);
}

typedef struct {
    const char *header;
    long declared; /* -1: the header's own length */
    size_t data_len;
    const char *error;
} bad_st;

static void st_rejects_malformed(void **state) {
    (void)state;
    const bad_st cases[] = {
        {"{}", 4096, 0, "header length 4096 exceeds file size"},
        {"", 0, 16, "header length is 0"},
        {"this is not json", -1, 0, "not a JSON object"},
        {"[1, 2]", -1, 0, "not a JSON object"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} trailing", -1, 8, "bytes after its JSON"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", -1, 8, "run past the end"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", -1, 16, "needs 12"},
        {"{\"x\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,16]}}", -1, 16, "needs 8"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", -1, 16, "begin 8 > end 4"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", -1, 16, "data_offsets must be"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", -1, 16, "data_offsets must be"},
        {"{\"w\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", -1, 8, "unsupported dtype I64 for tensor w"},
        {"{\"w\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", -1, 8, "unsupported dtype F64 for tensor w"},
        {"{\"w\":{\"dtype\":\"F8_E4M3\",\"shape\":[8],\"data_offsets\":[0,8]}}", -1, 8, "unsupported dtype F8_E4M3"},
        {"{\"w\":{\"dtype\":\"Q9\",\"shape\":[8],\"data_offsets\":[0,8]}}", -1, 8, "unsupported dtype Q9 for tensor w"},
        {"{\"w\":{\"shape\":[8],\"data_offsets\":[0,8]}}", -1, 8, "missing dtype"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", -1, 8, "negative dimension -2"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", -1, 8, "not a whole number"},
        {"{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", -1, 8, "missing shape"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,8]}}", -1, 8,
         "too large"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", -1, 8, "dimensions"},
        {"{\"w\":7}", -1, 8, "not an object"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         -1, 8, "appears twice"},
        /* the layout rules of the reference library (tests/ref/safetensors_rules.py) */
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
         -1, 16, "tensors a [0, 8) and b [4, 12) overlap"},
        {"{\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
         -1, 8, "tensors b [0, 8) and a [0, 8) overlap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}",
         -1, 20, "gap of 4 bytes lies between tensors a (ends at 8) and b (starts at 12)"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", -1, 12,
         "tensor a starts at byte 4 of the data"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", -1, 12,
         "4 bytes after the last tensor (a, ends at 8) belong to no tensor"},
        {"{}", -1, 3, "3 bytes of tensor data but no tensors"},
        {" {}", -1, 0, "must start with '{'"},
        {"{\"\xff\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", -1, 8, "not valid UTF-8"},
    };
    char d[PATH_MAX], path[PATH_MAX];
    new_dir(d, sizeof d);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/bad%zu.safetensors", d, i);
        const bad_st *c = &cases[i];
        write_raw_st(path, c->declared < 0 ? strlen(c->header) : (uint64_t)c->declared, c->header, c->data_len);
        st_file f;
        int rc = st_open(&f, path);
        if (rc == 0) st_close(&f);
        expect_error(rc, c->error);
        assert_non_null(strstr(gf_last_error(), path)); /* names the file */
    }
    /* shorter than the 8-byte length prefix */
    snprintf(path, sizeof path, "%s/tiny.safetensors", d);
    write_bytes(path, "\x02\0\0", 3);
    st_file f;
    expect_error(st_open(&f, path), "truncated");
    /* a huge declared length must not wrap around */
    snprintf(path, sizeof path, "%s/wrap.safetensors", d);
    write_raw_st(path, UINT64_MAX - 3, "{}", 0);
    expect_error(st_open(&f, path), "exceeds file size");
    snprintf(path, sizeof path, "%s/absent.safetensors", d);
    expect_error(st_open(&f, path), "absent.safetensors");
}

/* tests/fixtures/safetensors/: files at the edges of the layout rules and
 * what the reference library said of each (tests/ref/safetensors_rules.py);
 * graft must accept exactly the files the library accepts. */
static void st_agrees_with_reference_library(void **state) {
    (void)state;
    const char *root = getenv("GRAFT_ROOT");
    char dir[PATH_MAX], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/safetensors", root ? root : ".");
    snprintf(path, sizeof path, "%s/verdicts.json", dir);
    size_t len;
    char *text = read_text_file(path, &len);
    if (!text) fail_msg("%s", gf_last_error());
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *verdicts = cJSON_GetObjectItemCaseSensitive(j, "verdicts"), *v;
    assert_true(cJSON_IsObject(verdicts));
    int n = 0, refused = 0;
    cJSON_ArrayForEach(v, verdicts) {
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, v->string);
        bool lib_ok = cJSON_IsString(v) && strcmp(v->valuestring, "ok") == 0;
        st_file f;
        int rc = st_open(&f, path);
        if (rc == 0) st_close(&f);
        if ((rc == 0) != lib_ok)
            fail_msg("%s: graft %s, the safetensors library said \"%s\"", v->string,
                     rc == 0 ? "accepts it" : gf_last_error(), cJSON_IsString(v) ? v->valuestring : "?");
        n++;
        refused += !lib_ok;
    }
    assert_true(n >= 10 && refused >= 5); /* the fixture holds both kinds */
    cJSON_Delete(j);
}

/* ---- config.json -------------------------------------------------------- */

static int parse_cfg(model_config *c, const char *json) { return hf_config_parse(c, json, strlen(json), "config.json"); }

static void config_shared_shapes(void **state) {
    (void)state;
    const char *shared = getenv("GRAFT_SHARED");
    char path[PATH_MAX];
    if (!shared) {
        print_message("GRAFT_SHARED not set\n");
        skip();
    }
    snprintf(path, sizeof path, "%s/configs/qwen2.5-0.5b.json", shared);
    if (access(path, R_OK) != 0) skip();
    /* every shape config parses, whatever is added later */
    snprintf(path, sizeof path, "%s/configs/*.json", shared);
    glob_t g;
    assert_int_equal(glob(path, 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 5);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        model_config any;
        if (hf_config_load(&any, g.gl_pathv[i]) != 0) fail_msg("%s", gf_last_error());
    }
    globfree(&g);
    const char *names[] = {"llama-3.2-3b", "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen3-8b"};
    model_config c[5];
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/configs/%s.json", shared, names[i]);
        if (hf_config_load(&c[i], path) != 0) fail_msg("%s: %s", names[i], gf_last_error());
        assert_int_equal(c[i].source, SOURCE_HF);
        assert_int_equal(c[i].rope_pairing, ROPE_HALF);
    }
    /* llama-3.2-3b */
    assert_int_equal(c[0].arch, ARCH_LLAMA);
    assert_int_equal(c[0].dim, 3072);
    assert_int_equal(c[0].hidden_dim, 8192);
    assert_int_equal(c[0].n_layers, 28);
    assert_int_equal(c[0].n_heads, 24);
    assert_int_equal(c[0].n_kv_heads, 8);
    assert_int_equal(c[0].head_dim, 128);
    assert_int_equal(c[0].vocab_size, 128256);
    assert_int_equal(c[0].max_seq, 131072);
    assert_true(c[0].rope_theta == 500000.0f);
    assert_true(c[0].norm_eps == 1e-5f);
    assert_int_equal(c[0].rope_scaling.type, ROPE_SCALING_LLAMA3);
    assert_true(c[0].rope_scaling.factor == 32.0f);
    assert_true(c[0].rope_scaling.low_freq_factor == 1.0f);
    assert_true(c[0].rope_scaling.high_freq_factor == 4.0f);
    assert_int_equal(c[0].rope_scaling.original_max_pos, 8192);
    assert_true(c[0].tied_embeddings && !c[0].qkv_bias && !c[0].qk_norm);
    assert_int_equal(c[0].bos_id, 128000);
    assert_int_equal(c[0].eos_id, 128001); /* first of the list */
    /* qwen2.5-0.5b */
    assert_int_equal(c[1].arch, ARCH_QWEN2);
    assert_int_equal(c[1].dim, 896);
    assert_int_equal(c[1].hidden_dim, 4864);
    assert_int_equal(c[1].n_layers, 24);
    assert_int_equal(c[1].n_heads, 14);
    assert_int_equal(c[1].n_kv_heads, 2);
    assert_int_equal(c[1].head_dim, 64);
    assert_int_equal(c[1].vocab_size, 151936);
    assert_int_equal(c[1].max_seq, 32768);
    assert_true(c[1].rope_theta == 1000000.0f && c[1].norm_eps == 1e-6f);
    assert_int_equal(c[1].rope_scaling.type, ROPE_SCALING_NONE);
    assert_true(c[1].tied_embeddings && c[1].qkv_bias && !c[1].qk_norm);
    assert_int_equal(c[1].bos_id, 151643);
    assert_int_equal(c[1].eos_id, 151645);
    /* qwen2.5-1.5b, 3b */
    assert_int_equal(c[2].head_dim, 128);
    assert_int_equal(c[2].n_layers, 28);
    assert_int_equal(c[3].dim, 2048);
    assert_int_equal(c[3].n_layers, 36);
    assert_int_equal(c[3].head_dim, 128);
    /* qwen3-8b */
    assert_int_equal(c[4].arch, ARCH_QWEN3);
    assert_int_equal(c[4].dim, 4096);
    assert_int_equal(c[4].hidden_dim, 12288);
    assert_int_equal(c[4].n_heads, 32);
    assert_int_equal(c[4].n_kv_heads, 8);
    assert_int_equal(c[4].head_dim, 128);
    assert_int_equal(c[4].max_seq, 40960);
    assert_true(!c[4].tied_embeddings && !c[4].qkv_bias && c[4].qk_norm);
}

static void config_defaults_and_variants(void **state) {
    (void)state;
    model_config c;
    /* architecture from the architectures list; defaults */
    assert_int_equal(parse_cfg(&c, "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":64,"
                                   "\"intermediate_size\":128,\"num_hidden_layers\":2,\"num_attention_heads\":4,"
                                   "\"vocab_size\":100}"),
                     0);
    assert_int_equal(c.arch, ARCH_LLAMA);
    assert_int_equal(c.n_kv_heads, 4);
    assert_int_equal(c.head_dim, 16);
    assert_int_equal(c.max_seq, 2048);
    assert_true(c.rope_theta == 10000.0f && c.norm_eps == 1e-6f);
    assert_false(c.tied_embeddings);
    assert_false(c.qkv_bias);
    assert_int_equal(c.bos_id, -1);
    assert_int_equal(c.eos_id, -1);
    assert_int_equal(c.rope_scaling.type, ROPE_SCALING_NONE);
    /* qwen3: explicit head_dim differing from hidden/heads; attention_bias false; null fields count as absent */
    assert_int_equal(parse_cfg(&c, "{\"model_type\":\"qwen3\",\"hidden_size\":64,\"intermediate_size\":96,"
                                   "\"num_hidden_layers\":1,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
                                   "\"head_dim\":24,\"vocab_size\":50,\"attention_bias\":false,\"rope_scaling\":null,"
                                   "\"bos_token_id\":null,\"eos_token_id\":[7,8]}"),
                     0);
    assert_int_equal(c.arch, ARCH_QWEN3);
    assert_int_equal(c.head_dim, 24);
    assert_true(c.qk_norm && !c.qkv_bias);
    assert_int_equal(c.max_seq, 32768);
    assert_int_equal(c.eos_id, 7);
    /* qwen3 without head_dim uses Qwen3Config's 128 */
    assert_int_equal(parse_cfg(&c, "{\"model_type\":\"qwen3\",\"hidden_size\":64,\"intermediate_size\":96,"
                                   "\"num_hidden_layers\":1,\"num_attention_heads\":4,\"vocab_size\":50}"),
                     0);
    assert_int_equal(c.head_dim, 128);
    /* qwen2 always has qkv bias */
    assert_int_equal(parse_cfg(&c, "{\"model_type\":\"qwen2\",\"hidden_size\":64,\"intermediate_size\":96,"
                                   "\"num_hidden_layers\":1,\"num_attention_heads\":4,\"vocab_size\":50}"),
                     0);
    assert_true(c.qkv_bias && !c.qk_norm);
    /* llama with attention_bias */
    assert_int_equal(parse_cfg(&c, "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,"
                                   "\"num_hidden_layers\":1,\"num_attention_heads\":4,\"vocab_size\":50,"
                                   "\"attention_bias\":true}"),
                     0);
    assert_true(c.qkv_bias);
    /* rope scaling spellings */
    const char *base = "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,"
                       "\"num_hidden_layers\":1,\"num_attention_heads\":4,\"vocab_size\":50,\"rope_scaling\":";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s{\"type\":\"linear\",\"factor\":4.0}}", base);
    assert_int_equal(parse_cfg(&c, buf), 0);
    assert_int_equal(c.rope_scaling.type, ROPE_SCALING_LINEAR);
    assert_true(c.rope_scaling.factor == 4.0f);
    snprintf(buf, sizeof buf, "%s{\"rope_type\":\"default\"}}", base);
    assert_int_equal(parse_cfg(&c, buf), 0);
    assert_int_equal(c.rope_scaling.type, ROPE_SCALING_NONE);
    snprintf(buf, sizeof buf, "%s{\"rope_type\":\"yarn\",\"factor\":4.0}}", base);
    expect_error(parse_cfg(&c, buf), "rope_scaling type 'yarn' is not supported");
    snprintf(buf, sizeof buf, "%s{\"rope_type\":\"dynamic\",\"factor\":2.0}}", base);
    expect_error(parse_cfg(&c, buf), "rope_scaling type 'dynamic' is not supported");
    snprintf(buf, sizeof buf, "%s{\"rope_type\":\"llama3\",\"factor\":8.0}}", base);
    expect_error(parse_cfg(&c, buf), "missing field low_freq_factor");
    snprintf(buf, sizeof buf, "%s{\"rope_type\":\"linear\"}}", base);
    expect_error(parse_cfg(&c, buf), "missing field factor");
    snprintf(buf, sizeof buf, "%s{\"factor\":2.0}}", base);
    expect_error(parse_cfg(&c, buf), "no rope_type");
    snprintf(buf, sizeof buf, "%s\"llama3\"}", base);
    expect_error(parse_cfg(&c, buf), "rope_scaling must be an object");
}

static void config_errors(void **state) {
    (void)state;
    model_config c;
    struct { const char *json, *error; } cases[] = {
        {"{\"model_type\":\"xyz\"}", "config.json: unknown architecture 'xyz' (graft supports llama, qwen2, qwen3)"},
        {"{\"architectures\":[\"MistralForCausalLM\"]}", "unknown architecture 'MistralForCausalLM'"},
        {"{\"hidden_size\":8}", "missing field model_type"},
        {"not json at all", "config.json: not valid JSON"},
        {"[1,2,3]", "not a JSON object"},
        {"", "not valid JSON"},
        {"{\"model_type\":\"llama\"}", "missing field hidden_size"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64}", "missing field intermediate_size"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,\"num_attention_heads\":4,"
         "\"vocab_size\":50}",
         "missing field num_hidden_layers"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4}",
         "missing field vocab_size"},
        {"{\"model_type\":\"llama\",\"hidden_size\":0,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50}",
         "hidden_size = 0 is out of range"},
        {"{\"model_type\":\"llama\",\"hidden_size\":-64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50}",
         "hidden_size = -64 is out of range"},
        {"{\"model_type\":\"llama\",\"hidden_size\":\"64\",\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50}",
         "hidden_size must be a whole number"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64.5,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50}",
         "hidden_size must be a whole number"},
        {"{\"model_type\":\"llama\",\"hidden_size\":1e300,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50}",
         "out of range"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"num_key_value_heads\":3,\"vocab_size\":50}",
         "num_attention_heads 4 is not a multiple of num_key_value_heads 3"},
        {"{\"model_type\":\"llama\",\"hidden_size\":60,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50}",
         "head_dim 15 is odd"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":5,\"vocab_size\":50}",
         "hidden_size 64 is not a multiple of num_attention_heads 5"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50,\"rms_norm_eps\":-1}",
         "rms_norm_eps must be a positive number"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50,\"tie_word_embeddings\":\"yes\"}",
         "tie_word_embeddings must be true or false"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50,\"mlp_bias\":true}",
         "mlp_bias is not supported"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50,\"hidden_act\":\"gelu\"}",
         "hidden_act 'gelu' is not supported"},
        {"{\"model_type\":\"qwen2\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50,\"use_sliding_window\":true}",
         "sliding-window"},
        {"{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":96,\"num_hidden_layers\":1,"
         "\"num_attention_heads\":4,\"vocab_size\":50,\"eos_token_id\":\"</s>\"}",
         "eos_token_id must be a token id"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) expect_error(parse_cfg(&c, cases[i].json), cases[i].error);
}

/* ---- Hugging Face folders ----------------------------------------------- */

typedef struct {
    char name[96];
    int ndim;
    int64_t shape[2];
    float *v;
    size_t n;
} fx_tensor;

typedef struct {
    int D, F, L, H, KV, hd, V;
    bool bias, qk_norm, lm_head;
    fx_tensor t[128];
    int n;
} fx_model;

/* Values k/16 in [-4, 4): exact in bf16, f16 and f32, different per tensor. */
static void fx_add(fx_model *m, const char *name, int64_t d0, int64_t d1) {
    assert_true(m->n < 128);
    fx_tensor *t = &m->t[m->n];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = d1 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1;
    t->n = (size_t)d0 * (size_t)(d1 ? d1 : 1);
    t->v = malloc(t->n * sizeof(float));
    for (size_t i = 0; i < t->n; i++) t->v[i] = (float)((int)((i * 7 + (size_t)m->n * 13) % 128) - 64) / 16.0f;
    m->n++;
}

static void fx_build(fx_model *m) {
    const int qd = m->H * m->hd, kvd = m->KV * m->hd;
    char n[96];
    m->n = 0;
    fx_add(m, "model.embed_tokens.weight", m->V, m->D);
    for (int l = 0; l < m->L; l++) {
#define T(suffix, a, b) (snprintf(n, sizeof n, "model.layers.%d." suffix, l), fx_add(m, n, a, b))
        T("input_layernorm.weight", m->D, 0);
        T("self_attn.q_proj.weight", qd, m->D);
        T("self_attn.k_proj.weight", kvd, m->D);
        T("self_attn.v_proj.weight", kvd, m->D);
        T("self_attn.o_proj.weight", m->D, qd);
        if (m->bias) {
            T("self_attn.q_proj.bias", qd, 0);
            T("self_attn.k_proj.bias", kvd, 0);
            T("self_attn.v_proj.bias", kvd, 0);
        }
        if (m->qk_norm) {
            T("self_attn.q_norm.weight", m->hd, 0);
            T("self_attn.k_norm.weight", m->hd, 0);
        }
        T("post_attention_layernorm.weight", m->D, 0);
        T("mlp.gate_proj.weight", m->F, m->D);
        T("mlp.up_proj.weight", m->F, m->D);
        T("mlp.down_proj.weight", m->D, m->F);
#undef T
    }
    fx_add(m, "model.norm.weight", m->D, 0);
    if (m->lm_head) fx_add(m, "lm_head.weight", m->V, m->D);
}

static void fx_free(fx_model *m) {
    for (int i = 0; i < m->n; i++) free(m->t[i].v);
    m->n = 0;
}

static fx_tensor *fx_find(fx_model *m, const char *name) {
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->t[i].name, name) == 0) return &m->t[i];
    return NULL;
}

static void fx_drop(fx_model *m, const char *name) {
    fx_tensor *t = fx_find(m, name);
    assert_non_null(t);
    free(t->v);
    *t = m->t[--m->n];
}

/* Encodes t in dtype (dtype_of_index picks per tensor for mixed files). */
static void *encode(const fx_tensor *t, const char *dtype, size_t *nbytes) {
    if (strcmp(dtype, "F32") == 0) {
        *nbytes = t->n * 4;
        void *p = malloc(*nbytes ? *nbytes : 1);
        memcpy(p, t->v, *nbytes);
        return p;
    }
    *nbytes = t->n * 2;
    uint16_t *p = malloc(*nbytes ? *nbytes : 1);
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(dtype, "BF16") == 0) {
            p[i] = (uint16_t)(f32_bits(t->v[i]) >> 16); /* exact for k/16 values */
        } else {
            _Float16 h = (_Float16)t->v[i];
            memcpy(&p[i], &h, 2);
        }
    }
    return p;
}

/* Writes the tensors [from, to) of m into DIR/file. dtypes: one per tensor, cycled. */
static void fx_write_file(const char *dir, const char *file, const fx_model *m, int from, int to,
                          const char *const *dtypes, int n_dtypes) {
    st_entry *e = calloc((size_t)(to - from), sizeof *e);
    for (int i = from; i < to; i++) {
        const fx_tensor *t = &m->t[i];
        st_entry *x = &e[i - from];
        x->name = t->name;
        x->dtype = dtypes[i % n_dtypes];
        x->ndim = t->ndim;
        x->shape[0] = t->shape[0];
        x->shape[1] = t->shape[1];
        x->data = encode(t, x->dtype, &x->nbytes);
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    write_st(path, e, to - from);
    for (int i = 0; i < to - from; i++) free((void *)e[i].data);
    free(e);
}

static void fx_write_config(const char *dir, const fx_model *m, const char *model_type, bool tied) {
    char cfg[1024];
    snprintf(cfg, sizeof cfg,
             "{\"model_type\":\"%s\",\"hidden_size\":%d,\"intermediate_size\":%d,\"num_hidden_layers\":%d,"
             "\"num_attention_heads\":%d,\"num_key_value_heads\":%d,\"head_dim\":%d,\"vocab_size\":%d,"
             "\"max_position_embeddings\":64,\"rms_norm_eps\":1e-05,\"rope_theta\":10000.0,"
             "\"tie_word_embeddings\":%s,\"bos_token_id\":1,\"eos_token_id\":2}",
             model_type, m->D, m->F, m->L, m->H, m->KV, m->hd, m->V, tied ? "true" : "false");
    write_text(dir, "config.json", cfg);
}

static void expect_view(fx_model *fx, const char *name, const float *view) {
    fx_tensor *t = fx_find(fx, name);
    assert_non_null(t);
    assert_non_null(view);
    for (size_t i = 0; i < t->n; i++)
        if (view[i] != t->v[i]) fail_msg("%s[%zu]: loaded %g, expected %g", name, i, view[i], t->v[i]);
}

/* Every view of the loaded model equals the fixture tensor of its name. */
static void expect_weights(const model *m, fx_model *fx) {
    char n[96];
    expect_view(fx, "model.embed_tokens.weight", HW(m)->tok_embed);
    expect_view(fx, "model.norm.weight", HW(m)->final_norm);
    if (fx->lm_head && !m->cfg.tied_embeddings) expect_view(fx, "lm_head.weight", HW(m)->lm_head);
    else assert_ptr_equal(m->w.lm_head.ptr, m->w.tok_embed.ptr);
    for (int l = 0; l < fx->L; l++) {
        const layer_weights *w = &HW(m)->layers[l];
#define V(suffix, ptr) (snprintf(n, sizeof n, "model.layers.%d." suffix, l), expect_view(fx, n, ptr))
        V("input_layernorm.weight", w->attn_norm);
        V("self_attn.q_proj.weight", w->wq);
        V("self_attn.k_proj.weight", w->wk);
        V("self_attn.v_proj.weight", w->wv);
        V("self_attn.o_proj.weight", w->wo);
        V("post_attention_layernorm.weight", w->ffn_norm);
        V("mlp.gate_proj.weight", w->w_gate);
        V("mlp.up_proj.weight", w->w_up);
        V("mlp.down_proj.weight", w->w_down);
        if (fx->bias) {
            V("self_attn.q_proj.bias", w->bq);
            V("self_attn.k_proj.bias", w->bk);
            V("self_attn.v_proj.bias", w->bv);
        } else {
            assert_null(w->bq);
        }
        if (fx->qk_norm) {
            V("self_attn.q_norm.weight", w->q_norm);
            V("self_attn.k_norm.weight", w->k_norm);
        } else {
            assert_null(w->q_norm);
        }
#undef V
    }
}

static const char *const F32[] = {"F32"}, *const BF16[] = {"BF16"}, *const F16[] = {"F16"};

static void hf_llama_f32(void **state) {
    (void)state;
    char d[PATH_MAX];
    new_dir(d, sizeof d);
    fx_model fx = {.D = 8, .F = 12, .L = 2, .H = 2, .KV = 1, .hd = 4, .V = 16, .lm_head = true};
    fx_build(&fx);
    fx_write_config(d, &fx, "llama", false);
    fx_write_file(d, "model.safetensors", &fx, 0, fx.n, F32, 1);
    model m;
    if (model_load(&m, d, NULL) != 0) fail_msg("%s", gf_last_error());
    assert_int_equal(m.cfg.arch, ARCH_LLAMA);
    assert_int_equal(m.cfg.source, SOURCE_HF);
    assert_int_equal(m.cfg.dim, 8);
    assert_int_equal(m.cfg.hidden_dim, 12);
    assert_int_equal(m.cfg.n_layers, 2);
    assert_int_equal(m.cfg.n_kv_heads, 1);
    assert_int_equal(m.cfg.vocab_size, 16);
    assert_false(m.cfg.tied_embeddings);
    assert_string_equal(m.weights_dtype, "f32");
    assert_null(m.tok); /* no tokenizer.json: not an error */
    expect_weights(&m, &fx);
    assert_ptr_not_equal(m.w.lm_head.ptr, m.w.tok_embed.ptr);
    model_free(&m);
    fx_free(&fx);
}

static void hf_qwen2_bf16_tied(void **state) {
    (void)state;
    char d[PATH_MAX];
    new_dir(d, sizeof d);
    fx_model fx = {.D = 8, .F = 16, .L = 3, .H = 4, .KV = 2, .hd = 2, .V = 20, .bias = true};
    fx_build(&fx);
    fx_write_config(d, &fx, "qwen2", true);
    fx_write_file(d, "model.safetensors", &fx, 0, fx.n, BF16, 1);
    model m;
    if (model_load(&m, d, NULL) != 0) fail_msg("%s", gf_last_error());
    assert_int_equal(m.cfg.arch, ARCH_QWEN2);
    assert_true(m.cfg.qkv_bias && m.cfg.tied_embeddings);
    assert_string_equal(m.weights_dtype, "bf16");
    expect_weights(&m, &fx);
    model_free(&m);
    fx_free(&fx);
}

static void hf_qwen3_f16_head_dim(void **state) {
    (void)state;
    char d[PATH_MAX];
    new_dir(d, sizeof d);
    /* H * hd = 12 != D = 8, as Qwen3 allows */
    fx_model fx = {.D = 8, .F = 12, .L = 2, .H = 2, .KV = 1, .hd = 6, .V = 16, .qk_norm = true, .lm_head = true};
    fx_build(&fx);
    fx_write_config(d, &fx, "qwen3", false);
    fx_write_file(d, "model.safetensors", &fx, 0, fx.n, F16, 1);
    model m;
    if (model_load(&m, d, NULL) != 0) fail_msg("%s", gf_last_error());
    assert_int_equal(m.cfg.arch, ARCH_QWEN3);
    assert_int_equal(m.cfg.head_dim, 6);
    assert_true(m.cfg.qk_norm && !m.cfg.qkv_bias);
    assert_string_equal(m.weights_dtype, "f16");
    expect_weights(&m, &fx);
    model_free(&m);
    fx_free(&fx);
}

/* A Qwen3 teacher with attention_bias true: its student folder says so in
 * config.json, so the folder loads back with its q/k/v biases (Qwen3's
 * biases follow attention_bias, model_archs). */
static void hf_qwen3_bias_student_round_trip(void **state) {
    (void)state;
    char d[PATH_MAX], out[PATH_MAX + 16];
    new_dir(d, sizeof d);
    fx_model fx = {.D = 8, .F = 12, .L = 2, .H = 2, .KV = 1, .hd = 4, .V = 16, .bias = true, .qk_norm = true,
                   .lm_head = true};
    fx_build(&fx);
    char cfg[1024];
    snprintf(cfg, sizeof cfg,
             "{\"model_type\":\"qwen3\",\"hidden_size\":8,\"intermediate_size\":12,\"num_hidden_layers\":2,"
             "\"num_attention_heads\":2,\"num_key_value_heads\":1,\"head_dim\":4,\"vocab_size\":16,"
             "\"attention_bias\":true,\"tie_word_embeddings\":false}");
    write_text(d, "config.json", cfg);
    fx_write_file(d, "model.safetensors", &fx, 0, fx.n, F32, 1);
    model m;
    if (model_load(&m, d, NULL) != 0) fail_msg("%s", gf_last_error());
    assert_true(m.cfg.qkv_bias && m.cfg.qk_norm);
    student s;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    const bool mask[2] = {false, true};
    assert_int_equal(student_init_empty(&s, &m, &set), 0);
    assert_int_equal(student_build_layers(&s, mask, NULL, NULL, NULL), 0);
    assert_int_equal(student_set_gdn(&s, mask), 0);
    snprintf(out, sizeof out, "%s/student", d);
    if (student_save(&s, out, NULL, NULL) != 0) fail_msg("%s", gf_last_error());
    student r;
    if (student_load(&r, out, NULL) != 0) fail_msg("%s", gf_last_error());
    assert_int_equal(r.m->cfg.arch, ARCH_QWEN3);
    assert_true(r.m->cfg.qkv_bias && r.m->cfg.qk_norm);
    student_free(&r);
    student_free(&s);
    model_free(&m);
    fx_free(&fx);
}

static void write_index(const char *dir, const fx_model *fx, int split, const char *first, const char *second) {
    size_t cap = 16384, len = 0;
    char *s = malloc(cap);
    len += (size_t)snprintf(s, cap, "{\"metadata\":{\"total_size\":0},\"weight_map\":{");
    for (int i = 0; i < fx->n; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s\"%s\":\"%s\"", i ? "," : "", fx->t[i].name,
                                i < split ? first : second);
    snprintf(s + len, cap - len, "}}");
    write_text(dir, "model.safetensors.index.json", s);
    free(s);
}

static void hf_sharded_mixed(void **state) {
    (void)state;
    char d[PATH_MAX];
    new_dir(d, sizeof d);
    fx_model fx = {.D = 8, .F = 12, .L = 2, .H = 2, .KV = 2, .hd = 4, .V = 16, .lm_head = true};
    fx_build(&fx);
    fx_write_config(d, &fx, "llama", false);
    const char *const mixed[] = {"F32", "BF16", "F16"};
    int split = fx.n / 2;
    fx_write_file(d, "model-00001-of-00002.safetensors", &fx, 0, split, mixed, 3);
    fx_write_file(d, "model-00002-of-00002.safetensors", &fx, split, fx.n, mixed, 3);
    write_index(d, &fx, split, "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors");
    model m;
    if (model_load(&m, d, NULL) != 0) fail_msg("%s", gf_last_error());
    assert_string_equal(m.weights_dtype, "mixed");
    expect_weights(&m, &fx);
    model_free(&m);

    /* the tensor set API directly: each shard opened once, names found across shards */
    st_set set;
    assert_int_equal(st_set_open(&set, d), 0);
    assert_int_equal(set.n_files, 2);
    assert_non_null(st_set_find(&set, "model.embed_tokens.weight"));
    assert_non_null(st_set_find(&set, "lm_head.weight"));
    assert_null(st_set_find(&set, "model.layers.9.mlp.up_proj.weight"));
    st_set_close(&set);

    /* an index that names a shard that is not there */
    char d2[PATH_MAX];
    new_dir(d2, sizeof d2);
    fx_write_config(d2, &fx, "llama", false);
    fx_write_file(d2, "model-00001-of-00002.safetensors", &fx, 0, split, F32, 1);
    write_index(d2, &fx, split, "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors");
    expect_error(model_load(&m, d2, NULL), "shard model-00002-of-00002.safetensors named in "
                                           "model.safetensors.index.json is missing");
    /* an index that places a tensor in the wrong shard */
    char d3[PATH_MAX];
    new_dir(d3, sizeof d3);
    fx_write_config(d3, &fx, "llama", false);
    fx_write_file(d3, "a.safetensors", &fx, 0, split, F32, 1);
    fx_write_file(d3, "b.safetensors", &fx, split, fx.n, F32, 1);
    write_index(d3, &fx, split + 1, "a.safetensors", "b.safetensors");
    expect_error(model_load(&m, d3, NULL), "but that shard does not hold it");
    /* index escaping the folder; index not JSON */
    write_index(d3, &fx, split, "../a.safetensors", "b.safetensors");
    expect_error(model_load(&m, d3, NULL), "must be a plain file name");
    write_text(d3, "model.safetensors.index.json", "{\"weight_map\": ");
    expect_error(model_load(&m, d3, NULL), "not a JSON object");
    write_text(d3, "model.safetensors.index.json", "{\"metadata\": {}}");
    expect_error(model_load(&m, d3, NULL), "no \"weight_map\"");
    fx_free(&fx);
}

static void hf_tokenizer_choice(void **state) {
    (void)state;
    char d[PATH_MAX];
    new_dir(d, sizeof d);
    fx_model fx = {.D = 8, .F = 8, .L = 1, .H = 2, .KV = 1, .hd = 4, .V = 512};
    fx_build(&fx);
    fx_write_config(d, &fx, "llama", true);
    fx_write_file(d, "model.safetensors", &fx, 0, fx.n, BF16, 1);
    model m;
    /* a tokenizer.json that cannot be read is an error, not a silent NULL */
    write_text(d, "tokenizer.json", "this is not a tokenizer");
    expect_error(model_load(&m, d, NULL), "tokenizer.json");
    /* --tokenizer overrides what lies beside the weights (a llama2.c tokenizer.bin here) */
    const char *shared = getenv("GRAFT_SHARED");
    char tok[PATH_MAX];
    snprintf(tok, sizeof tok, "%s/models/tinyllamas/stories260K/tok512.bin", shared ? shared : "/nonexistent");
    if (shared && access(tok, R_OK) == 0) {
        model_load_opts opts = {.tokenizer_path = tok};
        if (model_load(&m, d, &opts) != 0) fail_msg("%s", gf_last_error());
        assert_non_null(m.tok);
        assert_int_equal(tokenizer_vocab_size(m.tok), 512);
        expect_weights(&m, &fx);
        model_free(&m);
    }
    fx_free(&fx);
}

/* Mean and standard deviation of n floats. */
static void moments(const float *x, size_t n, double *mean, double *sd) {
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) s += x[i], s2 += (double)x[i] * x[i];
    *mean = s / (double)n;
    *sd = sqrt(s2 / (double)n - *mean * *mean);
}

/* Loads tests/fixtures/hf/NAME; checks the values decode to the distributions
 * the generator drew (tests/ref/README.md): linears and embeddings ~ N(0, 0.2),
 * RMSNorm weights ~ U(0.8, 1.2) (+- half-float rounding), biases ~ N(0, 0.1). A wrong half-float decode
 * or a swapped tensor breaks these. */
static void load_hf_fixture(model *m, const char *name) {
    const char *root = getenv("GRAFT_ROOT");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/hf/%s", root ? root : ".", name);
    if (model_load(m, dir, NULL) != 0) fail_msg("%s", gf_last_error());
    const model_config *c = &m->cfg;
    assert_int_equal(c->source, SOURCE_HF);
    assert_int_equal(c->rope_pairing, ROPE_HALF);
    assert_null(m->tok); /* the fixtures carry no tokenizer */
    double mean, sd;
    const size_t D = c->dim, F = c->hidden_dim, qd = (size_t)c->n_heads * c->head_dim;
    moments(HW(m)->tok_embed, (size_t)c->vocab_size * D, &mean, &sd);
    assert_true(fabs(mean) < 0.02 && sd > 0.18 && sd < 0.22);
    for (int l = 0; l < c->n_layers; l++) {
        const layer_weights *w = &HW(m)->layers[l];
        const float *norms[] = {w->attn_norm, w->ffn_norm};
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; i < D; i++) assert_true(norms[k][i] >= 0.79f && norms[k][i] <= 1.21f);
        if (c->qk_norm)
            for (int i = 0; i < c->head_dim; i++)
                assert_true(w->q_norm[i] >= 0.79f && w->q_norm[i] <= 1.21f && w->k_norm[i] >= 0.79f &&
                            w->k_norm[i] <= 1.21f);
        moments(w->wq, qd * D, &mean, &sd);
        assert_true(sd > 0.17 && sd < 0.23);
        moments(w->w_down, D * F, &mean, &sd);
        assert_true(sd > 0.17 && sd < 0.23);
        if (c->qkv_bias) {
            moments(w->bq, qd, &mean, &sd);
            assert_true(sd > 0.05 && sd < 0.15);
        }
    }
    const float *fnorm = HW(m)->final_norm;
    for (size_t i = 0; i < D; i++) assert_true(fnorm[i] >= 0.79f && fnorm[i] <= 1.21f);
    if (!c->tied_embeddings) {
        assert_ptr_not_equal(m->w.lm_head.ptr, m->w.tok_embed.ptr);
        moments(HW(m)->lm_head, (size_t)c->vocab_size * D, &mean, &sd);
        assert_true(sd > 0.18 && sd < 0.22);
    }
}

static void hf_fixtures_from_transformers(void **state) {
    (void)state;
    model m;
    load_hf_fixture(&m, "llama");
    assert_int_equal(m.cfg.arch, ARCH_LLAMA);
    assert_int_equal(m.cfg.dim, 48);
    assert_int_equal(m.cfg.hidden_dim, 72);
    assert_int_equal(m.cfg.n_layers, 3);
    assert_int_equal(m.cfg.n_heads, 6);
    assert_int_equal(m.cfg.n_kv_heads, 2);
    assert_int_equal(m.cfg.head_dim, 8);
    assert_int_equal(m.cfg.vocab_size, 131);
    assert_true(m.cfg.tied_embeddings);
    assert_ptr_equal(m.w.lm_head.ptr, m.w.tok_embed.ptr);
    assert_true(m.cfg.norm_eps == 1e-5f && m.cfg.rope_theta == 50000.0f);
    assert_int_equal(m.cfg.rope_scaling.type, ROPE_SCALING_LLAMA3);
    assert_true(m.cfg.rope_scaling.factor == 8.0f && m.cfg.rope_scaling.low_freq_factor == 1.0f &&
                m.cfg.rope_scaling.high_freq_factor == 4.0f);
    assert_int_equal(m.cfg.rope_scaling.original_max_pos, 128);
    assert_false(m.cfg.qkv_bias || m.cfg.qk_norm);
    assert_string_equal(m.weights_dtype, "bf16");
    model_free(&m);

    load_hf_fixture(&m, "qwen2");
    assert_int_equal(m.cfg.arch, ARCH_QWEN2);
    assert_int_equal(m.cfg.dim, 40);
    assert_int_equal(m.cfg.hidden_dim, 88);
    assert_int_equal(m.cfg.n_layers, 2);
    assert_int_equal(m.cfg.n_heads, 5);
    assert_int_equal(m.cfg.n_kv_heads, 1);
    assert_int_equal(m.cfg.head_dim, 8); /* derived: no head_dim key */
    assert_int_equal(m.cfg.vocab_size, 143);
    assert_true(m.cfg.qkv_bias && !m.cfg.qk_norm && !m.cfg.tied_embeddings);
    assert_true(m.cfg.norm_eps == 1e-6f && m.cfg.rope_theta == 10000.0f);
    assert_int_equal(m.cfg.rope_scaling.type, ROPE_SCALING_NONE);
    assert_string_equal(m.weights_dtype, "f16");
    model_free(&m);
    st_set set;
    const char *root = getenv("GRAFT_ROOT");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/hf/qwen2", root ? root : ".");
    assert_int_equal(st_set_open(&set, dir), 0);
    assert_int_equal(set.n_files, 3);
    st_set_close(&set);

    load_hf_fixture(&m, "qwen3");
    assert_int_equal(m.cfg.arch, ARCH_QWEN3);
    assert_int_equal(m.cfg.dim, 36);
    assert_int_equal(m.cfg.hidden_dim, 60);
    assert_int_equal(m.cfg.n_layers, 2);
    assert_int_equal(m.cfg.n_heads, 4);
    assert_int_equal(m.cfg.n_kv_heads, 2);
    assert_int_equal(m.cfg.head_dim, 16); /* 4 x 16 != 36 */
    assert_int_equal(m.cfg.vocab_size, 120);
    assert_true(m.cfg.qk_norm && !m.cfg.qkv_bias && !m.cfg.tied_embeddings);
    assert_true(m.cfg.rope_theta == 1000000.0f); /* from rope_parameters (transformers 5 layout) */
    assert_int_equal(m.cfg.rope_scaling.type, ROPE_SCALING_NONE);
    assert_string_equal(m.weights_dtype, "f32");
    model_free(&m);
}

static void hf_folder_errors(void **state) {
    (void)state;
    fx_model fx = {.D = 8, .F = 12, .L = 3, .H = 2, .KV = 1, .hd = 4, .V = 16, .lm_head = true};
    model m;
    char d[PATH_MAX];

    /* missing tensor */
    new_dir(d, sizeof d);
    fx_build(&fx);
    fx_write_config(d, &fx, "llama", false);
    fx_drop(&fx, "model.layers.2.mlp.up_proj.weight");
    fx_write_file(d, "model.safetensors", &fx, 0, fx.n, F32, 1);
    expect_error(model_load(&m, d, NULL), "missing tensor model.layers.2.mlp.up_proj.weight");
    fx_free(&fx);

    /* k_proj written with the q_proj shape: config.json's KV heads disagree with it */
    new_dir(d, sizeof d);
    fx.KV = 2;
    fx_build(&fx);
    fx.KV = 1;
    fx_write_config(d, &fx, "llama", false);
    fx_write_file(d, "model.safetensors", &fx, 0, fx.n, F32, 1);
    expect_error(model_load(&m, d, NULL), "config.json: num_key_value_heads = 1, but model.layers.0.self_attn.k_proj.weight has 8 rows: 2 heads of size 4");
    fx_free(&fx);

    /* untied but no lm_head */
    new_dir(d, sizeof d);
    fx.lm_head = false;
    fx_build(&fx);
    fx_write_config(d, &fx, "llama", false);
    fx_write_file(d, "model.safetensors", &fx, 0, fx.n, F32, 1);
    expect_error(model_load(&m, d, NULL), "missing tensor lm_head.weight");
    /* the same files with a config that says tied load fine */
    fx_write_config(d, &fx, "llama", true);
    assert_int_equal(model_load(&m, d, NULL), 0);
    expect_weights(&m, &fx);
    model_free(&m);
    fx_free(&fx);

    /* tied, yet lm_head.weight present: ignored as transformers does */
    new_dir(d, sizeof d);
    fx.lm_head = true;
    fx_build(&fx);
    fx_write_config(d, &fx, "llama", true);
    fx_write_file(d, "model.safetensors", &fx, 0, fx.n, F32, 1);
    assert_int_equal(model_load(&m, d, NULL), 0);
    assert_ptr_equal(m.w.lm_head.ptr, m.w.tok_embed.ptr);
    expect_view(&fx, "model.embed_tokens.weight", HW(&m)->lm_head);
    model_free(&m);

    /* config problems */
    write_text(d, "config.json", "{\"model_type\":\"xyz\"}");
    expect_error(model_load(&m, d, NULL), "config.json: unknown architecture 'xyz' (graft supports llama, qwen2, qwen3)");
    write_text(d, "config.json", "{\"model_type\":\"llama\",\"hidden_size\":8");
    expect_error(model_load(&m, d, NULL), "config.json: not valid JSON");
    write_text(d, "config.json", "{\"model_type\":\"llama\",\"hidden_size\":8}");
    expect_error(model_load(&m, d, NULL), "config.json: missing field intermediate_size");
    /* a config larger than the files: refused against the weights, no huge allocation */
    write_text(d, "config.json", "{\"model_type\":\"llama\",\"hidden_size\":1048576,\"intermediate_size\":1048576,"
                                 "\"num_hidden_layers\":4096,\"num_attention_heads\":16,\"vocab_size\":16777216}");
    expect_error(model_load(&m, d, NULL), "config.json: num_hidden_layers = 4096, but the weights hold 3 layers");
    fx_free(&fx);

    /* an output projection bias is refused rather than dropped */
    new_dir(d, sizeof d);
    fx_build(&fx);
    fx_add(&fx, "model.layers.1.self_attn.o_proj.bias", 8, 0);
    fx_write_config(d, &fx, "llama", false);
    fx_write_file(d, "model.safetensors", &fx, 0, fx.n, F32, 1);
    expect_error(model_load(&m, d, NULL), "model.layers.1.self_attn.o_proj.bias: an output projection bias is not supported");
    fx_free(&fx);

    /* folder without config.json / without safetensors */
    new_dir(d, sizeof d);
    expect_error(model_load(&m, d, NULL), "no config.json");
    fx_build(&fx);
    fx_write_config(d, &fx, "llama", false);
    expect_error(model_load(&m, d, NULL), "no model.safetensors");
    /* a lone differently named file is used; a broken one reports itself */
    fx_write_file(d, "weights.safetensors", &fx, 0, fx.n, BF16, 1);
    assert_int_equal(model_load(&m, d, NULL), 0);
    model_free(&m);
    write_raw_st(strcat(strcpy((char[PATH_MAX]){0}, d), "/model.safetensors"), 99, "{}", 0);
    expect_error(model_load(&m, d, NULL), "header length 99 exceeds file size");
    fx_free(&fx);
}

/* ---- llama2.c checkpoints ----------------------------------------------- */

typedef struct {
    int dim, hidden, layers, heads, kv_heads, vocab, seq;
    bool shared;
    /* float32 source weights, llama2.c names */
    float *emb, *att_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w1, *w2, *w3, *final_norm, *wcls;
} l2c_weights;

static uint32_t lcg_state = 12345;
static float lcg_uniform(void) {
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)(lcg_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

static float *rand_floats(size_t n) {
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = lcg_uniform();
    return p;
}

static void l2c_make(l2c_weights *w, bool shared) {
    *w = (l2c_weights){.dim = 16, .hidden = 24, .layers = 2, .heads = 4, .kv_heads = 2, .vocab = 32, .seq = 8,
                       .shared = shared};
    size_t D = 16, F = 24, L = 2, V = 32, kvd = 8;
    w->emb = rand_floats(V * D);
    w->att_norm = rand_floats(L * D);
    w->wq = rand_floats(L * D * D);
    w->wk = rand_floats(L * kvd * D);
    w->wv = rand_floats(L * kvd * D);
    w->wo = rand_floats(L * D * D);
    w->ffn_norm = rand_floats(L * D);
    w->w1 = rand_floats(L * F * D);
    w->w2 = rand_floats(L * D * F);
    w->w3 = rand_floats(L * F * D);
    w->final_norm = rand_floats(D);
    w->wcls = shared ? NULL : rand_floats(V * D);
}

static void l2c_free(l2c_weights *w) {
    float *p[] = {w->emb, w->att_norm, w->wq, w->wk, w->wv, w->wo, w->ffn_norm, w->w1, w->w2, w->w3,
                  w->final_norm, w->wcls};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

static void put_f32(FILE *f, const float *p, size_t n) { assert_int_equal(fwrite(p, 4, n, f), n); }

static void l2c_write_legacy(const char *path, const l2c_weights *w, bool freq) {
    FILE *f = fopen(path, "wb");
    int32_t h[7] = {w->dim, w->hidden, w->layers, w->heads, w->kv_heads, w->shared ? w->vocab : -w->vocab, w->seq};
    fwrite(h, 4, 7, f);
    size_t D = 16, F = 24, L = 2, V = 32, kvd = 8, hd = 4;
    put_f32(f, w->emb, V * D);
    put_f32(f, w->att_norm, L * D);
    put_f32(f, w->wq, L * D * D);
    put_f32(f, w->wk, L * kvd * D);
    put_f32(f, w->wv, L * kvd * D);
    put_f32(f, w->wo, L * D * D);
    put_f32(f, w->ffn_norm, L * D);
    put_f32(f, w->w1, L * F * D);
    put_f32(f, w->w2, L * D * F);
    put_f32(f, w->w3, L * F * D);
    put_f32(f, w->final_norm, D);
    if (freq) {
        float *fc = rand_floats((size_t)w->seq * hd);
        put_f32(f, fc, (size_t)w->seq * hd);
        free(fc);
    }
    if (!w->shared) put_f32(f, w->wcls, V * D);
    fclose(f);
}

static void l2c_header(FILE *f, const l2c_weights *w, int version, int32_t group) {
    uint8_t hdr[256] = {0};
    uint32_t magic = 0x616b3432u;
    int32_t ver = version;
    int32_t p[7] = {w->dim, w->hidden, w->layers, w->heads, w->kv_heads, w->vocab, w->seq};
    memcpy(hdr, &magic, 4);
    memcpy(hdr + 4, &ver, 4);
    memcpy(hdr + 8, p, 28);
    hdr[36] = w->shared;
    if (version == 2) memcpy(hdr + 37, &group, 4);
    fwrite(hdr, 1, 256, f);
}

static void l2c_write_v1(const char *path, const l2c_weights *w) {
    FILE *f = fopen(path, "wb");
    l2c_header(f, w, 1, 0);
    size_t D = 16, F = 24, L = 2, V = 32, kvd = 8;
    put_f32(f, w->att_norm, L * D);
    put_f32(f, w->ffn_norm, L * D);
    put_f32(f, w->final_norm, D);
    put_f32(f, w->emb, V * D);
    put_f32(f, w->wq, L * D * D);
    put_f32(f, w->wk, L * kvd * D);
    put_f32(f, w->wv, L * kvd * D);
    put_f32(f, w->wo, L * D * D);
    put_f32(f, w->w1, L * F * D);
    put_f32(f, w->w2, L * D * F);
    put_f32(f, w->w3, L * F * D);
    if (!w->shared) put_f32(f, w->wcls, V * D);
    fclose(f);
}

/* Q8_0 as export.py: per group scale = max|w| / 127, q = round(w / scale).
 * Also stores the exact dequantized values in deq (same layout as src). */
static void put_q8(FILE *f, const float *src, size_t n, size_t gs, float *deq) {
    int8_t *q = malloc(n);
    float *s = malloc(n / gs * sizeof(float));
    for (size_t g = 0; g < n / gs; g++) {
        float mx = 0;
        for (size_t i = g * gs; i < (g + 1) * gs; i++) mx = fmaxf(mx, fabsf(src[i]));
        s[g] = mx / 127.0f;
        for (size_t i = g * gs; i < (g + 1) * gs; i++) {
            q[i] = (int8_t)lrintf(src[i] / s[g]);
            deq[i] = (float)q[i] * s[g];
        }
    }
    fwrite(q, 1, n, f);
    fwrite(s, 4, n / gs, f);
    free(q);
    free(s);
}

/* Writes v2 and fills `deq` (a copy of w with dequantized matrices). */
static void l2c_write_v2(const char *path, const l2c_weights *w, int32_t gs, l2c_weights *deq) {
    FILE *f = fopen(path, "wb");
    l2c_header(f, w, 2, gs);
    size_t D = 16, F = 24, L = 2, V = 32, kvd = 8;
    *deq = *w;
    deq->emb = malloc(V * D * 4);
    deq->wq = malloc(L * D * D * 4);
    deq->wk = malloc(L * kvd * D * 4);
    deq->wv = malloc(L * kvd * D * 4);
    deq->wo = malloc(L * D * D * 4);
    deq->w1 = malloc(L * F * D * 4);
    deq->w2 = malloc(L * D * F * 4);
    deq->w3 = malloc(L * F * D * 4);
    deq->wcls = w->shared ? NULL : malloc(V * D * 4);
    put_f32(f, w->att_norm, L * D);
    put_f32(f, w->ffn_norm, L * D);
    put_f32(f, w->final_norm, D);
    put_q8(f, w->emb, V * D, (size_t)gs, deq->emb);
    for (size_t l = 0; l < L; l++) put_q8(f, w->wq + l * D * D, D * D, (size_t)gs, deq->wq + l * D * D);
    for (size_t l = 0; l < L; l++) put_q8(f, w->wk + l * kvd * D, kvd * D, (size_t)gs, deq->wk + l * kvd * D);
    for (size_t l = 0; l < L; l++) put_q8(f, w->wv + l * kvd * D, kvd * D, (size_t)gs, deq->wv + l * kvd * D);
    for (size_t l = 0; l < L; l++) put_q8(f, w->wo + l * D * D, D * D, (size_t)gs, deq->wo + l * D * D);
    for (size_t l = 0; l < L; l++) put_q8(f, w->w1 + l * F * D, F * D, (size_t)gs, deq->w1 + l * F * D);
    for (size_t l = 0; l < L; l++) put_q8(f, w->w2 + l * D * F, D * F, (size_t)gs, deq->w2 + l * D * F);
    for (size_t l = 0; l < L; l++) put_q8(f, w->w3 + l * F * D, F * D, (size_t)gs, deq->w3 + l * F * D);
    if (!w->shared) put_q8(f, w->wcls, V * D, (size_t)gs, deq->wcls);
    fclose(f);
}

static void l2c_free_deq(l2c_weights *d) {
    float *p[] = {d->emb, d->wq, d->wk, d->wv, d->wo, d->w1, d->w2, d->w3, d->wcls};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

static void expect_floats(const char *what, const float *got, const float *want, size_t n, float tol) {
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= tol)) fail_msg("%s[%zu]: %.9g vs %.9g", what, i, got[i], want[i]);
}

/* The loaded model holds exactly (tol 0) or nearly the weights of w. */
static void expect_l2c(const model *m, const l2c_weights *w, float tol) {
    const model_config *c = &m->cfg;
    assert_int_equal(c->source, SOURCE_LLAMA2C);
    assert_int_equal(c->dim, 16);
    assert_int_equal(c->hidden_dim, 24);
    assert_int_equal(c->n_layers, 2);
    assert_int_equal(c->n_heads, 4);
    assert_int_equal(c->n_kv_heads, 2);
    assert_int_equal(c->head_dim, 4);
    assert_int_equal(c->vocab_size, 32);
    assert_int_equal(c->max_seq, 8);
    assert_int_equal(c->rope_pairing, ROPE_ADJACENT);
    assert_int_equal(c->tied_embeddings, w->shared);
    size_t D = 16, F = 24, V = 32, kvd = 8;
    expect_floats("emb", HW(m)->tok_embed, w->emb, V * D, tol);
    expect_floats("final_norm", HW(m)->final_norm, w->final_norm, D, 0);
    for (size_t l = 0; l < 2; l++) {
        const layer_weights *lw = &HW(m)->layers[l];
        expect_floats("att_norm", lw->attn_norm, w->att_norm + l * D, D, 0);
        expect_floats("ffn_norm", lw->ffn_norm, w->ffn_norm + l * D, D, 0);
        expect_floats("wq", lw->wq, w->wq + l * D * D, D * D, tol);
        expect_floats("wk", lw->wk, w->wk + l * kvd * D, kvd * D, tol);
        expect_floats("wv", lw->wv, w->wv + l * kvd * D, kvd * D, tol);
        expect_floats("wo", lw->wo, w->wo + l * D * D, D * D, tol);
        expect_floats("w1", lw->w_gate, w->w1 + l * F * D, F * D, tol);
        expect_floats("w2", lw->w_down, w->w2 + l * D * F, D * F, tol);
        expect_floats("w3", lw->w_up, w->w3 + l * F * D, F * D, tol);
    }
    if (w->shared) assert_ptr_equal(m->w.lm_head.ptr, m->w.tok_embed.ptr);
    else expect_floats("wcls", HW(m)->lm_head, w->wcls, V * D, tol);
}

static void l2c_round_trip(void **state) {
    (void)state;
    char d[PATH_MAX], p0[PATH_MAX], p0n[PATH_MAX], p1[PATH_MAX], p2[PATH_MAX];
    new_dir(d, sizeof d);
    for (int shared = 0; shared <= 1; shared++) {
        l2c_weights w, deq;
        l2c_make(&w, shared);
        snprintf(p0, sizeof p0, "%s/legacy%d.bin", d, shared);
        snprintf(p0n, sizeof p0n, "%s/legacy_nofreq%d.bin", d, shared);
        snprintf(p1, sizeof p1, "%s/v1_%d.bin", d, shared);
        snprintf(p2, sizeof p2, "%s/v2_%d.bin", d, shared);
        l2c_write_legacy(p0, &w, true);
        l2c_write_legacy(p0n, &w, false);
        l2c_write_v1(p1, &w);
        l2c_write_v2(p2, &w, 8, &deq);
        model m0, m0n, m1, m2;
        if (model_load(&m0, p0, NULL) != 0) fail_msg("%s", gf_last_error());
        if (model_load(&m0n, p0n, NULL) != 0) fail_msg("%s", gf_last_error());
        if (model_load(&m1, p1, NULL) != 0) fail_msg("%s", gf_last_error());
        if (model_load(&m2, p2, NULL) != 0) fail_msg("%s", gf_last_error());
        expect_l2c(&m0, &w, 0);
        assert_string_equal(m0.weights_dtype, "f32");
        /* v1 and freq-less legacy: the same block, bit for bit */
        assert_int_equal(HW(&m1)->n_floats, HW(&m0)->n_floats);
        assert_memory_equal(HW(&m1)->block, HW(&m0)->block, HW(&m0)->n_floats * sizeof(float));
        assert_memory_equal(HW(&m0n)->block, HW(&m0)->block, HW(&m0)->n_floats * sizeof(float));
        assert_string_equal(m1.weights_dtype, "f32");
        /* v2: exactly q * scale, and within half a quantization step of the legacy weights */
        assert_string_equal(m2.weights_dtype, "q8_0");
        expect_l2c(&m2, &deq, 0);
        expect_l2c(&m2, &w, 1.0f / 127.0f * 0.5f * 1.0001f); /* |w| < 1 so scale < 1/127 */
        model_free(&m0);
        model_free(&m0n);
        model_free(&m1);
        model_free(&m2);
        l2c_free_deq(&deq);
        l2c_free(&w);
    }
}

/* A copy of src cut or extended to n bytes. */
static void resize_copy(const char *src, const char *dst, long delta) {
    FILE *f = fopen(src, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc(1, (size_t)(n + (delta > 0 ? delta : 0)));
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    write_bytes(dst, buf, (size_t)(n + delta));
    free(buf);
}

static void patch_i32(const char *path, long off, int32_t v) {
    FILE *f = fopen(path, "r+b");
    fseek(f, off, SEEK_SET);
    fwrite(&v, 4, 1, f);
    fclose(f);
}

static void l2c_malformed(void **state) {
    (void)state;
    char d[PATH_MAX], p0[PATH_MAX], p1[PATH_MAX], p2[PATH_MAX], bad[PATH_MAX];
    new_dir(d, sizeof d);
    l2c_weights w, deq;
    l2c_make(&w, false);
    snprintf(p0, sizeof p0, "%s/legacy.bin", d);
    snprintf(p1, sizeof p1, "%s/v1.bin", d);
    snprintf(p2, sizeof p2, "%s/v2.bin", d);
    snprintf(bad, sizeof bad, "%s/bad.bin", d);
    l2c_write_legacy(p0, &w, true);
    l2c_write_v1(p1, &w);
    l2c_write_v2(p2, &w, 16, &deq);
    model m;
    const struct { const char *src; long delta; const char *error; } sizes[] = {
        {p0, -4, "truncated legacy checkpoint"},
        {p0, -2000, "truncated legacy checkpoint"},
        {p0, 8, "8 trailing bytes"},
        {p0, -(8 * 4 * 4) + 4, "freq_cis tables are cut short"}, /* size between with and without them */
        {p1, -1, "truncated v1 checkpoint"},
        {p1, 12, "12 trailing bytes"},
        {p2, -3, "truncated v2 checkpoint"},
        {p2, 1, "1 trailing bytes"},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        resize_copy(sizes[i].src, bad, sizes[i].delta);
        expect_error(model_load(&m, bad, NULL), sizes[i].error);
    }
    /* headers */
    struct stat st;
    assert_int_equal(stat(p1, &st), 0);
    resize_copy(p1, bad, 100 - (long)st.st_size);
    expect_error(model_load(&m, bad, NULL), "truncated llama2.c v1 checkpoint (100 bytes; the header alone needs 256)");
    write_bytes(bad, "\x10\0\0\0\x18\0", 6);
    expect_error(model_load(&m, bad, NULL), "truncated file (6 bytes");
    write_bytes(bad, "", 0);
    expect_error(model_load(&m, bad, NULL), "truncated file (0 bytes");
    write_bytes(bad, "24ka\x01\0", 6); /* magic 0x616b3432, little-endian */
    expect_error(model_load(&m, bad, NULL), "truncated llama2.c checkpoint");
    resize_copy(p1, bad, 0);
    patch_i32(bad, 4, 3);
    expect_error(model_load(&m, bad, NULL), "unsupported llama2.c checkpoint version 3");
    patch_i32(bad, 4, -1);
    expect_error(model_load(&m, bad, NULL), "unsupported llama2.c checkpoint version -1");
    resize_copy(p1, bad, 0);
    patch_i32(bad, 8 + 5 * 4, -32); /* versioned vocab must be positive */
    expect_error(model_load(&m, bad, NULL), "header vocab_size = -32");
    resize_copy(p2, bad, 0);
    patch_i32(bad, 37, 0);
    expect_error(model_load(&m, bad, NULL), "bad Q8_0 group size 0");
    patch_i32(bad, 37, 7);
    expect_error(model_load(&m, bad, NULL), "group size 7 does not divide");
    resize_copy(p0, bad, 0);
    patch_i32(bad, 0, -5);
    expect_error(model_load(&m, bad, NULL), "not a llama2.c checkpoint (header dim = -5)");
    resize_copy(p0, bad, 0);
    patch_i32(bad, 5 * 4, INT32_MIN);
    expect_error(model_load(&m, bad, NULL), "header vocab_size = -2147483648");
    resize_copy(p0, bad, 0);
    patch_i32(bad, 4 * 4, 3);
    expect_error(model_load(&m, bad, NULL), "n_heads 4 is not a multiple of n_kv_heads 3");
    resize_copy(p0, bad, 0);
    patch_i32(bad, 2 * 4, 1 << 24); /* huge layer count: size check, not an allocation */
    patch_i32(bad, 1 * 4, 1 << 24);
    expect_error(model_load(&m, bad, NULL), "truncated legacy checkpoint");
    l2c_free_deq(&deq);
    l2c_free(&w);
}

/* Q8_0 groups of gs: each value within half a step (max|w| / 127 / 2) of w. */
static int expect_q8_close(const char *what, const float *q, const float *w, size_t n, size_t gs) {
    int differ = 0;
    for (size_t g = 0; g < n / gs; g++) {
        float mx = 0;
        for (size_t i = g * gs; i < (g + 1) * gs; i++) mx = fmaxf(mx, fabsf(w[i]));
        for (size_t i = g * gs; i < (g + 1) * gs; i++) {
            if (!(fabsf(q[i] - w[i]) <= mx / 127.0f * 0.5f * 1.0001f))
                fail_msg("%s[%zu]: %.9g vs %.9g (step %.3g)", what, i, q[i], w[i], mx / 127.0f);
            differ += q[i] != w[i];
        }
    }
    return differ;
}

/* Fixtures written by tests/ref/make_llama2c_fixtures.py (an independent writer). */
static void l2c_python_fixtures(void **state) {
    (void)state;
    const char *root = getenv("GRAFT_ROOT");
    char p0[PATH_MAX], p1[PATH_MAX], p2[PATH_MAX];
    snprintf(p0, sizeof p0, "%s/tests/fixtures/llama2c/tiny_legacy.bin", root ? root : ".");
    snprintf(p1, sizeof p1, "%s/tests/fixtures/llama2c/tiny_v1.bin", root ? root : ".");
    snprintf(p2, sizeof p2, "%s/tests/fixtures/llama2c/tiny_v2.bin", root ? root : ".");
    model m0, m1, m2;
    if (model_load(&m0, p0, NULL) != 0) fail_msg("%s", gf_last_error());
    if (model_load(&m1, p1, NULL) != 0) fail_msg("%s", gf_last_error());
    if (model_load(&m2, p2, NULL) != 0) fail_msg("%s", gf_last_error());
    const model_config *c = &m0.cfg;
    assert_int_equal(c->dim, 8);
    assert_int_equal(c->hidden_dim, 16);
    assert_int_equal(c->n_layers, 2);
    assert_int_equal(c->n_heads, 2);
    assert_int_equal(c->n_kv_heads, 1);
    assert_int_equal(c->vocab_size, 16);
    assert_int_equal(c->max_seq, 4);
    assert_false(c->tied_embeddings);
    assert_memory_equal(&m1.cfg, &m0.cfg, sizeof m0.cfg);
    assert_memory_equal(&m2.cfg, &m0.cfg, sizeof m0.cfg);
    assert_memory_equal(HW(&m1)->block, HW(&m0)->block, HW(&m0)->n_floats * sizeof(float));
    assert_string_equal(m2.weights_dtype, "q8_0");
    const size_t D = 8, F = 16, V = 16, kvd = 4, gs = 8;
    int differ = expect_q8_close("emb", HW(&m2)->tok_embed, HW(&m0)->tok_embed, V * D, gs);
    differ += expect_q8_close("wcls", HW(&m2)->lm_head, HW(&m0)->lm_head, V * D, gs);
    expect_floats("final_norm", HW(&m2)->final_norm, HW(&m0)->final_norm, D, 0);
    for (int l = 0; l < 2; l++) {
        const layer_weights *a = &HW(&m2)->layers[l], *b = &HW(&m0)->layers[l];
        expect_floats("attn_norm", a->attn_norm, b->attn_norm, D, 0);
        expect_floats("ffn_norm", a->ffn_norm, b->ffn_norm, D, 0);
        differ += expect_q8_close("wq", a->wq, b->wq, D * D, gs);
        differ += expect_q8_close("wk", a->wk, b->wk, kvd * D, gs);
        differ += expect_q8_close("wv", a->wv, b->wv, kvd * D, gs);
        differ += expect_q8_close("wo", a->wo, b->wo, D * D, gs);
        differ += expect_q8_close("w1", a->w_gate, b->w_gate, F * D, gs);
        differ += expect_q8_close("w2", a->w_down, b->w_down, D * F, gs);
        differ += expect_q8_close("w3", a->w_up, b->w_up, F * D, gs);
    }
    assert_true(differ > 100); /* really quantized, not a float copy */
    model_free(&m0);
    model_free(&m1);
    model_free(&m2);
}

/* Random byte flips and truncations of valid files: each must load or fail
 * with a message, never crash (this is what the sanitizer build is for). */
static void mutations_never_crash(void **state) {
    (void)state;
    char d[PATH_MAX], good[PATH_MAX], bad[PATH_MAX], l2c[PATH_MAX];
    new_dir(d, sizeof d);
    snprintf(good, sizeof good, "%s/good.safetensors", d);
    snprintf(bad, sizeof bad, "%s/bad.safetensors", d);
    const float v[6] = {1, 2, 3, 4, 5, 6};
    st_entry e[] = {{"a", "F32", 2, {2, 2}, v, 16}, {"b", "BF16", 1, {4}, v, 8}, {"c", "F16", 1, {2}, v + 4, 4}};
    write_st(good, e, 3);
    struct stat st;
    assert_int_equal(stat(good, &st), 0);
    const size_t n = (size_t)st.st_size;
    uint8_t *orig = malloc(n), *buf = malloc(n);
    FILE *f = fopen(good, "rb");
    assert_int_equal(fread(orig, 1, n, f), n);
    fclose(f);
    uint32_t seed = 99;
    int opened = 0;
    for (int it = 0; it < 600; it++) {
        memcpy(buf, orig, n);
        size_t len = n;
        seed = seed * 1103515245u + 12345u;
        if (it % 5 == 4) {
            len = (seed >> 8) % n;
        } else {
            for (int k = 0; k < 1 + it % 3; k++) {
                seed = seed * 1103515245u + 12345u;
                size_t at = (seed >> 8) % (n < 200 ? n : 200); /* mostly the header */
                buf[at] = (uint8_t)(seed >> 24);
            }
        }
        write_bytes(bad, buf, len);
        st_file sf;
        if (st_open(&sf, bad) == 0) {
            opened++;
            for (size_t t = 0; t < sf.n_tensors; t++) {
                float *out = malloc(sf.tensors[t].n_elems * sizeof(float) + 1);
                assert_int_equal(st_read_f32(&sf.tensors[t], out, sf.tensors[t].n_elems), 0);
                free(out);
            }
            st_close(&sf);
        } else {
            assert_true(strlen(gf_last_error()) > 0);
            assert_null(strchr(gf_last_error(), '\n'));
        }
    }
    assert_true(opened > 0 && opened < 600);
    free(orig);
    free(buf);

    /* llama2.c v2 and legacy headers */
    l2c_weights w, deq;
    l2c_make(&w, true);
    snprintf(l2c, sizeof l2c, "%s/v2.bin", d);
    l2c_write_v2(l2c, &w, 8, &deq);
    assert_int_equal(stat(l2c, &st), 0);
    const size_t n2 = (size_t)st.st_size;
    orig = malloc(n2);
    buf = malloc(n2);
    f = fopen(l2c, "rb");
    assert_int_equal(fread(orig, 1, n2, f), n2);
    fclose(f);
    snprintf(bad, sizeof bad, "%s/bad.bin", d);
    for (int it = 0; it < 300; it++) {
        memcpy(buf, orig, n2);
        seed = seed * 1103515245u + 12345u;
        buf[(seed >> 8) % 48] = (uint8_t)(seed >> 24);
        if (it % 2) memcpy(buf, "\x10\0\0\0", 4); /* legacy: dim 16 */
        write_bytes(bad, buf, n2);
        model m;
        if (model_load(&m, bad, NULL) == 0) model_free(&m);
        else assert_null(strchr(gf_last_error(), '\n'));
    }
    free(orig);
    free(buf);
    l2c_free_deq(&deq);
    l2c_free(&w);
}

static void l2c_real_teacher(void **state) {
    (void)state;
    const char *shared = getenv("GRAFT_SHARED");
    char path[PATH_MAX];
    if (!shared) skip();
    snprintf(path, sizeof path, "%s/models/tinyllamas/stories260K/stories260K.bin", shared);
    if (access(path, R_OK) != 0) skip();
    model m;
    if (model_load(&m, path, NULL) != 0) fail_msg("%s", gf_last_error());
    const model_config *c = &m.cfg;
    assert_int_equal(c->dim, 64);
    assert_int_equal(c->hidden_dim, 172);
    assert_int_equal(c->n_layers, 5);
    assert_int_equal(c->n_heads, 8);
    assert_int_equal(c->n_kv_heads, 4);
    assert_int_equal(c->head_dim, 8);
    assert_int_equal(c->vocab_size, 512);
    assert_int_equal(c->max_seq, 512);
    assert_true(c->tied_embeddings);
    assert_ptr_equal(m.w.lm_head.ptr, m.w.tok_embed.ptr);
    assert_string_equal(m.weights_dtype, "f32");
    assert_non_null(m.tok); /* tok512.bin beside it */
    assert_int_equal(tokenizer_vocab_size(m.tok), 512);
    /* the first embedding row is the file's first floats after the 28-byte header */
    FILE *f = fopen(path, "rb");
    float first[64];
    fseek(f, 28, SEEK_SET);
    assert_int_equal(fread(first, 4, 64, f), 64);
    fclose(f);
    assert_memory_equal(first, HW(&m)->tok_embed, sizeof first);
    double sumsq = 0;
    const model_weights *hw = HW(&m);
    for (size_t i = 0; i < hw->n_floats; i++) {
        assert_true(isfinite(hw->block[i]));
        sumsq += (double)hw->block[i] * hw->block[i];
    }
    assert_true(sumsq > 0);
    model_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(f16_known_bits),
        cmocka_unit_test(st_reads_each_dtype),
        cmocka_unit_test(st_rejects_malformed),
        cmocka_unit_test(st_agrees_with_reference_library),
        cmocka_unit_test(config_shared_shapes),
        cmocka_unit_test(config_defaults_and_variants),
        cmocka_unit_test(config_errors),
        cmocka_unit_test(hf_llama_f32),
        cmocka_unit_test(hf_qwen2_bf16_tied),
        cmocka_unit_test(hf_qwen3_f16_head_dim),
        cmocka_unit_test(hf_qwen3_bias_student_round_trip),
        cmocka_unit_test(hf_sharded_mixed),
        cmocka_unit_test(hf_fixtures_from_transformers),
        cmocka_unit_test(hf_folder_errors),
        cmocka_unit_test(hf_tokenizer_choice),
        cmocka_unit_test(l2c_round_trip),
        cmocka_unit_test(l2c_malformed),
        cmocka_unit_test(l2c_python_fixtures),
        cmocka_unit_test(mutations_never_crash),
        cmocka_unit_test(l2c_real_teacher),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
