#include "core/rng.h"

#include <math.h>

void rng_seed(rng64 *r, uint64_t seed) {
    r->state = seed;
    r->has_spare = 0;
    r->spare = 0;
}

#define GOLDEN 0x9E3779B97F4A7C15ull

/* splitmix64's output for a state: the generator is a counter (state += GOLDEN per word). */
static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t rng_next(rng64 *r) { return mix(r->state += GOLDEN); }

void rng_seed2(rng64 *r, uint64_t seed, uint64_t stream) {
    rng64 t;
    rng_seed(&t, seed ^ (stream * 0xD1B54A32D192ED03ull));
    rng_seed(r, rng_next(&t));
}

static double uniform_of(uint64_t w) { return ((double)(w >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

double rng_uniform(rng64 *r) { return uniform_of(rng_next(r)); }

/* Box-Muller: the pair of normals from the two words after state s0 (first *c, then *s). */
static void normal_pair(uint64_t s0, double *c, double *s) {
    const double u1 = uniform_of(mix(s0 + GOLDEN)), u2 = uniform_of(mix(s0 + 2 * GOLDEN));
    const double rad = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
    *c = rad * cos(th);
    *s = rad * sin(th);
}

double rng_normal(rng64 *r) {
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double c;
    normal_pair(r->state, &c, &r->spare);
    r->state += 2 * GOLDEN;
    r->has_spare = 1;
    return c;
}

void rng_fill_normal(rng64 *r, float *out, size_t n, double scale) {
    if (n && r->has_spare) { /* the pair already drawn */
        *out++ = (float)(scale * rng_normal(r));
        n--;
    }
    const uint64_t s0 = r->state;
    const long pairs = (long)(n / 2);
    /* pair j is the two words after s0 + 2j: each chunk of pairs starts where it is */
#pragma omp parallel for schedule(static) if (pairs >= 65536)
    for (long j = 0; j < pairs; j++) {
        double c, sn;
        normal_pair(s0 + (uint64_t)(2 * j) * GOLDEN, &c, &sn);
        out[2 * j] = (float)(scale * c);
        out[2 * j + 1] = (float)(scale * sn);
    }
    r->state = s0 + (uint64_t)(2 * pairs) * GOLDEN;
    if (n % 2) out[n - 1] = (float)(scale * rng_normal(r)); /* draws a pair, keeps its second */
}
