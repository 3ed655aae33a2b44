#include "data/text_tokens.h"

#include <stdlib.h>

#include "core/error.h"
#include "core/mapped_file.h"

int text_file_tokens(const tokenizer *t, const char *path, bool add_bos, int_vec *ids) {
    size_t len;
    char *text = read_text_file(path, &len);
    if (!text) return -1;
    tokenizer_encode(t, text, len, add_bos, ids);
    free(text);
    return 0;
}

int cut_sequences(const int *ids, size_t n, size_t start, int bos, int ctx, int n_seqs, int_vec *out,
                  int *n_seqs_out) {
    if (ctx < 2) return gf_fail("sequence length must be at least 2, got %d", ctx);
    const size_t body = bos >= 0 ? (size_t)ctx - 1 : (size_t)ctx;
    const size_t avail = n > start ? (n - start) / body : 0;
    if (avail == 0)
        return gf_fail("the text holds %zu tokens, fewer than one sequence of %d", n > start ? n - start : 0, ctx);
    if (n_seqs > 0 && (size_t)n_seqs > avail)
        return gf_fail("the text holds %zu sequences of %d tokens, %d were asked for", avail, ctx, n_seqs);
    const int k = n_seqs > 0 ? n_seqs : (int)avail;
    for (int s = 0; s < k; s++) {
        if (bos >= 0) int_vec_push(out, bos);
        for (size_t i = 0; i < body; i++) int_vec_push(out, ids[start + (size_t)s * body + i]);
    }
    *n_seqs_out = k;
    return 0;
}
