/* One writer per place: a place graft writes (a student folder, a checkpoint
 * file or folder, a log) is claimed by an exclusive flock on "PATH.lock",
 * held while it is written. The command line (src/cli/out_place.c: --out,
 * --ckpt, --ckpt-dir, --log-windows) and the workbench's jobs (the students
 * they build, their race checkpoints, half-life fixes) claim their places
 * through this, so a command and a job writing one place refuse each other
 * with one line instead of interleaving their renames. The lock file holds
 * the holder's pid, for that line; the holder removes it on release. */
#ifndef GRAFT_METHOD_PLACE_LOCK_H
#define GRAFT_METHOD_PLACE_LOCK_H

typedef struct {
    char *lock_path; /* PATH.lock; NULL when not held */
    int fd;
} place_lock;

/* Takes the lock of path. `what` names the place in the refusal (an option
 * such as "--out", or "student folder"); `hint` ends it ("wait for it to end
 * or choose another --out"). 0, or -1 with
 * "WHAT PATH is being written by another graft process (pid N); HINT". */
int place_lock_take(place_lock *l, const char *what, const char *path, const char *hint);

/* Removes the lock file and unlocks; a lock not held is left alone. */
void place_lock_release(place_lock *l);

#endif
