#include "method/plan.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "select/select.h"

int method_uniform_kept(int L, double keep, bool *kept, int *k_out) {
    int k = 0;
    if (keep_count(keep, L, &k) != 0) return -1;
    int *ids = gf_malloc((size_t)(k ? k : 1) * sizeof *ids);
    select_uniform(L, k, ids);
    memset(kept, 0, (size_t)L * sizeof *kept);
    for (int i = 0; i < k; i++) kept[ids[i]] = true;
    free(ids);
    if (k_out) *k_out = k;
    return 0;
}
