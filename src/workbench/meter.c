#include "workbench/meter.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static gpu_query_fn gpu_query;

void meter_set_gpu_query(gpu_query_fn fn) { gpu_query = fn; }

void meter_init(meter *m) {
    memset(m, 0, sizeof *m);
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = c > 0 ? (int)c : 1;
}

/* utime + stime of the whole process (every thread) in seconds, and its thread count. */
static int read_stat(double *cpu_s, int *threads) {
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return -1;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p) return -1;
    unsigned long utime, stime;
    long nthreads;
    /* fields after ")": state(3) ... utime(14) stime(15) ... num_threads(20) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %ld", &utime, &stime,
               &nthreads) != 3)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    *cpu_s = (double)(utime + stime) / (double)(hz > 0 ? hz : 100);
    *threads = (int)nthreads;
    return 0;
}

static double read_rss(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size, resident;
    int ok = fscanf(f, "%ld %ld", &size, &resident) == 2;
    fclose(f);
    return ok ? (double)resident * (double)sysconf(_SC_PAGESIZE) : -1;
}

bool meter_sample(meter *m, double now, double min_interval) {
    if (m->prev_t > 0 && now - m->prev_t < min_interval) return false;
    double cpu_s;
    int threads;
    if (read_stat(&cpu_s, &threads) != 0) return false;
    if (m->prev_t > 0 && now > m->prev_t) {
        m->cpu = (cpu_s - m->prev_cpu_s) / (now - m->prev_t);
        m->valid = true;
    }
    m->prev_t = now;
    m->prev_cpu_s = cpu_s;
    m->threads = threads;
    m->rss = read_rss();
    m->t = now;
    memset(&m->gpu, 0, sizeof m->gpu);
    if (!gpu_query || gpu_query(&m->gpu) != 0) m->gpu.present = false;
    return true;
}

static void fmt_bytes(char *b, size_t n, double v) {
    if (v < 0) snprintf(b, n, "?");
    else if (v < 1e6) snprintf(b, n, "%.0f kB", v / 1e3);
    else if (v < 1e9) snprintf(b, n, "%.0f MB", v / 1e6);
    else snprintf(b, n, "%.2f GB", v / 1e9);
}

void meter_format(const meter *m, char *buf, size_t n, int w) {
    char cpu[32], rss[16], gpu[96];
    if (m->valid) snprintf(cpu, sizeof cpu, "cpu %3.0f%%/%d%%", 100 * m->cpu, 100 * m->cores);
    else snprintf(cpu, sizeof cpu, "cpu   -");
    if (m->rss > 0) fmt_bytes(rss, sizeof rss, m->rss);
    else snprintf(rss, sizeof rss, "-");
    if (m->gpu.present) {
        char used[16], total[16];
        fmt_bytes(used, sizeof used, m->gpu.mem_used);
        fmt_bytes(total, sizeof total, m->gpu.mem_total);
        if (m->gpu.util >= 0) snprintf(gpu, sizeof gpu, "gpu %.0f%% %s/%s", 100 * m->gpu.util, used, total);
        else snprintf(gpu, sizeof gpu, "gpu %s/%s", used, total);
    } else {
        snprintf(gpu, sizeof gpu, "no GPU");
    }
    snprintf(buf, n, "%s  mem %s  %s", cpu, rss, gpu);
    if ((int)strlen(buf) > w) snprintf(buf, n, "%s  mem %s", cpu, rss);
    if ((int)strlen(buf) > w) snprintf(buf, n, "%s", cpu);
    if ((int)strlen(buf) > w) buf[0] = 0;
}
