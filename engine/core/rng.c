#include "core/rng.h"

#include <math.h>

void rng_seed(rng64 *r, uint64_t seed) {
    r->state = seed;
    r->has_spare = 0;
    r->spare = 0;
}

uint64_t rng_next(rng64 *r) {
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void rng_seed2(rng64 *r, uint64_t seed, uint64_t stream) {
    rng64 t;
    rng_seed(&t, seed ^ (stream * 0xD1B54A32D192ED03ull));
    rng_seed(r, rng_next(&t));
}

double rng_uniform(rng64 *r) { return ((double)(rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

double rng_normal(rng64 *r) {
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
    r->spare = rad * sin(th);
    r->has_spare = 1;
    return rad * cos(th);
}
