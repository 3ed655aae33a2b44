/* libFuzzer harness: a safetensors file, read tensor by tensor, then as the
 * weights of a tiny Hugging Face llama folder (forward pass).
 * Input: model.safetensors [FUZZ_SEP config.json]; without a config the
 * tiny llama's (dim 8, 2 layers, vocab 16) is used. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "formats/safetensors.h"
#include "harness.h"

static const char default_config[] =
    "{\"model_type\":\"llama\",\"hidden_size\":8,\"intermediate_size\":16,\"num_hidden_layers\":2,"
    "\"num_attention_heads\":2,\"num_key_value_heads\":1,\"head_dim\":4,\"vocab_size\":16,"
    "\"max_position_embeddings\":16,\"tie_word_embeddings\":true}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *part[2];
    size_t len[2];
    int n = fuzz_split(data, size, part, len, 2);
    const char *st_path = fuzz_write("model.safetensors", part[0], len[0]);
    st_file f;
    if (st_open(&f, st_path) == 0) {
        for (size_t i = 0; i < f.n_tensors; i++) {
            const st_tensor *t = &f.tensors[i];
            if (t->n_elems > (1u << 20)) continue;
            float *buf = malloc((t->n_elems ? t->n_elems : 1) * sizeof *buf);
            if (st_read_f32(t, buf, t->n_elems) != 0) abort(); /* the sizes were checked on open */
            free(buf);
            if (st_find(&f, t->name) != t) abort();
        }
        st_close(&f);
    } else {
        fuzz_rejected("st_open");
    }
    if (n > 1) fuzz_write("config.json", part[1], len[1]);
    else fuzz_write("config.json", (const uint8_t *)default_config, strlen(default_config));
    fuzz_load_and_use_model(fuzz_dir());
    gf_clear_error();
    return 0;
}
