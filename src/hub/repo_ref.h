/* Repo references on the command line (ORG/NAME[@REV][:PATH]), Hub URLs and
 * the --include glob filter. Pure string work: no I/O. */
#ifndef GRAFT_HUB_REPO_REF_H
#define GRAFT_HUB_REPO_REF_H

#include <stdbool.h>

typedef struct {
    char repo[128];     /* "org/name" */
    char revision[256]; /* "main" unless @REV was given */
    char path[1024];    /* file inside the repo after ':', "" when absent */
    bool has_revision;
} hub_ref;

/* Parses ORG/NAME[@REV][:PATH]. 0, or -1 with a one-line error. Repo names
 * follow the Hub's rules: [A-Za-z0-9._-], no "--" or "..", at most 96 chars. */
int hub_parse_ref(const char *arg, hub_ref *out);

/* "/" in a file name becomes a deeper folder; rejects "..", absolute and empty parts. */
bool hub_valid_repo_path(const char *path);

/* Percent-encodes every byte but [A-Za-z0-9._~-] (and '/' when keep_slash). Caller frees. */
char *hub_url_escape(const char *s, bool keep_slash);

/* {endpoint}/{repo}/resolve/{rev}/{file} and {endpoint}/api/models/{repo}/revision/{rev}?blobs=true. */
char *hub_url_resolve(const char *endpoint, const char *repo, const char *rev, const char *file);
char *hub_url_model_info(const char *endpoint, const char *repo, const char *rev);

/* True when name matches any pattern (fnmatch without FNM_PATHNAME, so '*'
 * crosses '/', as huggingface_hub's allow_patterns; a pattern ending in "/" matches everything below it). */
bool hub_glob_any(const char *const *patterns, int n, const char *name);

/* A full 40-hex-digit commit hash. */
bool hub_is_commit_hash(const char *s);

#endif
