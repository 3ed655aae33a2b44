/* The Hub's model-info API: GET {endpoint}/api/models/{repo}/revision/{rev}?blobs=true
 * answers {"sha": commit, "siblings": [{"rfilename", "size", "blobId",
 * "lfs": {"sha256", "size", "pointerSize"}}...]}: the file list, sizes and LFS hashes. */
#ifndef GRAFT_HUB_MODEL_INFO_H
#define GRAFT_HUB_MODEL_INFO_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct {
    char *name;       /* rfilename, '/'-separated */
    long long size;   /* -1 when unknown */
    bool lfs;
    char sha256[65];  /* LFS files only, else "" */
    char blob_id[65]; /* git blob id when given, else "" */
} hub_sibling;

typedef struct {
    char sha[41]; /* the commit */
    hub_sibling *files;
    int n_files;
} hub_model_info;

/* Parses the API's JSON; 0, or -1 with a one-line error. */
int hub_parse_model_info(const char *json, hub_model_info *out);
void hub_model_info_free(hub_model_info *mi);
const hub_sibling *hub_model_info_find(const hub_model_info *mi, const char *name);

/* Fetches and parses (with retries); errors name the repo and revision. */
int hub_fetch_model_info(void *curl, const char *endpoint, const char *repo, const char *rev, const char *token,
                         atomic_int *cancel, hub_model_info *out);

#endif
