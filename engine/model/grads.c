/* The gradient block between steps: what tf_zero_grads zeroes, and which
 * weight matrices it leaves for the backward to overwrite.
 *
 * Zeroing the whole F32 block costs one pass over it (6.5 GB a step for the
 * 1.5B teacher) and makes each weight product of the backward read its old
 * dW back (beta 1). PyTorch's set_to_none avoids both; here the same: the
 * matrices the next backward is sure to write (every layer it reaches, the
 * LM head) are marked fresh and left as they are; their first product
 * writes them with beta 0 and clears the mark. The norms, biases and GDN
 * vectors, written by kernels that add, are zeroed as before (a few small
 * spans). A fresh matrix the backward did not write after all is zeroed
 * when it ends, so the block reads as a sum of this step's gradients
 * whatever ran. */
#include <stdlib.h>

#include "core/error.h"
#include "model/tf_internal.h"

/* Whether layer l has a mixer whose group trains. */
static bool mixer_trains(const transformer *tf, int l) {
    return tf->kind[l] != MIX_NONE && tf->train[tf->kind[l] == MIX_GDN ? PGROUP_GDN : PGROUP_ATTN];
}

int tf_lowest_needed_layer(const transformer *tf) {
    if (tf->train[PGROUP_REST]) return 0;
    for (int l = 0; l < tf->cfg.n_layers; l++)
        if (mixer_trains(tf, l)) return l;
    return tf->cfg.n_layers;
}

/* A span [off, off + n) of the block; neighbours need not be merged: the
 * zeroing between them sees no gap. */
typedef struct {
    size_t off, n;
} span;

enum { SLOT_SPANS_MAX = 7 }; /* attention: wq wk wv bq bk bv wo */

/* The spans slot l's part covers (layer l's MLP or mixer matrices, or the
 * head at l = L); returns their count. */
static int slot_spans(const transformer *tf, int l, unsigned part, span s[SLOT_SPANS_MAX]) {
    /* the attention biases too: be_linear_backward writes db with dW */
    static const tensor_kind mlp[] = {TK_GATE, TK_UP, TK_DOWN}, attn[] = {TK_Q, TK_K, TK_V, TK_BQ, TK_BK, TK_BV, TK_O};
    _Static_assert(sizeof attn / sizeof *attn == SLOT_SPANS_MAX, "the attention slot is the largest");
    const param_layout *pl = &tf->layout;
    if (part == TF_FRESH_HEAD) { /* lm_head, or the embedding it is tied to */
        const param_entry *e = param_layout_find(pl, pl->L, TK_LM_HEAD);
        if (!e) e = param_layout_find(pl, pl->L, TK_EMBED);
        s[0] = (span){e->off, e->n};
        return 1;
    }
    if (part == TF_FRESH_MIXER && tf->kind[l] == MIX_GDN) { /* W_in (wq..wb, consecutive) and Wo */
        const param_entry *e = param_layout_find(pl, l, TK_GDN);
        const gdn_config *c = &tf->gcfg;
        s[0] = (span){e->off + gdn_param_offset(c, GDN_P_wq), (size_t)gdn_in_width(c) * c->D};
        s[1] = (span){e->off + gdn_param_offset(c, GDN_P_wo), gdn_param_size(c, GDN_P_wo)};
        return 2;
    }
    const bool is_mlp = part == TF_FRESH_MLP;
    const tensor_kind *kinds = is_mlp ? mlp : attn;
    const int nkinds = is_mlp ? (int)(sizeof mlp / sizeof *mlp) : (int)(sizeof attn / sizeof *attn);
    int k = 0;
    for (int i = 0; i < nkinds; i++) { /* absent ones (biases off) skipped */
        const param_entry *e = param_layout_find(pl, l, kinds[i]);
        if (e) s[k++] = (span){e->off, e->n};
    }
    return k;
}

/* The bits of slot l (l < L: MLP and mixer; l == L: the head) the backward writes. */
static unsigned will_write(const transformer *tf, int l, int floor_l) {
    const bool rest = tf->train[PGROUP_REST];
    if (l == tf->cfg.n_layers) return rest ? TF_FRESH_HEAD : 0;
    if (l < floor_l) return 0;
    return (rest ? TF_FRESH_MLP : 0) | (mixer_trains(tf, l) ? TF_FRESH_MIXER : 0);
}

static int by_offset(const void *a, const void *b) {
    const span *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

void tf_zero_grads(transformer *tf) {
    if (gf_is_none(tf->grads)) return;
    const int L = tf->cfg.n_layers, floor_l = tf_lowest_needed_layer(tf);
    span *keep = gf_calloc((size_t)(L + 1) * (3 + SLOT_SPANS_MAX), sizeof *keep); /* MLP and mixer a layer */
    int nk = 0;
    for (int l = 0; l <= L; l++) {
        tf->fresh[l] = (unsigned char)will_write(tf, l, floor_l);
        static const unsigned parts[] = {TF_FRESH_MLP, TF_FRESH_MIXER, TF_FRESH_HEAD};
        for (size_t p = 0; p < sizeof parts / sizeof *parts; p++)
            if (tf->fresh[l] & parts[p]) nk += slot_spans(tf, l, parts[p], keep + nk);
    }
    qsort(keep, (size_t)nk, sizeof *keep, by_offset);
    size_t at = 0; /* zero what lies between the kept spans */
    for (int i = 0; i <= nk; i++) {
        const size_t end = i < nk ? keep[i].off : tf->layout.total;
        if (end > at) be_zero(tf->be, gf_at(tf->grads, at), end - at);
        if (i < nk && keep[i].off + keep[i].n > at) at = keep[i].off + keep[i].n;
    }
    free(keep);
}

bool tf_grads_take_fresh(transformer *tf, int l, unsigned part) {
    if (!tf->fresh || !(tf->fresh[l] & part)) return false;
    tf->fresh[l] &= (unsigned char)~part;
    return true;
}

void tf_grads_settle(transformer *tf, int l, unsigned part) {
    if (!tf_grads_take_fresh(tf, l, part)) return;
    span s[SLOT_SPANS_MAX];
    const int k = slot_spans(tf, l, part, s);
    for (int i = 0; i < k; i++) be_zero(tf->be, gf_at(tf->grads, s[i].off), s[i].n);
}
