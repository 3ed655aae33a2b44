/* libFuzzer harness: a Hugging Face config.json. When it parses and the model
 * it describes is tiny, small random weights of that shape run a forward
 * pass, so every accepted combination of sizes must be one the engine runs. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "formats/hf_config.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    model m;
    memset(&m, 0, sizeof m);
    if (hf_config_parse(&m.cfg, (const char *)data, size, "config.json") != 0) {
        fuzz_rejected("hf_config_parse");
        return 0;
    }
    const model_config *c = &m.cfg;
    if (c->n_layers > 4 || c->max_seq < 2 || model_param_count(c) > (1u << 18)) return 0;
    if (model_alloc_params(&m) != 0) { /* out of memory: an error like any other */
        fuzz_rejected("model_alloc_params");
        model_free(&m);
        return 0;
    }
    float *w = malloc(m.layout.total * sizeof *w); /* [total] host values, uploaded as one block */
    if (!w) abort();
    for (size_t i = 0; i < m.layout.total; i++) w[i] = (float)((i * 2654435761u) % 1000) / 5000.0f - 0.1f;
    if (be_upload(m.be, m.params, w, GF_F32, m.layout.total) != 0) abort();
    free(w);
    fuzz_use_model(&m);
    model_free(&m);
    gf_clear_error();
    return 0;
}
