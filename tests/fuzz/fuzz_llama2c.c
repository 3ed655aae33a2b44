/* libFuzzer harness: a llama2.c checkpoint (legacy, v1 or v2) [FUZZ_SEP
 * tokenizer.bin]. The teacher is loaded with the tokenizer found beside it
 * (none when the input has one part), then used: tokenizer round trips with
 * ids checked against the embedding, and a forward pass. */
#include "core/error.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const files[] = {"model.bin", "tokenizer.bin"};
    fuzz_write_parts(data, size, files, 2, false);
    fuzz_load_and_use_model(fuzz_path("model.bin"));
    gf_clear_error();
    return 0;
}
