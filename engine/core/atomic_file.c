#include "core/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

char *atomic_temp_path(const char *path) {
    static atomic_uint counter;
    size_t n = strlen(path) + 64;
    char *t = gf_malloc(n);
    snprintf(t, n, "%s.%ld.%u.tmp", path, (long)getpid(), atomic_fetch_add(&counter, 1));
    return t;
}

static void release(atomic_file *a) {
    free(a->path);
    free(a->tmp);
    a->path = a->tmp = NULL;
}

int atomic_file_open(atomic_file *a, const char *path) {
    memset(a, 0, sizeof *a);
    a->path = gf_strdup(path);
    a->tmp = atomic_temp_path(path);
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || !(a->f = fdopen(fd, "wb"))) {
        int e = errno;
        if (fd >= 0) close(fd);
        gf_fail("%s: cannot write (%s)", path, strerror(e));
        release(a);
        return -1;
    }
    return 0;
}

int atomic_file_finish(atomic_file *a) {
    if (!a->f) return gf_fail("%s: nothing to finish", a->path ? a->path : "?");
    bool ok = !ferror(a->f) && fflush(a->f) == 0 && fsync(fileno(a->f)) == 0;
    int e = errno;
    if (fclose(a->f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    a->f = NULL;
    if (!ok) {
        gf_fail("%s: write failed (%s)%s", a->path, strerror(e), e == ENOSPC ? "; the file was left as it was" : "");
        unlink(a->tmp);
        release(a);
        return -1;
    }
    return 0;
}

int atomic_file_commit(atomic_file *a) {
    if (rename(a->tmp, a->path) != 0) {
        gf_fail("%s: cannot rename into place (%s)", a->path, strerror(errno));
        unlink(a->tmp);
        release(a);
        return -1;
    }
    /* make the rename itself durable */
    char *dir = gf_strdup(a->path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    free(dir);
    release(a);
    return 0;
}

int atomic_file_close(atomic_file *a) {
    if (atomic_file_finish(a) != 0) return -1;
    return atomic_file_commit(a);
}

void atomic_file_discard(atomic_file *a) {
    if (a->f) fclose(a->f);
    a->f = NULL;
    if (a->tmp) unlink(a->tmp);
    release(a);
}

int atomic_write(const char *path, const void *data, size_t n) {
    atomic_file a;
    if (atomic_file_open(&a, path) != 0) return -1;
    if (n) (void)fwrite(data, 1, n, a.f); /* a short write sets the stream's error, which finish reports */
    return atomic_file_close(&a);
}
