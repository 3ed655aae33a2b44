/* RoPE angles from a config (theta, llama3 / linear / per-frequency scaling),
 * computed in double on the host; the backend rotates with a table of them. */
#ifndef GRAFT_MODEL_ROPE_H
#define GRAFT_MODEL_ROPE_H

#include "model/config.h"

/* inv_freq[hd/2]. */
void rope_inv_freq(double *inv_freq, const model_config *c);
/* table [n_pos, hd/2, 2]: (cos, sin) of position p times inv_freq[i], as float. */
void rope_table(float *table, const model_config *c, int n_pos);

#endif
