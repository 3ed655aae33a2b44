/* libFuzzer harness: a training checkpoint read against a fixed list of three
 * tensors (3, 5 and 2 floats), then used: the curves and moments are summed
 * and, when it reads, the state is written back and read again, which must
 * give the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "harness.h"
#include "train/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    enum { N = 10 };
    float p[N], m[N], v[N];
    param_tensor t[3] = {{.name = "a", .p = p, .n = 3}, {.name = "b", .p = p + 3, .n = 5},
                         {.name = "c", .p = p + 8, .n = 2}};
    param_list pl = {t, 3, N};
    const char *path = fuzz_write("ck.bin", data, size);
    train_state s;
    if (checkpoint_read(path, &s, &pl, m, v) == 0) {
        volatile double sum = 0;
        for (int i = 0; i < s.loss.n; i++) sum += s.loss.xy[2 * i] + s.loss.xy[2 * i + 1];
        for (int i = 0; i < s.eval.n; i++) sum += s.eval.xy[2 * i] + s.eval.xy[2 * i + 1];
        for (int i = 0; i < N; i++) sum += (double)p[i] + m[i] + v[i];
        (void)sum;
        char back[4096];
        snprintf(back, sizeof back, "%s", fuzz_path("ck2.bin"));
        train_state s2;
        float p1[N], m2[N], v2[N];
        memcpy(p1, p, sizeof p);
        if (checkpoint_write(back, &s, &pl, m, v) != 0 || checkpoint_read(back, &s2, &pl, m2, v2) != 0) abort();
        if (memcmp(p1, p, sizeof p) || memcmp(m, m2, sizeof m) || memcmp(v, v2, sizeof v) || s.step != s2.step ||
            s.loss.n != s2.loss.n || s.eval.n != s2.eval.n)
            abort();
        train_state_free(&s2);
        train_state_free(&s);
    } else {
        fuzz_rejected("checkpoint_read");
    }
    gf_clear_error();
    return 0;
}
