/* A plan's layers without data: the uniform strategy's kept layers for a
 * retention ratio (what the Plan screen shows as the ratio changes, and what
 * the race's builder keeps), through the engine's selection. */
#ifndef GRAFT_METHOD_PLAN_H
#define GRAFT_METHOD_PLAN_H

#include <stdbool.h>

/* kept[0..L) = the layers keeping attention under uniform at keep (k =
 * round(keep * L), select/select.h). *k (may be NULL) gets their count.
 * 0, or -1 with an error for a ratio out of (0, 1). */
int method_uniform_kept(int L, double keep, bool *kept, int *k);

#endif
