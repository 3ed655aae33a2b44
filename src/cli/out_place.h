/* The places a command writes (--out folders, --ckpt files, --ckpt-dir,
 * --log-windows), claimed before any work starts: the folder they go in can
 * be written (a probe file is created and removed: this holds for root and
 * read-only file systems too), the path is of the right kind, and an
 * exclusive flock on "PATH.lock" (method/place_lock.h, which the workbench's
 * jobs take too) is held until the command ends, so a second
 * command writing the same place is refused with one line instead of the
 * two interleaving their renames. Once the model's config is known
 * (cli_out_on_config, from the load's on_config hook) the free space of each
 * place is checked against the size of what will be written there. */
#ifndef GRAFT_CLI_OUT_PLACE_H
#define GRAFT_CLI_OUT_PLACE_H

#include <stdint.h>

#include "model/config.h"

typedef enum {
    OUT_STUDENT,  /* a student folder (convert --out, train --out) */
    OUT_CKPT,     /* a training checkpoint file (train --ckpt) */
    OUT_CKPT_DIR, /* a folder of `copies` checkpoints (race --ckpt-dir; made when missing) */
    OUT_LOG,      /* a small text file (--log-windows) */
} out_kind;

/* Claims path for option opt ("--out"). 0, or -1 with one line naming the
 * option, the path and the problem. The lock is released by
 * cli_out_release_all (at exit, and before a command ends by a signal). */
int cli_out_claim(const char *opt, const char *path, out_kind kind, int copies);

/* Bytes a place of this kind needs for a model of this config (an upper
 * estimate: every parameter in float32; a checkpoint holds three blocks). */
uint64_t cli_out_bytes(out_kind kind, const model_config *cfg);

/* Free space of every claimed place against cli_out_bytes; -1 with
 * "--ckpt run.ckpt: needs 1.2 GB, 0.3 GB free on /data". */
int cli_out_on_config(const model_config *cfg);

/* 0 when the file system holding path (or its nearest existing folder) has
 * `need` bytes free; else -1 with the message above. */
int cli_out_check_space(const char *opt, const char *path, uint64_t need);

/* Unlocks and removes the lock files of this process. */
void cli_out_release_all(void);

#endif
