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

int mapped_file_open(mapped_file *f, const char *path) {
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return gf_fail("%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return gf_fail("%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return gf_fail("%s: not a regular file", path);
    }
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

char *read_text_file(const char *path, size_t *len_out) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        gf_fail("%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = gf_malloc(cap);
    for (;;) {
        if (len + 1 >= cap) buf = gf_realloc(buf, cap *= 2);
        size_t n = fread(buf + len, 1, cap - len - 1, fp);
        len += n;
        if (n == 0) break;
    }
    int err = ferror(fp);
    fclose(fp);
    if (err) {
        free(buf);
        gf_fail("%s: read error", path);
        return NULL;
    }
    buf[len] = 0;
    if (len_out) *len_out = len;
    return buf;
}
