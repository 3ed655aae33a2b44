/* libFuzzer harness: a Hugging Face tokenizer.json [FUZZ_SEP
 * tokenizer_config.json], loaded, then used: fixed texts are encoded (every
 * id must lie in the vocabulary), decoded, and every piece decoded. */
#include "core/error.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const files[] = {"tokenizer.json", "tokenizer_config.json"};
    fuzz_write_parts(data, size, files, 2, false);
    tokenizer *t;
    if (tokenizer_load_hf(&t, fuzz_path("tokenizer.json")) == 0) {
        fuzz_use_tokenizer(t, tokenizer_vocab_size(t));
        tokenizer_free(t);
    } else {
        fuzz_rejected("tokenizer_load_hf");
    }
    gf_clear_error();
    return 0;
}
