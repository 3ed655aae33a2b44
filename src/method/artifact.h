/* Artifacts named by what made them.
 *
 * A request's identity is everything that decides what it makes: its
 * command, every option that changes the result (not where it goes or how it
 * is shown: --out, --force, --json, --threads, --device, --help, checkpoint
 * and logging options), and the identity of every file it reads (the teacher,
 * the calibration and evaluation texts, the training data):
 *   - a file: its absolute path, its size and a SHA-256 of its content; up to
 *     ARTIFACT_HASH_WHOLE bytes the whole file is hashed, a larger one is
 *     hashed over its first and last ARTIFACT_HASH_PART bytes and its size
 *     (hashing a 1 GB teacher whole would take seconds on every build; the
 *     bounded part tells two teachers apart unless only their middle differs);
 *   - a folder (a Hugging Face model folder, a student folder): the same for
 *     each regular file in it, sorted by name;
 *   - a Hub repo id ("owner/name[@revision]") that is not a path: the repo id,
 *     the revision asked for ("main" when none) and, when the Hugging Face
 *     cache holds it, the snapshot it resolves to (its path names the commit)
 *     with that snapshot's identity as above.
 * The digest is the SHA-256 of the identity's canonical JSON; its first
 * ARTIFACT_SHORT hex digits go into default folder names.
 *
 * An artifact's folder records its request (ARTIFACT_KEY in a student's
 * config.json, request.json in a checkpoint folder): the digest, the
 * identity, the headless command and graft's version. A folder is claimed
 * before anything is written: a new or empty folder is taken, a folder made by
 * the same request is reused (and said so), any other folder is refused
 * unless the caller forces it. */
#ifndef GRAFT_METHOD_ARTIFACT_H
#define GRAFT_METHOD_ARTIFACT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "method/request.h"

#define ARTIFACT_HASH_WHOLE (64L << 20)
#define ARTIFACT_HASH_PART (16L << 20)
#define ARTIFACT_SHORT 10
#define ARTIFACT_KEY "graft_request"
#define ARTIFACT_DIGEST_HEX 65

/* graft's version, as `graft --version` prints it */
const char *graft_version(void);

/* The identity of a path (file, folder or Hub repo id), as above. NULL with an
 * error when a path cannot be read. */
cJSON *artifact_path_identity(const char *path);

/* The request's identity and its digest (64 hex digits and a NUL). 0, or -1
 * with an error naming the file that could not be read. */
int artifact_identity(const request *r, cJSON **identity, char digest[ARTIFACT_DIGEST_HEX]);

/* What goes into the artifact: {"digest", "command", "identity", "graft_version"}. */
cJSON *artifact_record(const request *r, const cJSON *identity, const char *digest);

typedef enum { ARTIFACT_NEW, ARTIFACT_SAME, ARTIFACT_FORCED } artifact_claim;

/* Claims dir for the request of `digest` (record_file: the JSON file in dir
 * holding the record, under ARTIFACT_KEY or at its top). ARTIFACT_NEW: dir is
 * missing or empty; ARTIFACT_SAME: the same request made it; ARTIFACT_FORCED:
 * another request (or none graft recorded) made it and force is set. -1 with
 * "DIR holds what another request made (graft convert ...): ..." otherwise;
 * `hint` ends that line ("choose another --out or pass --force"). */
int artifact_claim_dir(const char *dir, const char *record_file, const char *digest, bool force, const char *hint,
                       artifact_claim *claim);

/* The recorded digest of dir (as artifact_claim_dir reads it) into digest;
 * 0, or -1 with an error when there is none. The command, when cmd is not
 * NULL (cmd_n bytes). */
int artifact_read(const char *dir, const char *record_file, char digest[ARTIFACT_DIGEST_HEX], char *cmd, size_t cmd_n);

/* 0 when dir still holds what `digest` made (digest: the whole digest or its
 * first ARTIFACT_SHORT or more hex digits); -1 with "DIR no longer holds
 * this row's artifact: ..." otherwise. */
int artifact_check(const char *dir, const char *record_file, const char *digest);

/* Writes the record as dir/request.json (atomic), for checkpoint folders. */
int artifact_write_record(const char *dir, const cJSON *record);

/* A checkpoint folder (it exists) for request r: claimed through its
 * request.json (refused for another request's unless force; hint ends that
 * line), then the record written when it was not r's already. digest gets
 * r's; note gets "DIR: reused ..." / "DIR: replaced ..." or "". 0, or -1. */
int artifact_claim_record_dir(const request *r, const char *dir, bool force, const char *hint,
                              char digest[ARTIFACT_DIGEST_HEX], char *note, size_t note_n);

/* The same for a checkpoint file: its record is FILE.request.json beside it.
 * A missing file (and record) is new; a file with another request's record,
 * or with none, is refused unless force. */
int artifact_claim_record_file(const request *r, const char *path, bool force, const char *hint,
                               char digest[ARTIFACT_DIGEST_HEX], char *note, size_t note_n);

#endif
