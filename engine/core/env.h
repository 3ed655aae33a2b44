/* Settings read from the environment (the GRAFT_* knobs of docs and the man page). */
#ifndef GRAFT_CORE_ENV_H
#define GRAFT_CORE_ENV_H

/* A count from variable `name`: unset or empty leaves *out as it is and
 * returns 0; digits only, 1 to max, are stored; anything else returns -1
 * with one line that names the variable ("NAME=VALUE: a whole number of
 * WHAT, 1 to MAX"). */
int gf_env_count(const char *name, int max, const char *what, int *out);

#endif
