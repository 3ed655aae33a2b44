/* TEMPORARY (branch fmt): tokenizer_load_hf is written on another branch.
 * This placeholder only lets the HF folder loader link; delete this file
 * when the real tokenizer.json loader is merged. */
#include "core/error.h"
#include "tokenizer/tokenizer.h"

int tokenizer_load_hf(tokenizer **out, const char *path) {
    *out = NULL;
    return gf_fail("%s: tokenizer.json support is not built yet", path);
}
