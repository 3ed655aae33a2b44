/* A main() for the fuzz harnesses without libFuzzer: runs
 * LLVMFuzzerTestOneInput once on every file named (folders: every file in
 * them), so the kept crashing inputs (tests/fuzz/regress/<harness>/) and the
 * seed corpora replay in `make test` under any compiler and sanitizer.
 * Prints one line per file; a crash or sanitizer report fails the run. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t r; (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    printf("replay %s (%zu bytes)\n", path, n);
    fflush(stdout);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int replay(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: no such file or folder: %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) return replay_file(path);
    DIR *d = opendir(path);
    if (!d) return 1;
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n] = malloc(strlen(path) + strlen(e->d_name) + 2);
        sprintf(names[n++], "%s/%s", path, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        rc |= replay(names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|FOLDER...\n", argv[0]);
        return 2;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++) rc |= replay(argv[i]);
    return rc;
}
