#include "cli/out_place.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "memory/estimate.h"
#include "model/layout.h"

#define MAX_PLACES 8

typedef struct {
    const char *opt;
    char *path, *lock_path;
    out_kind kind;
    int copies;
    int fd;
} out_place;
static out_place places[MAX_PLACES];
static int n_places;
static bool at_exit_set;

/* The folder a place's files are created in (malloc'd): the place itself
 * for folders that exist, else its parent. */
static char *folder_of(const char *path, bool is_folder) {
    struct stat st;
    if (is_folder && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return gf_strdup(path);
    const char *slash = strrchr(path, '/');
    if (!slash) return gf_strdup(".");
    if (slash == path) return gf_strdup("/");
    char *d = gf_malloc((size_t)(slash - path) + 1);
    memcpy(d, path, (size_t)(slash - path));
    d[slash - path] = 0;
    return d;
}

/* Creates and removes a file in dir: can this process write there? */
static int probe_write(const char *opt, const char *path, const char *dir) {
    struct stat st;
    if (stat(dir, &st) != 0) return gf_fail("%s %s: folder %s: %s", opt, path, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return gf_fail("%s %s: %s is not a folder", opt, path, dir);
    size_t n = strlen(dir) + 32;
    char *probe = gf_malloc(n);
    snprintf(probe, n, "%s/.graft-probe.%ld", dir, (long)getpid());
    const int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    const int e = errno;
    if (fd >= 0) {
        close(fd);
        unlink(probe);
    }
    free(probe);
    if (fd < 0) return gf_fail("%s %s: cannot write in %s (%s)", opt, path, dir, strerror(e));
    return 0;
}

/* Exclusive flock on lock_path; the file is created if missing and, once
 * locked, checked to still be the one at lock_path (a releasing holder
 * unlinks it). fd, or -1 with the message. */
static int take_lock(const char *opt, const char *path, const char *lock_path) {
    for (int tries = 0; tries < 8; tries++) {
        const int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) return gf_fail("%s %s: cannot create the lock %s (%s)", opt, path, lock_path, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int e = errno;
            char holder[32] = "";
            const ssize_t r = pread(fd, holder, sizeof holder - 1, 0);
            close(fd);
            holder[r > 0 ? r : 0] = 0;
            holder[strcspn(holder, "\n")] = 0;
            if (e == EWOULDBLOCK)
                return gf_fail("%s %s is being written by another graft process%s%s%s; wait for it to end or choose "
                               "another %s", opt, path, *holder ? " (pid " : "", holder, *holder ? ")" : "", opt);
            return gf_fail("%s %s: cannot lock %s (%s)", opt, path, lock_path, strerror(e));
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
    return gf_fail("%s %s: the lock %s keeps changing", opt, path, lock_path);
}

int cli_out_claim(const char *opt, const char *path, out_kind kind, int copies) {
    if (!path || !*path) return gf_fail("%s needs a path", opt);
    if (n_places == MAX_PLACES) return gf_fail("%s %s: too many output places", opt, path);
    const bool is_folder = kind == OUT_STUDENT || kind == OUT_CKPT_DIR;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (is_folder && !S_ISDIR(st.st_mode)) return gf_fail("%s %s exists and is not a folder", opt, path);
        if (!is_folder && S_ISDIR(st.st_mode)) return gf_fail("%s %s is a folder; %s takes a file", opt, path, opt);
        if (!is_folder && !S_ISREG(st.st_mode)) return gf_fail("%s %s exists and is not a regular file", opt, path);
    }
    char *dir = folder_of(path, is_folder);
    const int rc = probe_write(opt, path, dir);
    free(dir);
    if (rc != 0) return -1;
    const size_t n = strlen(path) + sizeof ".lock";
    char *lock_path = gf_malloc(n);
    snprintf(lock_path, n, "%s.lock", path);
    const int fd = take_lock(opt, path, lock_path);
    if (fd < 0) {
        free(lock_path);
        return -1;
    }
    places[n_places++] = (out_place){opt, gf_strdup(path), lock_path, kind, copies > 0 ? copies : 1, fd};
    if (!at_exit_set) atexit(cli_out_release_all);
    at_exit_set = true;
    return 0;
}

uint64_t cli_out_bytes(out_kind kind, const model_config *cfg) {
    const uint64_t params = (uint64_t)model_param_count(cfg);
    switch (kind) {
    case OUT_STUDENT: return params * 4 + (16u << 20);      /* weights, tokenizer and config */
    case OUT_CKPT: return params * 4 * 3 + (1u << 20);      /* master parameters, two moments, the header */
    case OUT_CKPT_DIR: return params * 4 * 3 + (1u << 20); /* per copy */
    case OUT_LOG: return 0;
    }
    return 0;
}

int cli_out_check_space(const char *opt, const char *path, uint64_t need) {
    if (need == 0) return 0;
    char *dir = folder_of(path, true);
    struct statvfs vs;
    const int rc = statvfs(dir, &vs);
    const int e = errno;
    if (rc != 0) {
        gf_fail("%s %s: cannot read the free space of %s (%s)", opt, path, dir, strerror(e));
        free(dir);
        return -1;
    }
    const uint64_t avail = (uint64_t)vs.f_bavail * (uint64_t)vs.f_frsize;
    if (avail >= need) {
        free(dir);
        return 0;
    }
    char a[32], b[32];
    mem_format(a, sizeof a, need > SIZE_MAX ? SIZE_MAX : (size_t)need);
    mem_format(b, sizeof b, (size_t)avail);
    gf_fail("%s %s: needs %s, %s free on %s", opt, path, a, b, dir);
    free(dir);
    return -1;
}

int cli_out_on_config(const model_config *cfg) {
    for (int i = 0; i < n_places; i++)
        if (cli_out_check_space(places[i].opt, places[i].path,
                                cli_out_bytes(places[i].kind, cfg) * (uint64_t)places[i].copies) != 0)
            return -1;
    return 0;
}

void cli_out_release_all(void) {
    for (int i = 0; i < n_places; i++) {
        unlink(places[i].lock_path); /* before the unlock: a waiter that locks the old file sees it gone */
        close(places[i].fd);
        free(places[i].path);
        free(places[i].lock_path);
    }
    n_places = 0;
}
