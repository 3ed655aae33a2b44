/* libFuzzer harness: a Hugging Face tokenizer.json [FUZZ_SEP
 * tokenizer_config.json], loaded, then used: fixed texts are encoded (every
 * id must lie in the vocabulary), decoded, and every piece decoded. */
#include "core/error.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *part[2];
    size_t len[2];
    int n = fuzz_split(data, size, part, len, 2);
    const char *path = fuzz_write("tokenizer.json", part[0], len[0]);
    if (n > 1) fuzz_write("tokenizer_config.json", part[1], len[1]);
    else fuzz_remove("tokenizer_config.json");
    tokenizer *t;
    if (tokenizer_load_hf(&t, path) == 0) {
        fuzz_use_tokenizer(t, tokenizer_vocab_size(t));
        tokenizer_free(t);
    } else {
        fuzz_rejected("tokenizer_load_hf");
    }
    gf_clear_error();
    return 0;
}
