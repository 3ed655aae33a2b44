/* libFuzzer harness: a GGUF file loaded as a teacher (metadata, tensors,
 * dequantization, tokenizer), then used (tokenizer round trips, a forward
 * pass); and the same file as a tokenizer alone (--tokenizer x.gguf). */
#include "core/error.h"
#include "formats/tokenizer_load.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("model.gguf", data, size);
    fuzz_load_and_use_model(path);
    tokenizer *t;
    if (tokenizer_load_path(&t, path, 0) == 0) {
        fuzz_use_tokenizer(t, tokenizer_vocab_size(t));
        tokenizer_free(t);
    } else {
        fuzz_rejected("tokenizer_load_path");
    }
    gf_clear_error();
    return 0;
}
