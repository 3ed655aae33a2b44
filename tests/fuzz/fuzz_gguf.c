/* libFuzzer harness: a GGUF file loaded as a teacher (metadata, tensors,
 * dequantization, tokenizer), then used (tokenizer round trips, a forward
 * pass); and the same file as a tokenizer alone (--tokenizer x.gguf). */
#include "core/error.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("model.gguf", data, size);
    model m;
    if (model_load(&m, path, NULL) == 0) {
        fuzz_use_model(&m);
        model_free(&m);
    } else {
        fuzz_rejected("model_load");
    }
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
