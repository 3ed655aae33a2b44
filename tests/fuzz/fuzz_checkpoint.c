/* libFuzzer harness: a training checkpoint read against a fixed layout of
 * three tensors (3, 5 and 2 floats, one block of 10) on the CPU backend,
 * then used: the curves and the blocks are summed and, when it reads, the
 * state is written back and read again, which must give the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "harness.h"
#include "train/checkpoint.h"

enum { N = 10 };

/* The three blocks of b downloaded into host[3][N]. */
static void blocks_host(float host[3][N], const train_blocks *b) {
    const gf_buf blk[3] = {b->master, b->m, b->v};
    for (int i = 0; i < 3; i++)
        if (be_download(b->be, host[i], GF_F32, blk[i], N) != 0) abort();
}

static void blocks_alloc(train_blocks *b, gf_backend *be, const param_layout *pl) {
    b->be = be;
    b->pl = pl;
    if (be_alloc(be, &b->master, N, GF_F32) || be_alloc(be, &b->m, N, GF_F32) || be_alloc(be, &b->v, N, GF_F32))
        abort();
}

static void blocks_free(train_blocks *b) {
    be_free(b->be, &b->master);
    be_free(b->be, &b->m);
    be_free(b->be, &b->v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    param_entry t[3] = {{.name = "a", .off = 0, .n = 3}, {.name = "b", .off = 3, .n = 5},
                        {.name = "c", .off = 8, .n = 2}};
    const param_layout pl = {.t = t, .n = 3, .total = N};
    gf_backend *be = be_default();
    train_blocks b, b2;
    blocks_alloc(&b, be, &pl);
    blocks_alloc(&b2, be, &pl);
    const char *path = fuzz_write("ck.bin", data, size);
    train_state s;
    if (checkpoint_read(path, &s, &b) == 0) {
        float got[3][N], again[3][N];
        blocks_host(got, &b);
        volatile double sum = 0;
        for (int i = 0; i < s.loss.n; i++) sum += s.loss.xy[2 * i] + s.loss.xy[2 * i + 1];
        for (int i = 0; i < s.eval.n; i++) sum += s.eval.xy[2 * i] + s.eval.xy[2 * i + 1];
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < N; i++) sum += (double)got[k][i];
        (void)sum;
        char back[4096];
        snprintf(back, sizeof back, "%s", fuzz_path("ck2.bin"));
        train_state s2;
        if (checkpoint_write(back, &s, &b) != 0 || checkpoint_read(back, &s2, &b2) != 0) abort();
        blocks_host(again, &b2);
        if (memcmp(got, again, sizeof got) || s.step != s2.step || s.loss.n != s2.loss.n || s.eval.n != s2.eval.n)
            abort();
        train_state_free(&s2);
        train_state_free(&s);
    } else {
        fuzz_rejected("checkpoint_read");
    }
    blocks_free(&b);
    blocks_free(&b2);
    gf_clear_error();
    return 0;
}
