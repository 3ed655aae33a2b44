/* libFuzzer harness: a llama2.c checkpoint (legacy, v1 or v2) [FUZZ_SEP
 * tokenizer.bin]. The teacher is loaded with the tokenizer found beside it
 * (none when the input has one part), then used: tokenizer round trips with
 * ids checked against the embedding, and a forward pass. */
#include "core/error.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *part[2];
    size_t len[2];
    int n = fuzz_split(data, size, part, len, 2);
    const char *path = fuzz_write("model.bin", part[0], len[0]);
    if (n > 1) fuzz_write("tokenizer.bin", part[1], len[1]);
    else fuzz_remove("tokenizer.bin");
    model m;
    if (model_load(&m, path, NULL) == 0) {
        fuzz_use_model(&m);
        model_free(&m);
    } else {
        fuzz_rejected("model_load");
    }
    gf_clear_error();
    return 0;
}
