/* Host memory and time of loading a teacher: chunked staging (the default,
 * MODEL_STAGE_BYTES) against whole tensors converted at once (what the
 * loaders did before). Each load runs in its own process so that its peak
 * resident set (ru_maxrss) is its own. On the CPU backend the parameter block
 * is host memory; "beyond the block" (peak - before - block) is what the
 * loader itself holds, which is all a device backend leaves on the host.
 * Models: stories260K, SmolLM2-135M Q4_1 (when fetched) and GRAFT_BENCH_LOAD
 * (a path; e.g. a 1.5B safetensors folder: tests/bench/bench_load_gpu.sh).
 * GRAFT_BENCH_DEVICE=cuda loads onto the GPU: then the block is device memory
 * and the peak resident set is what the host holds while the weights stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "core/error.h"
#include "formats/model_load.h"
#include "model/model.h"

/* current resident set in bytes (/proc/self/statm) */
static double rss_now(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

typedef struct {
    double seconds, before, peak, block;
    int ok;
} load_figures;

static void child(const char *path, size_t stage, int fd) {
    load_figures r = {0};
    const char *dev = getenv("GRAFT_BENCH_DEVICE");
    gf_backend *be = NULL;
    const gf_backend_opts bo = {dev && *dev ? dev : "cpu", 0, false};
    if (be_open(&be, &bo) != 0) {
        fprintf(stderr, "bench_load: %s\n", gf_last_error());
        if (write(fd, &r, sizeof r) != (ssize_t)sizeof r) _exit(1);
        _exit(1);
    }
    r.before = rss_now();
    model m;
    const model_load_opts lo = {NULL, be};
    const model_load_hooks o = {.stage_bytes = stage};
    const double t0 = bench_now();
    if (model_load_hooked(&m, path, &lo, &o) == 0 && be_sync(be) == 0) {
        r.seconds = bench_now() - t0;
        r.block = be_is_host(be) ? (double)m.layout.total * gf_dtype_size(be_act(m.be)) : 0; /* host bytes only */
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        r.peak = (double)ru.ru_maxrss * 1024;
        r.ok = 1;
        model_free(&m);
        be_close(be);
    } else {
        fprintf(stderr, "bench_load: %s\n", gf_last_error());
    }
    if (write(fd, &r, sizeof r) != (ssize_t)sizeof r) _exit(1);
    _exit(0);
}

static int measure(const char *path, size_t stage, load_figures *out) {
    int p[2];
    if (pipe(p) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        child(path, stage, p[1]);
    }
    close(p[1]);
    memset(out, 0, sizeof *out);
    ssize_t n = read(p[0], out, sizeof *out);
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    return n == (ssize_t)sizeof *out && out->ok ? 0 : -1;
}

static void bench_model(const char *label, const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) {
        printf("%-24s skipped: %s not found\n", label, path);
        return;
    }
    const struct { const char *name; size_t stage; } modes[] = {
        {"chunks of 32 MiB", 0},
        {"whole tensors", (size_t)1 << 40},
    };
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        load_figures f;
        if (measure(path, modes[i].stage, &f) != 0) {
            printf("%-24s %-17s failed\n", label, modes[i].name);
            continue;
        }
        printf("%-24s %-17s %7.2f s  block %8.1f MB  peak RSS %8.1f MB  before %6.1f MB  beyond the block %7.1f MB\n",
               label, modes[i].name, f.seconds, f.block / 1e6, f.peak / 1e6, f.before / 1e6,
               (f.peak - f.before - f.block) / 1e6);
    }
}

int main(void) {
    const char *dev = getenv("GRAFT_BENCH_DEVICE");
    printf("loading onto %s; \"block\" is the parameter block in host memory (0 on a device)\n", dev && *dev ? dev : "cpu");
    const char *sh = getenv("GRAFT_SHARED");
    char p[4096];
    snprintf(p, sizeof p, "%s/models/tinyllamas/stories260K/stories260K.bin", sh ? sh : "../shared");
    bench_model("stories260K", p);
    const char *d = getenv("GRAFT_TEACHERS");
    if (d && *d) snprintf(p, sizeof p, "%s/SmolLM2-135M-Instruct.Q4_1.gguf", d);
    else snprintf(p, sizeof p, "%s/.cache/graft/teachers/SmolLM2-135M-Instruct.Q4_1.gguf", getenv("HOME") ? getenv("HOME") : ".");
    bench_model("SmolLM2-135M Q4_1", p);
    const char *extra = getenv("GRAFT_BENCH_LOAD");
    if (extra && *extra) bench_model(extra, extra);
    return 0;
}
