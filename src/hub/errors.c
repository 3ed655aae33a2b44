#include "hub/errors.h"

#include <string.h>

#include "core/error.h"

#define TOKEN_HINT "set HF_TOKEN (or write the token to $HF_HOME/token) with a token that has access"

int hub_fail_status(const http_response *rs, const char *repo, const char *rev, const char *file, bool have_token) {
    const char *code = rs->error_code;
    long st = rs->status;
    if (!strcmp(code, "RevisionNotFound"))
        return gf_fail("%s: unknown revision '%s' (HTTP %ld)", repo, rev, st);
    if (!strcmp(code, "EntryNotFound") || (st == 404 && file && strcmp(code, "RepoNotFound") != 0))
        return gf_fail("%s@%s: no file '%s' in the repo (HTTP %ld)", repo, rev, file ? file : "?", st);
    if (!strcmp(code, "GatedRepo") && have_token)
        return gf_fail("%s is gated and the token (HF_TOKEN or $HF_HOME/token) has no access: accept its conditions "
                       "on the Hub page (HTTP %ld)", repo, st);
    if (!strcmp(code, "GatedRepo"))
        return gf_fail("%s is gated: accept its conditions on the Hub page, then %s (HTTP %ld)", repo, TOKEN_HINT, st);
    if (st == 401 || st == 403) {
        if (!strcmp(code, "RepoNotFound") && have_token)
            return gf_fail("repository %s not found, or your token has no access to it (HTTP %ld)", repo, st);
        if (have_token)
            return gf_fail("%s: access denied with the given token (HTTP %ld); check HF_TOKEN", repo, st);
        return gf_fail("%s: not found, private or gated (HTTP %ld); if it exists, %s", repo, st, TOKEN_HINT);
    }
    if (st == 404 || !strcmp(code, "RepoNotFound"))
        return gf_fail("repository %s not found (HTTP %ld)%s", repo, st, have_token ? "" : "; if it is private, " TOKEN_HINT);
    if (st == 429) return gf_fail("%s: rate limited by the Hub (HTTP 429) after several retries; try again later", repo);
    if (st >= 500) return gf_fail("%s: the Hub answered HTTP %ld after several retries; try again later", repo, st);
    return gf_fail("%s: unexpected HTTP %ld from %s%s%s", repo, st, rs->url, rs->error_message[0] ? ": " : "",
                   rs->error_message);
}
