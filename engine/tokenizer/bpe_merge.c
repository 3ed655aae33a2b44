#include "tokenizer/bpe_merge.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

typedef struct {
    double priority;
    int left, right;  /* symbol indices when the candidate was made */
    int left_id, right_id;
    int merged_id;
} candidate;

typedef struct {
    candidate *a;
    int n, cap;
    candidate *local; /* initial storage on the caller's stack; short words never allocate */
} heap;

/* a before b: higher priority, then leftmost (smaller index = further left,
 * because merging keeps the left index and indices grow left to right). */
static bool before(const candidate *a, const candidate *b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    return a->left < b->left;
}

static void heap_push(heap *h, candidate c) {
    if (h->n == h->cap) {
        h->cap *= 2;
        if (h->a == h->local) {
            h->a = gf_malloc((size_t)h->cap * sizeof *h->a);
            memcpy(h->a, h->local, (size_t)h->n * sizeof *h->a);
        } else {
            h->a = gf_realloc(h->a, (size_t)h->cap * sizeof *h->a);
        }
    }
    int i = h->n++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!before(&c, &h->a[p])) break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = c;
}

static candidate heap_pop(heap *h) {
    candidate top = h->a[0], last = h->a[--h->n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        const candidate *best = &last;
        if (l < h->n && before(&h->a[l], best)) { m = l; best = &h->a[l]; }
        if (r < h->n && before(&h->a[r], best)) { m = r; }
        if (m == i) break;
        h->a[i] = h->a[m];
        i = m;
    }
    if (h->n > 0) h->a[i] = last;
    return top;
}

static void consider(heap *h, const bpe_sym *s, int left, bpe_pair_fn pair, void *ctx) {
    int right = s[left].next;
    if (right < 0) return;
    candidate c = {0, left, right, s[left].id, s[right].id, -1};
    if (pair(ctx, c.left_id, c.right_id, &c.priority, &c.merged_id)) heap_push(h, c);
}

void bpe_merge(bpe_sym *s, int n, bpe_pair_fn pair, void *ctx) {
    if (n < 2) return;
    candidate local[64];
    heap h = {local, 0, 64, local};
    for (int i = 0; i < n; i++) consider(&h, s, i, pair, ctx);
    while (h.n > 0) {
        candidate c = heap_pop(&h);
        /* stale when either side has changed since the candidate was made */
        if (s[c.left].id != c.left_id || s[c.left].next != c.right || s[c.right].id != c.right_id ||
            s[c.right].prev != c.left)
            continue;
        s[c.left].id = c.merged_id;
        int nx = s[c.right].next;
        s[c.left].next = nx;
        if (nx >= 0) s[nx].prev = c.left;
        s[c.right].id = -1; /* dead */
        s[c.right].prev = s[c.right].next = -1;
        if (s[c.left].prev >= 0) consider(&h, s, s[c.left].prev, pair, ctx);
        consider(&h, s, c.left, pair, ctx);
    }
    if (h.a != h.local) free(h.a);
}
