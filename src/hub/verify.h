/* Hashes a blob while it downloads, so verifying a multi-gigabyte file costs
 * no second read: sha256 always (LFS files are checked against it and
 * --json reports it), and the git blob id sha1("blob <size>\0" + bytes) when
 * a regular file's ETag is to be checked. A resumed partial is hashed from
 * disk up to where the transfer continues. */
#ifndef GRAFT_HUB_VERIFY_H
#define GRAFT_HUB_VERIFY_H

#include <stdbool.h>

#include "hub/digest.h"

typedef struct {
    digest s256;
    digest s1;
    bool git;           /* compute the git blob id too */
    long long git_size; /* the size announced in its "blob <size>\0" prefix */
    long long hashed;   /* bytes of the file fed so far */
} hub_hasher;

/* Starts over at byte 0 (h zeroed before the first reset). git_size < 0: no
 * git blob id. */
void hub_hasher_reset(hub_hasher *h, long long git_size);
void hub_hasher_update(hub_hasher *h, const void *data, size_t n);
/* Feeds bytes [hashed, upto) of fd (pread: the file offset is untouched). */
int hub_hasher_catch_up(hub_hasher *h, int fd, long long upto, const char *path);
/* Finishes and compares with want_sha256 / want_git ("" = don't check); the
 * sha256 goes to sha256_out. 0, or -1 with "NAME: checksum mismatch ...". */
int hub_hasher_check(hub_hasher *h, const char *name, const char *want_sha256, const char *want_git,
                     char sha256_out[65]);
/* Releases the digests (h may be reset again afterwards). */
void hub_hasher_free(hub_hasher *h);

#endif
