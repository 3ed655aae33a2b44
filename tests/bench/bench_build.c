/* The host's share of building a student's GDN layers (student_build_layers
 * with --init random: no Stage 1 or 2), per converted layer, on the
 * qwen2.5-1.5b shape with synthetic weights (4 of its layers, 2 converted, to
 * keep the host memory near 2 GB). It is the per-layer set-up that every
 * `graft convert` pays around Stage 2 on any backend: the teacher's attention
 * tensors downloaded and transferred, the random parts drawn (2.4M normals a
 * layer at this width), the block zeroed, uploaded, downloaded again for the
 * report's summaries. On the H100 it was ~1.3 s of a 3.3 s Stage 2 bench for
 * 14 layers (docs/benchmarks.md, "Session 18 on an H100"). The normals alone
 * are timed too (rng_fill_normal, the drawing the layer's init does). */
#include <stdio.h>

#include "bench_model.h"
#include "bench_util.h"
#include "convert/build.h"
#include "core/error.h"
#include "core/rng.h"
#include "formats/hf_config.h"
#include "student/student.h"

int main(void) {
    const char *sh = getenv("GRAFT_SHARED");
    char path[4096];
    snprintf(path, sizeof path, "%s/configs/qwen2.5-1.5b.json", sh && *sh ? sh : "../shared");
    model_config c;
    if (hf_config_load(&c, path) != 0) {
        printf("skipped: %s\n", gf_last_error());
        return 0;
    }
    c.n_layers = 4;
    model m;
    if (bench_model_random(&m, &c, 0.02f) != 0) {
        printf("skipped: %s\n", gf_last_error());
        return 0;
    }
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    student s;
    if (student_init_empty(&s, &m, &set) != 0) {
        printf("skipped: %s\n", gf_last_error());
        model_free(&m);
        return 0;
    }
    const bool conv[4] = {false, true, false, true};
    enum { REPS = 5 };
    double t[REPS];
    int rc = 0;
    for (int r = 0; r < REPS && rc == 0; r++) {
        const double t0 = bench_now();
        rc = student_build_layers(&s, conv, NULL, NULL, NULL);
        t[r] = (bench_now() - t0) / 2;
    }
    if (rc != 0) {
        printf("failed: %s\n", gf_last_error());
    } else {
        const double med = bench_median(t, REPS); /* t sorted: t[0] the best */
        printf("host set-up of a converted layer, qwen2.5-1.5b width (D %d, %d heads): %.1f ms (median of %d; "
               "best %.1f)\n",
               c.dim, c.n_heads, med * 1e3, REPS, t[0] * 1e3);
        const size_t n = (size_t)s.gcfg.H * s.gcfg.dv * s.gcfg.D; /* the output gate's weights */
        float *x = malloc(n * sizeof *x);
        for (int r = 0; r < REPS; r++) {
            rng64 g;
            rng_seed2(&g, 1, (uint64_t)r);
            const double t0 = bench_now();
            rng_fill_normal(&g, x, n, 0.02);
            t[r] = bench_now() - t0;
        }
        printf("  of which drawing its %zu gate normals: %.1f ms (median of %d)\n", n, bench_median(t, REPS) * 1e3, REPS);
        free(x);
    }
    student_free(&s);
    model_free(&m);
    return rc != 0;
}
