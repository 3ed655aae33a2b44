/* Picks the tokenizer flavour from the file name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "formats/gguf_tokenizer.h"
#include "tokenizer/tokenizer.h"

int tokenizer_load_path(tokenizer **out, const char *path, int vocab_size) {
    *out = NULL;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t n = strlen(path) + sizeof "/tokenizer.json";
        char *json = gf_malloc(n);
        snprintf(json, n, "%s/tokenizer.json", path);
        int rc = tokenizer_load_hf(out, json);
        free(json);
        return rc;
    }
    size_t n = strlen(path);
    if (n >= 5 && strcmp(path + n - 5, ".json") == 0) return tokenizer_load_hf(out, path);
    if (n >= 5 && strcmp(path + n - 5, ".gguf") == 0) return tokenizer_load_gguf(out, path);
    return tokenizer_load_llama2c(out, path, vocab_size);
}
