/* The huggingface_hub cache layout, shared with Python tools:
 *
 *   $HF_HUB_CACHE/models--ORG--NAME/
 *       blobs/<etag>                      file contents (etag = sha256 for LFS, git sha1 otherwise)
 *       blobs/<etag>.<8 hex>.incomplete   a download in progress (process-unique name)
 *       snapshots/<commit>/<path>         relative symlinks: ../../blobs/<etag>, one more ../ per folder
 *       refs/<revision>                   the commit hash (no newline), written atomically
 *   $HF_HUB_CACHE/.locks/models--ORG--NAME/<etag>.lock   flock held while a blob is written
 */
#ifndef GRAFT_HUB_CACHE_H
#define GRAFT_HUB_CACHE_H

#include <stdbool.h>

typedef struct {
    char *root;    /* the hub cache folder */
    char *storage; /* root/models--ORG--NAME */
    char *locks;   /* root/.locks/models--ORG--NAME */
} hub_cache;

void hub_cache_init(hub_cache *c, const char *root, const char *repo);
void hub_cache_free(hub_cache *c);

/* Paths (caller frees). file may contain '/'. */
char *hub_cache_blob(const hub_cache *c, const char *etag);
char *hub_cache_lock(const hub_cache *c, const char *etag);
char *hub_cache_snapshot(const hub_cache *c, const char *commit, const char *file /* NULL: the folder */);
/* The symlink text for snapshots/<commit>/<file>: "../../blobs/<etag>" plus one "../" per '/' in file. */
char *hub_pointer_target(const char *file, const char *etag);

/* The commit a revision names in the cache: a full hash is itself, else refs/<rev>.
 * 0 with commit[41] filled, -1 (no error message) when unknown. */
int hub_cache_commit_for(const hub_cache *c, const char *rev, char commit[41]);
/* Writes refs/<rev> atomically (temp file + rename); nothing for a full hash. */
int hub_cache_write_ref(const hub_cache *c, const char *rev, const char *commit);
/* Points snapshots/<commit>/<file> at blobs/<etag> (atomic symlink replace). */
int hub_cache_link(const hub_cache *c, const char *commit, const char *file, const char *etag);
/* True when snapshots/<commit>/<file> exists and resolves to a regular file. */
bool hub_cache_has(const hub_cache *c, const char *commit, const char *file);

/* mkdir -p; 0 or -1 with an error. */
int hub_mkdirs(const char *path);
/* mkdir -p of the folder containing path. */
int hub_mkdirs_parent(const char *path);

#endif
