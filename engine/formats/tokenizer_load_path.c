/* Picks the tokenizer flavour from the file's content, not its name: a GGUF
 * magic, a JSON object, or else a llama2.c tokenizer.bin. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/gguf_tokenizer.h"
#include "formats/tokenizer_load.h"
#include "tokenizer/tokenizer.h"

/* A JSON object starts with '{' then whitespace or '"' (after an optional
 * UTF-8 BOM and whitespace); a tokenizer.bin starts with a uint32 maximum
 * token length, whose bytes after the first are zero for any real one. */
static bool looks_like_json(const unsigned char *p, size_t n) {
    size_t i = 0;
    if (n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) i = 3;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
    if (i + 1 >= n || p[i] != '{') return false;
    unsigned char c = p[i + 1];
    return c == '"' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int tokenizer_load_path(tokenizer **out, const char *path, int vocab_size) {
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0) return gf_fail("%s: no such tokenizer file", path);
    if (S_ISDIR(st.st_mode)) {
        size_t n = strlen(path) + sizeof "/tokenizer.json";
        char *json = gf_malloc(n);
        snprintf(json, n, "%s/tokenizer.json", path);
        int rc = tokenizer_load_hf(out, json);
        free(json);
        return rc;
    }
    unsigned char head[16] = {0};
    if (regular_file_check(path) != 0) return -1; /* a FIFO would block the open below */
    FILE *f = fopen(path, "rb");
    if (!f) return gf_fail("%s: cannot open the tokenizer (%s)", path, strerror(errno));
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    if (n >= 4 && memcmp(head, "GGUF", 4) == 0) return tokenizer_load_gguf(out, path);
    if (looks_like_json(head, n)) return tokenizer_load_hf(out, path);
    return tokenizer_load_llama2c(out, path, vocab_size);
}
