#include "method/place_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

/* Exclusive flock on lock_path; the file is created if missing and, once
 * locked, checked to still be the one at lock_path (a releasing holder
 * unlinks it). fd, or -1 with the message. */
static int take(const char *what, const char *path, const char *lock_path, const char *hint) {
    for (int tries = 0; tries < 8; tries++) {
        const int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) return gf_fail("%s %s: cannot create the lock %s (%s)", what, path, lock_path, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int e = errno;
            char holder[32] = "";
            const ssize_t r = pread(fd, holder, sizeof holder - 1, 0);
            close(fd);
            holder[r > 0 ? r : 0] = 0;
            holder[strcspn(holder, "\n")] = 0;
            if (e == EWOULDBLOCK)
                return gf_fail("%s %s is being written by another graft process%s%s%s; %s", what, path,
                               *holder ? " (pid " : "", holder, *holder ? ")" : "", hint);
            return gf_fail("%s %s: cannot lock %s (%s)", what, path, lock_path, strerror(e));
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(lock_path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
            char pid[32];
            const int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) { /* the pid is only for the message */ }
            return fd;
        }
        close(fd); /* unlinked by the holder we waited on: take the new one */
    }
    return gf_fail("%s %s: the lock %s keeps changing", what, path, lock_path);
}

/* "FOLDER/NAME.lock" with FOLDER the real path of path's folder and NAME its
 * last part without trailing slashes: "out", "./out/" and "/abs/out" name one
 * lock, so a command and a job that spell a place differently still meet. The
 * path as given (plus ".lock") when its folder cannot be resolved. */
static char *lock_path_of(const char *path) {
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    size_t cut = len;
    while (cut > 0 && path[cut - 1] != '/') cut--;
    char *dir = cut ? gf_malloc(cut + 1) : gf_strdup(".");
    if (cut) {
        memcpy(dir, path, cut);
        dir[cut] = 0;
    }
    char *real = realpath(dir, NULL);
    free(dir);
    const char *name = path + cut;
    const size_t name_len = len - cut;
    char *out;
    if (real && name_len > 0 && !(name_len == 1 && name[0] == '.') && !(name_len == 2 && !memcmp(name, "..", 2))) {
        const size_t n = strlen(real) + name_len + sizeof "/.lock";
        out = gf_malloc(n);
        snprintf(out, n, "%s%s%.*s.lock", real, strcmp(real, "/") ? "/" : "", (int)name_len, name);
    } else {
        const size_t n = strlen(path) + sizeof ".lock";
        out = gf_malloc(n);
        snprintf(out, n, "%.*s.lock", (int)len, path);
    }
    free(real);
    return out;
}

int place_lock_take(place_lock *l, const char *what, const char *path, const char *hint) {
    l->lock_path = NULL;
    l->fd = -1;
    char *lock_path = lock_path_of(path);
    const int fd = take(what, path, lock_path, hint);
    if (fd < 0) {
        free(lock_path);
        return -1;
    }
    l->lock_path = lock_path;
    l->fd = fd;
    return 0;
}

void place_lock_release(place_lock *l) {
    if (!l->lock_path) return;
    unlink(l->lock_path); /* before the unlock: a waiter that locks the old file sees it gone */
    close(l->fd);
    free(l->lock_path);
    l->lock_path = NULL;
    l->fd = -1;
}
