/* Downloads one file of a repo commit into the cache:
 * HEAD {endpoint}/{repo}/resolve/{commit}/{file} names the blob (X-Linked-Etag
 * for LFS files, else ETag); under the blob's lock, bytes go to a
 * process-unique blobs/<etag>.<8 hex>.incomplete (adopting and resuming any
 * stale partial of the same blob with Range), are checked (size; sha256 for
 * LFS files, the git blob id in the ETag for regular ones), renamed to blobs/<etag> and linked from snapshots/<commit>/<file>. */
#ifndef GRAFT_HUB_FETCH_H
#define GRAFT_HUB_FETCH_H

#include "hub/cache.h"
#include "hub/hub.h"
#include "hub/model_info.h"
#include "hub/progress.h"

typedef struct {
    void *curl;              /* this thread's handle */
    const hub_cache *cache;
    const char *endpoint, *repo, *commit, *token;
    atomic_int *cancel;
    hub_progress *progress;
} hub_fetch_ctx;

/* 0 with out filled (name, size, sha256), or -1 with a one-line error. */
int hub_fetch_file(const hub_fetch_ctx *ctx, const hub_sibling *f, hub_file_result *out);

#endif
