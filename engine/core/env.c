#include "core/env.h"

#include <stdlib.h>

#include "core/error.h"

int gf_env_count(const char *name, int max, const char *what, int *out) {
    const char *v = getenv(name);
    if (!v || !*v) return 0;
    char *end;
    const long n = strtol(v, &end, 10); /* digits only: strtol alone takes " 8" and "+8" */
    if (*v < '0' || *v > '9' || *end || n < 1 || n > max)
        return gf_fail("%s=%s: a whole number of %s, 1 to %d", name, v, what, max);
    *out = (int)n;
    return 0;
}
