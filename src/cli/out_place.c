#include "cli/out_place.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "memory/estimate.h"
#include "method/place_lock.h"
#include "model/layout.h"

#define MAX_PLACES 8

typedef struct {
    const char *opt;
    char *path;
    out_kind kind;
    int copies;
    place_lock lock;
} out_place;
static out_place places[MAX_PLACES];
static int n_places;
static bool at_exit_set;

/* The folder a place's files are created in (malloc'd): the place itself
 * for folders that exist, else its parent ("out/" is the folder out, in .). */
static char *folder_of(const char *path, bool is_folder) {
    struct stat st;
    if (is_folder && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return gf_strdup(path);
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    size_t cut = len;
    while (cut > 0 && path[cut - 1] != '/') cut--;
    if (cut == 0) return gf_strdup(".");
    if (cut == 1) return gf_strdup("/");
    char *d = gf_malloc(cut);
    memcpy(d, path, cut - 1);
    d[cut - 1] = 0;
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
    char hint[64];
    snprintf(hint, sizeof hint, "wait for it to end or choose another %s", opt);
    place_lock lock;
    if (place_lock_take(&lock, opt, path, hint) != 0) return -1;
    places[n_places++] = (out_place){opt, gf_strdup(path), kind, copies > 0 ? copies : 1, lock};
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
        place_lock_release(&places[i].lock);
        free(places[i].path);
    }
    n_places = 0;
}
