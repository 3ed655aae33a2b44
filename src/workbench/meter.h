/* The header's resource meter, as htop shows a process: CPU use of graft's
 * threads (100 % = one core busy) and resident memory, read from /proc; and a
 * GPU slot that a backend fills in (memory used / total, utilization). Until
 * a GPU backend registers a query, the slot says "no GPU". */
#ifndef GRAFT_WORKBENCH_METER_H
#define GRAFT_WORKBENCH_METER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    bool present;            /* a GPU backend answered */
    char name[64];           /* "cuda:0 NVIDIA H200" */
    double mem_used, mem_total; /* bytes */
    double util;             /* 0..1, <0 unknown */
} gpu_sample;

/* A backend's query: 0 and *out filled, or -1 (then the slot says why not). */
typedef int (*gpu_query_fn)(gpu_sample *out);
/* Registers the GPU query (NULL: none, the default: "no GPU"). */
void meter_set_gpu_query(gpu_query_fn fn);

typedef struct {
    double t;                /* when sampled (monotonic seconds) */
    double cpu;              /* CPU of every graft thread since the previous sample, in cores (1.0 = one core) */
    int threads;             /* threads of the process */
    int cores;               /* cores online */
    double rss;              /* resident bytes */
    gpu_sample gpu;
    bool valid;              /* cpu is known (two samples taken) */
    /* the previous /proc reading */
    double prev_t, prev_cpu_s;
} meter;

void meter_init(meter *m);
/* Reads /proc/self (at most every min_interval seconds); true when the numbers changed. */
bool meter_sample(meter *m, double now, double min_interval);
/* "cpu 187% 5 thr  rss 612 MB  gpu: no GPU" fitted in w columns (the GPU part dropped first). */
void meter_format(const meter *m, char *buf, size_t n, int w);

#endif
