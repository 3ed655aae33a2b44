#include "core/mapped_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

/* What a path that is not a regular file is, for the refusal. */
static const char *file_kind(mode_t m) {
    return S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
           : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Opens a regular file for reading: O_NONBLOCK so that a FIFO without a
 * writer is refused at once instead of blocking the open. */
static int open_regular(const char *path, struct stat *st) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return gf_fail("%s: %s", path, strerror(errno));
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        return gf_fail("%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return gf_fail("%s is %s, not a regular file", path,
                       file_kind(st->st_mode));
    }
    return fd;
}

int regular_file_check(const char *path) {
    struct stat st;
    const int fd = open_regular(path, &st);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

int mapped_file_open(mapped_file *f, const char *path) {
    memset(f, 0, sizeof *f);
    struct stat st;
    const int fd = open_regular(path, &st);
    if (fd < 0) return -1;
    f->size = (size_t)st.st_size;
    if (f->size > 0) {
        void *p = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return gf_fail("%s: mmap failed: %s", path, strerror(e));
        }
        f->data = p;
    }
    close(fd);
    f->path = gf_strdup(path);
    return 0;
}

void mapped_file_close(mapped_file *f) {
    if (f->data) munmap((void *)f->data, f->size);
    free(f->path);
    memset(f, 0, sizeof *f);
}

void mapped_release(const void *p, size_t n) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t a = (uintptr_t)p / page * page, b = ((uintptr_t)p + n + page - 1) / page * page;
    /* read-only private file mapping: MADV_DONTNEED only unmaps; never fails in a way that matters */
    if (n && b > a) (void)madvise((void *)a, b - a, MADV_DONTNEED);
}

char *read_file_bounded(const char *path, size_t max_bytes, size_t *len_out) {
    struct stat st;
    const int fd = open_regular(path, &st);
    if (fd < 0) return NULL;
    if ((uint64_t)st.st_size > max_bytes) {
        close(fd);
        gf_fail("%s is %lld bytes, more than the %zu a file read whole may have", path, (long long)st.st_size,
                max_bytes);
        return NULL;
    }
    /* at most the size fstat gave: a file that grows meanwhile is read as it was */
    const size_t want = (size_t)st.st_size;
    char *buf = gf_malloc(want + 1);
    size_t len = 0;
    while (len < want) {
        const ssize_t n = read(fd, buf + len, want - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int e = n < 0 ? errno : 0;
            close(fd);
            free(buf);
            if (e) gf_fail("%s: read error: %s", path, strerror(e));
            else gf_fail("%s: the file shrank while it was read (%zu of %zu bytes)", path, len, want);
            return NULL;
        }
        len += (size_t)n;
    }
    close(fd);
    buf[len] = 0;
    if (len_out) *len_out = len;
    return buf;
}

char *read_text_file(const char *path, size_t *len_out) { return read_file_bounded(path, TEXT_FILE_MAX, len_out); }
