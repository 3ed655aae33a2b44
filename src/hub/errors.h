/* One-line messages for the Hub's error answers (status + X-Error-Code). */
#ifndef GRAFT_HUB_ERRORS_H
#define GRAFT_HUB_ERRORS_H

#include <stdbool.h>

#include "hub/http.h"

/* Sets the message for a non-2xx answer about repo@rev (file may be NULL) and returns -1. */
int hub_fail_status(const http_response *rs, const char *repo, const char *rev, const char *file, bool have_token);

#endif
