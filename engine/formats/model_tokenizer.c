/* The tokenizer of a teacher: loaded by content (tokenizer_load_path) and
 * refused in words when its ids do not fit the model's embedding. */
#include "core/error.h"
#include "formats/loaders.h"
#include "formats/tokenizer_load.h"

int load_model_tokenizer(model *m, const char *path) {
    if (tokenizer_load_path(&m->tok, path, m->cfg.vocab_size) != 0) return -1;
    int tv = tokenizer_vocab_size(m->tok);
    if (tv > m->cfg.vocab_size) {
        gf_fail("%s: the tokenizer has %d tokens but the model's embedding only %d rows (another model's "
                "tokenizer?)", path, tv, m->cfg.vocab_size);
        tokenizer_free(m->tok);
        m->tok = NULL;
        return -1;
    }
    return 0;
}
