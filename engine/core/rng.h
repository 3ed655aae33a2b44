/* A small, fully specified random generator, so that initializations are
 * reproducible across machines and can be re-derived by other programs:
 * splitmix64 (Steele, Lea, Flood 2014) producing 64-bit words; uniforms take the
 * top 53 bits; normals use Box-Muller with both outputs consumed in order. */
#ifndef GRAFT_CORE_RNG_H
#define GRAFT_CORE_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
    double spare;   /* second Box-Muller output */
    int has_spare;
} rng64;

void rng_seed(rng64 *r, uint64_t seed);
/* Seed derived from (seed, stream): independent streams per layer, say. */
void rng_seed2(rng64 *r, uint64_t seed, uint64_t stream);
uint64_t rng_next(rng64 *r);
/* Uniform in the open interval (0, 1). */
double rng_uniform(rng64 *r);
double rng_normal(rng64 *r);
/* out[i] = (float)(scale * rng_normal(r)) for i = 0 .. n-1, in that order and
 * with the same bits, the pairs drawn by several threads (the generator is a
 * counter, so each chunk of pairs starts from its own state); r ends where n
 * calls of rng_normal would leave it. */
void rng_fill_normal(rng64 *r, float *out, size_t n, double scale);

#endif
