/* Unit tests of the Hub client's pure parts: sha256 / sha1 vectors (libcrypto), repo references
 * and URLs, the cache layout (paths, relative links, refs), file selection
 * globs, the model-info parser, ETag normalisation, and resolving a
 * hand-built cache offline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "hub/cache.h"
#include "hub/env.h"
#include "hub/http.h"
#include "hub/hub.h"
#include "hub/model_info.h"
#include "hub/repo_ref.h"
#include "hub/resolve.h"
#include "hub/digest.h"
#include "hub/verify.h"

static void hex_of(const void *data, size_t n, char out[65]) {
    digest c = {0};
    digest_start(&c, DIGEST_SHA256);
    digest_update(&c, data, n);
    digest_final_hex(&c, out);
    digest_free(&c);
}

static void sha256_vectors(void **state) {
    (void)state;
    char h[65];
    hex_of("", 0, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", 3, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    hex_of(m448, strlen(m448), h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                       "mnopqrstnopqrstu";
    hex_of(m896, strlen(m896), h);
    assert_string_equal(h, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    /* one million 'a', fed in uneven pieces to cross block boundaries */
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    digest c = {0};
    digest_start(&c, DIGEST_SHA256);
    size_t off = 0, step = 1;
    while (off < 1000000) {
        size_t k = step < 1000000 - off ? step : 1000000 - off;
        digest_update(&c, a + off, k);
        off += k;
        step = step * 3 % 997 + 1;
    }
    digest_final_hex(&c, h);
    assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
    /* lengths around the padding edge (55, 56, 63, 64 bytes) agree whole and split */
    for (size_t n = 50; n <= 70; n++) {
        char buf[80], h1[65], h2[65];
        for (size_t i = 0; i < n; i++) buf[i] = (char)('A' + i % 26);
        hex_of(buf, n, h1);
        digest_start(&c, DIGEST_SHA256); /* restarting a used digest */
        digest_update(&c, buf, n / 2);
        digest_update(&c, buf + n / 2, n - n / 2);
        digest_final_hex(&c, h2);
        assert_string_equal(h1, h2);
    }
    digest_free(&c);
}

static void sha256_of_file(void **state) {
    (void)state;
    char path[] = "/tmp/graft_test_hub_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "abc", 3), 3);
    close(fd);
    char h[65];
    assert_int_equal(sha256_file_hex(path, h), 0);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    unlink(path);
    assert_int_equal(sha256_file_hex(path, h), -1);
    assert_non_null(strstr(gf_last_error(), path));
}

static void sha1_vectors(void **state) {
    (void)state;
    struct {
        const char *msg, *hex;
    } v[] = {
        {"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
        {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
    };
    char h[41];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        digest c = {0};
        digest_start(&c, DIGEST_SHA1);
        digest_update(&c, v[i].msg, strlen(v[i].msg));
        digest_final_hex(&c, h);
        digest_free(&c);
        assert_string_equal(h, v[i].hex);
    }
    /* git's id of a blob: `printf 'hello world\n' | git hash-object --stdin` */
    char path[] = "/tmp/graft_test_blob_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "hello world\n", 12), 12);
    close(fd);
    assert_int_equal(git_blob_sha1_file(path, h), 0);
    assert_string_equal(h, "3b18e512dba79e4c8300dd08aeb37f8e728b8dad");
    unlink(path);
}

/* Streaming verification: hashing a resumed file (a prefix from disk, the rest
 * as it arrives) gives the whole-file digests, and mismatches are reported. */
static void streaming_hasher(void **state) {
    (void)state;
    char path[] = "/tmp/graft_test_hash_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char data[100000];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (char)(i * 7 + i / 251);
    assert_int_equal(write(fd, data, 40000), 40000); /* the partial already on disk */
    char want256[65], wantgit[41];
    assert_int_equal(write(fd, data + 40000, sizeof data - 40000), (ssize_t)(sizeof data - 40000));
    assert_int_equal(sha256_file_hex(path, want256), 0);
    assert_int_equal(git_blob_sha1_file(path, wantgit), 0);
    hub_hasher h = {0};
    hub_hasher_reset(&h, sizeof data);
    assert_int_equal(hub_hasher_catch_up(&h, fd, 40000, path), 0);
    hub_hasher_update(&h, data + 40000, 12345);
    hub_hasher_update(&h, data + 52345, sizeof data - 52345);
    char got[65];
    assert_int_equal(hub_hasher_check(&h, "f", want256, wantgit, got), 0);
    assert_string_equal(got, want256);
    /* a reset starts over; one flipped byte fails both checks */
    hub_hasher_reset(&h, sizeof data);
    data[500] ^= 1;
    hub_hasher_update(&h, data, sizeof data);
    assert_int_equal(hub_hasher_check(&h, "f", want256, "", got), -1);
    assert_non_null(strstr(gf_last_error(), "checksum mismatch"));
    hub_hasher_reset(&h, sizeof data);
    hub_hasher_update(&h, data, sizeof data);
    assert_int_equal(hub_hasher_check(&h, "f", "", wantgit, got), -1);
    /* catching up past the end of the file is an error, not a hang */
    hub_hasher_reset(&h, -1);
    assert_int_equal(hub_hasher_catch_up(&h, fd, sizeof data + 10, path), -1);
    hub_hasher_free(&h);
    close(fd);
    unlink(path);
}

static void repo_refs(void **state) {
    (void)state;
    hub_ref r;
    assert_int_equal(hub_parse_ref("karpathy/tinyllamas", &r), 0);
    assert_string_equal(r.repo, "karpathy/tinyllamas");
    assert_string_equal(r.revision, "main");
    assert_false(r.has_revision);
    assert_string_equal(r.path, "");
    assert_int_equal(hub_parse_ref("karpathy/tinyllamas:stories260K/stories260K.bin", &r), 0);
    assert_string_equal(r.path, "stories260K/stories260K.bin");
    assert_int_equal(hub_parse_ref("Qwen/Qwen2.5-0.5B@refs/pr/1:config.json", &r), 0);
    assert_string_equal(r.repo, "Qwen/Qwen2.5-0.5B");
    assert_string_equal(r.revision, "refs/pr/1");
    assert_true(r.has_revision);
    assert_string_equal(r.path, "config.json");
    assert_int_equal(hub_parse_ref("meta-llama/Llama-3.2-1B@v1.0", &r), 0);
    assert_string_equal(r.revision, "v1.0");

    const char *bad[] = {"gpt2", "a/b/c", "/abs/path", "a--b/c", "a/b..c", "-a/b", "a/b.", "a/b@", "a/b:",
                         "a/b:../x", "a/b:x/../../y", "a/b:/etc/passwd", "a/b:x//y", "org/na me", "a/b@..",
                         "./model.bin"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (hub_parse_ref(bad[i], &r) == 0) fail_msg("accepted '%s'", bad[i]);
        assert_true(strlen(gf_last_error()) > 0);
    }
    assert_true(hub_is_commit_hash("0123456789abcdef0123456789abcdef01234567"));
    assert_false(hub_is_commit_hash("0123456789ABCDEF0123456789abcdef01234567"));
    assert_false(hub_is_commit_hash("main"));
    assert_false(hub_is_commit_hash("0123456789abcdef0123456789abcdef0123456"));
}

static void urls(void **state) {
    (void)state;
    char *u = hub_url_resolve("https://huggingface.co", "karpathy/tinyllamas", "main", "stories260K/tok512.bin");
    assert_string_equal(u, "https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K/tok512.bin");
    free(u);
    u = hub_url_resolve("http://h", "o/n", "refs/pr/1", "a b+c.json");
    assert_string_equal(u, "http://h/o/n/resolve/refs%2Fpr%2F1/a%20b%2Bc.json");
    free(u);
    u = hub_url_model_info("http://127.0.0.1:8080", "o/n", "v1.0");
    assert_string_equal(u, "http://127.0.0.1:8080/api/models/o/n/revision/v1.0?blobs=true");
    free(u);
}

static void etags(void **state) {
    (void)state;
    char a[64] = "\"abc123\"", b[64] = "W/\"def\"", c[64] = "plain", d[64] = "\"\"";
    http_normalize_etag(a);
    http_normalize_etag(b);
    http_normalize_etag(c);
    http_normalize_etag(d);
    assert_string_equal(a, "abc123");
    assert_string_equal(b, "def");
    assert_string_equal(c, "plain");
    assert_string_equal(d, "");
}

static void cache_layout(void **state) {
    (void)state;
    hub_cache c;
    hub_cache_init(&c, "/cache", "karpathy/tinyllamas");
    assert_string_equal(c.storage, "/cache/models--karpathy--tinyllamas");
    char *p = hub_cache_blob(&c, "abc");
    assert_string_equal(p, "/cache/models--karpathy--tinyllamas/blobs/abc");
    free(p);
    p = hub_cache_lock(&c, "abc");
    assert_string_equal(p, "/cache/.locks/models--karpathy--tinyllamas/abc.lock");
    free(p);
    p = hub_cache_snapshot(&c, "c0ffee", "stories260K/tok512.bin");
    assert_string_equal(p, "/cache/models--karpathy--tinyllamas/snapshots/c0ffee/stories260K/tok512.bin");
    free(p);
    p = hub_pointer_target("config.json", "e1");
    assert_string_equal(p, "../../blobs/e1");
    free(p);
    p = hub_pointer_target("a/b/c.bin", "e2");
    assert_string_equal(p, "../../../../blobs/e2");
    free(p);
    hub_cache_free(&c);
}

static char tmp_root[64];

static void write_file(const char *path, const char *text) {
    assert_int_equal(hub_mkdirs_parent(path), 0);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void cache_refs_and_links(void **state) {
    (void)state;
    snprintf(tmp_root, sizeof tmp_root, "/tmp/graft_hub_cache_XXXXXX");
    assert_non_null(mkdtemp(tmp_root));
    hub_cache c;
    hub_cache_init(&c, tmp_root, "org/name");
    const char *commit = "0123456789abcdef0123456789abcdef01234567";
    char got[41];
    assert_int_equal(hub_cache_commit_for(&c, "main", got), -1);
    assert_int_equal(hub_cache_write_ref(&c, "main", commit), 0);
    assert_int_equal(hub_cache_commit_for(&c, "main", got), 0);
    assert_string_equal(got, commit);
    /* refs hold the hash with no newline, as huggingface_hub writes them */
    char refp[256];
    snprintf(refp, sizeof refp, "%s/refs/main", c.storage);
    struct stat st;
    assert_int_equal(stat(refp, &st), 0);
    assert_int_equal(st.st_size, 40);
    /* a revision that is a hash names itself and writes no ref */
    assert_int_equal(hub_cache_write_ref(&c, commit, commit), 0);
    assert_int_equal(hub_cache_commit_for(&c, commit, got), 0);
    /* nested links resolve to the blob and are relative */
    char *blob = hub_cache_blob(&c, "etag1");
    write_file(blob, "hello");
    assert_false(hub_cache_has(&c, commit, "dir/sub/f.txt"));
    assert_int_equal(hub_cache_link(&c, commit, "dir/sub/f.txt", "etag1"), 0);
    assert_true(hub_cache_has(&c, commit, "dir/sub/f.txt"));
    char *ptr = hub_cache_snapshot(&c, commit, "dir/sub/f.txt");
    char target[256] = {0};
    assert_true(readlink(ptr, target, sizeof target - 1) > 0);
    assert_string_equal(target, "../../../../blobs/etag1");
    /* relinking replaces the link atomically */
    char *blob2 = hub_cache_blob(&c, "etag2");
    write_file(blob2, "world");
    assert_int_equal(hub_cache_link(&c, commit, "dir/sub/f.txt", "etag2"), 0);
    memset(target, 0, sizeof target);
    assert_true(readlink(ptr, target, sizeof target - 1) > 0);
    assert_string_equal(target, "../../../../blobs/etag2");
    free(ptr);
    free(blob);
    free(blob2);
    hub_cache_free(&c);
}

static void file_selection(void **state) {
    (void)state;
    const char *inc[] = {"*.json", "onnx/"};
    assert_true(hub_glob_any(inc, 2, "config.json"));
    assert_true(hub_glob_any(inc, 2, "sub/x.json")); /* '*' crosses '/' as in huggingface_hub */
    assert_true(hub_glob_any(inc, 2, "onnx/model.onnx"));
    assert_false(hub_glob_any(inc, 2, "model.safetensors"));
    assert_false(hub_glob_any(inc, 0, "config.json"));
    assert_true(hub_is_model_file("config.json"));
    assert_true(hub_is_model_file("generation_config.json"));
    assert_true(hub_is_model_file("tokenizer.json"));
    assert_true(hub_is_model_file("tokenizer_config.json"));
    assert_true(hub_is_model_file("model.safetensors"));
    assert_true(hub_is_model_file("model-00001-of-00002.safetensors"));
    assert_true(hub_is_model_file("model.safetensors.index.json"));
    assert_false(hub_is_model_file("README.md"));
    assert_false(hub_is_model_file("pytorch_model.bin"));
    assert_false(hub_is_model_file("onnx/model.safetensors"));
    assert_true(hub_is_tokenizer_beside("stories260K/tok512.bin", "stories260K/stories260K.bin"));
    assert_true(hub_is_tokenizer_beside("stories260K/tokenizer.bin", "stories260K/stories260K.bin"));
    assert_false(hub_is_tokenizer_beside("stories15M/tok512.bin", "stories260K/stories260K.bin"));
    assert_false(hub_is_tokenizer_beside("tok512.bin", "stories260K/stories260K.bin"));
    assert_true(hub_is_tokenizer_beside("tokenizer.bin", "stories15M.bin"));
    assert_false(hub_is_tokenizer_beside("stories260K/stories260K.bin", "stories260K/stories260K.bin"));
}

static void model_info_parse(void **state) {
    (void)state;
    const char *json =
        "{\"id\":\"o/n\",\"sha\":\"0123456789abcdef0123456789abcdef01234567\",\"siblings\":["
        "{\"rfilename\":\"config.json\",\"size\":415,\"blobId\":\"276c24851476e8485273b8677746b5390637dde4\"},"
        "{\"rfilename\":\"model.safetensors\",\"size\":134,\"blobId\":\"aa\",\"lfs\":{\"sha256\":"
        "\"b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696\",\"size\":1056540,\"pointerSize\":134}},"
        "{\"rfilename\":\"../evil\",\"size\":1},{\"rfilename\":\"noinfo.txt\"}]}";
    hub_model_info mi;
    assert_int_equal(hub_parse_model_info(json, &mi), 0);
    assert_string_equal(mi.sha, "0123456789abcdef0123456789abcdef01234567");
    assert_int_equal(mi.n_files, 3); /* "../evil" is dropped */
    const hub_sibling *f = hub_model_info_find(&mi, "model.safetensors");
    assert_non_null(f);
    assert_true(f->lfs);
    assert_int_equal(f->size, 1056540); /* the LFS size, not the pointer's */
    assert_string_equal(f->sha256, "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696");
    f = hub_model_info_find(&mi, "config.json");
    assert_false(f->lfs);
    assert_int_equal(f->size, 415);
    assert_int_equal(hub_model_info_find(&mi, "noinfo.txt")->size, -1);
    assert_null(hub_model_info_find(&mi, "../evil"));
    hub_model_info_free(&mi);
    assert_int_equal(hub_parse_model_info("{\"sha\":\"abc\",\"siblings\":[]}", &mi), -1);
    hub_model_info_free(&mi);
    assert_int_equal(hub_parse_model_info("not json", &mi), -1);
    hub_model_info_free(&mi);
    assert_int_equal(hub_parse_model_info("{\"sha\":\"0123456789abcdef0123456789abcdef01234567\"}", &mi), -1);
    hub_model_info_free(&mi);
}

static void env_vars(void **state) {
    (void)state;
    setenv("HF_ENDPOINT", "http://127.0.0.1:9/", 1);
    char *e = hub_endpoint();
    assert_string_equal(e, "http://127.0.0.1:9");
    free(e);
    unsetenv("HF_ENDPOINT");
    e = hub_endpoint();
    assert_string_equal(e, "https://huggingface.co");
    free(e);
    unsetenv("HF_HUB_CACHE");
    unsetenv("HUGGINGFACE_HUB_CACHE");
    setenv("HF_HOME", "/x/hf", 1);
    e = hub_cache_dir();
    assert_string_equal(e, "/x/hf/hub");
    free(e);
    setenv("HF_HUB_CACHE", "/y/cache", 1);
    e = hub_cache_dir();
    assert_string_equal(e, "/y/cache");
    free(e);
    unsetenv("HF_HUB_CACHE");
    unsetenv("HF_HOME");
    setenv("XDG_CACHE_HOME", "/z", 1);
    e = hub_cache_dir();
    assert_string_equal(e, "/z/huggingface/hub");
    free(e);
    unsetenv("XDG_CACHE_HOME");
    setenv("HF_HUB_OFFLINE", "1", 1);
    assert_true(hub_offline());
    setenv("HF_HUB_OFFLINE", "0", 1);
    assert_false(hub_offline());
    unsetenv("HF_HUB_OFFLINE");
    setenv("HF_TOKEN", "  hf_abc\n", 1);
    e = hub_token();
    assert_string_equal(e, "hf_abc");
    free(e);
    unsetenv("HF_TOKEN");
}

/* A huggingface_hub cache built by hand resolves offline; a missing one fails clearly. */
static void resolve_offline(void **state) {
    (void)state;
    char root[64] = "/tmp/graft_hub_resolve_XXXXXX";
    assert_non_null(mkdtemp(root));
    setenv("HF_HUB_CACHE", root, 1);
    setenv("HF_HUB_OFFLINE", "1", 1);
    setenv("HF_ENDPOINT", "http://127.0.0.1:1", 1);
    const char *commit = "89abcdef0123456789abcdef0123456789abcdef";
    hub_cache c;
    hub_cache_init(&c, root, "org/llama");
    char *b;
    const char *names[] = {"config.json", "model-00001-of-00002.safetensors", "model.safetensors.index.json",
                           "stories/m.bin", "stories/tok32.bin"};
    const char *texts[] = {"{}", "w1", "{\"weight_map\":{\"a\":\"model-00001-of-00002.safetensors\","
                           "\"b\":\"model-00002-of-00002.safetensors\"}}", "m", "t"};
    for (int i = 0; i < 5; i++) {
        char etag[16];
        snprintf(etag, sizeof etag, "e%d", i);
        b = hub_cache_blob(&c, etag);
        write_file(b, texts[i]);
        free(b);
        assert_int_equal(hub_cache_link(&c, commit, names[i], etag), 0);
    }
    assert_int_equal(hub_cache_write_ref(&c, "main", commit), 0);

    char *path = NULL;
    /* the index names a second shard that is missing: incomplete */
    assert_int_equal(hub_resolve_model("org/llama", &path, NULL), -1);
    assert_non_null(strstr(gf_last_error(), "HF_HUB_OFFLINE"));
    b = hub_cache_blob(&c, "e9");
    write_file(b, "w2");
    free(b);
    assert_int_equal(hub_cache_link(&c, commit, "model-00002-of-00002.safetensors", "e9"), 0);
    assert_int_equal(hub_resolve_model("org/llama", &path, NULL), 0);
    char *want = hub_cache_snapshot(&c, commit, NULL);
    assert_string_equal(path, want);
    free(want);
    free(path);
    /* REPO:PATH gives the file, found with its tokenizer beside it */
    assert_int_equal(hub_resolve_model("org/llama:stories/m.bin", &path, NULL), 0);
    want = hub_cache_snapshot(&c, commit, "stories/m.bin");
    assert_string_equal(path, want);
    free(want);
    free(path);
    assert_int_equal(hub_resolve_model("org/llama@" "89abcdef0123456789abcdef0123456789abcdef" ":stories/m.bin", &path,
                                       NULL), 0);
    free(path);
    assert_int_equal(hub_resolve_model("org/llama:stories/absent.bin", &path, NULL), -1);
    assert_non_null(strstr(gf_last_error(), "not in the cache and HF_HUB_OFFLINE is set"));
    assert_int_equal(hub_resolve_model("org/llama@v2", &path, NULL), -1);
    assert_int_equal(hub_resolve_model("org/other", &path, NULL), -1);
    /* an existing local path is returned as is */
    assert_int_equal(hub_resolve_model(root, &path, NULL), 0);
    assert_string_equal(path, root);
    free(path);
    /* neither a path nor a repo id */
    assert_int_equal(hub_resolve_model("no_such_file.bin", &path, NULL), -1);
    assert_non_null(strstr(gf_last_error(), "no such file"));
    hub_cache_free(&c);
    unsetenv("HF_HUB_CACHE");
    unsetenv("HF_HUB_OFFLINE");
    unsetenv("HF_ENDPOINT");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static int cleanup_tmp(void **state) {
    (void)state;
    if (tmp_root[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
        if (system(cmd) != 0) return -1;
    }
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors),
        cmocka_unit_test(sha256_of_file),
        cmocka_unit_test(sha1_vectors),
        cmocka_unit_test(streaming_hasher),
        cmocka_unit_test(repo_refs),
        cmocka_unit_test(urls),
        cmocka_unit_test(etags),
        cmocka_unit_test(cache_layout),
        cmocka_unit_test_teardown(cache_refs_and_links, cleanup_tmp),
        cmocka_unit_test(file_selection),
        cmocka_unit_test(model_info_parse),
        cmocka_unit_test(env_vars),
        cmocka_unit_test(resolve_offline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
