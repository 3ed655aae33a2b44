/* How much backend memory a job needs, computed before anything is
 * allocated, so that a command can refuse with one line ("needs 41.2 GB on
 * cuda:0, 30.1 GB free") instead of failing half-way.
 *
 * The figures come from the allocators themselves where they exist
 * (param_layout for parameter blocks, tf_run_measure for a run's one
 * allocation, stage2_device_bytes for a layer's Stage 2, the GDN arena
 * functions for Stage 1), so they are exact for those; the backend's own
 * scratch (cuBLAS workspaces, conversion staging, kernel partial sums) is an
 * allowance (MEM_SCRATCH_*), counted on devices only.
 *
 * A job is the memory that stays (teacher parameter blocks, GDN layer
 * blocks) plus phases that never overlap in time: an inference run (stats,
 * perplexity, generation, a teacher capture), building GDN layers (Stage 1,
 * then Stage 2 per layer), recovery training. Its peak is what stays plus the
 * largest phase plus the scratch. */
#ifndef GRAFT_MEMORY_ESTIMATE_H
#define GRAFT_MEMORY_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/backend.h"
#include "gdn/gdn.h"
#include "model/config.h"
#include "model/transformer.h"

/* Backend scratch on devices: a cuBLAS workspace per stream (the root and up
 * to four task streams), the host <-> device conversion stage, kernels'
 * partial results. */
#define MEM_SCRATCH_STREAM ((size_t)32 << 20)
#define MEM_SCRATCH_STREAMS 5
#define MEM_SCRATCH_STAGE ((size_t)64 << 20)
#define MEM_SCRATCH_KERNELS ((size_t)64 << 20)

typedef struct {
    const model_config *cfg;  /* the teacher */
    gf_dtype act;             /* the backend's compute type */
    bool device;              /* a device backend: its scratch is counted */
    int teachers;             /* teacher-format parameter blocks held (1; 2 when a second model is loaded) */
    gdn_config gcfg;          /* the GDN layers' config (when any) */
    int gdn_blocks;           /* GDN layer blocks held beside the teacher (every student's GDN layers) */

    /* phase: inference runs, one at a time (B = 0: none), over a model with
     * run_gdn[i] GDN layers (a teacher capture, then a perplexity run, ...) */
    tf_run_opts run[2];
    int run_gdn[2];

    /* phase: building GDN layers over B x T calibration rows (B = 0: none);
     * Stage 2 with held_B x held_T held-out rows, `tasks` layers at once
     * (CPU: its threads; devices: 1, the tasks' queues run one after another) */
    int build_B, build_T, held_B, held_T;
    bool stage2;
    int tasks;

    /* phase: recovery training (B = 0: none) of a student with train_gdn GDN
     * layers, batch B x T, the align phase's buffers when align; the held-out
     * evaluation run of eval_B sequences beside it */
    int train_B, train_T, train_gdn, eval_B;
    bool align;
    bool recompute; /* the student's training run recomputes its layers' activations (tf_run_opts) */
    int sample_B;   /* teacher-sampled data: a decode run of sample_B rows x train_T positions beside it */
} mem_job;

/* The parts, in bytes. */
typedef enum {
    MEM_WEIGHTS,       /* teacher parameter blocks */
    MEM_GDN,           /* GDN layer blocks */
    MEM_ACTIVATIONS,   /* the larger inference run (KV cache included) */
    MEM_KV_CACHE,      /* of which the attention layers' KV cache */
    MEM_BUILD,         /* Stage 1 / Stage 2 of the layers built at once */
    MEM_TRAIN_BLOCKS,  /* the trainable model: parameters, master copy, gradients */
    MEM_MOMENTS,       /* AdamW's two moments */
    MEM_TRAIN_RUNS,    /* training activations: student, teacher, evaluation runs and buffers */
    MEM_SCRATCH,       /* the backend's own (devices) */
    MEM_PART_COUNT
} mem_part;

typedef struct {
    size_t part[MEM_PART_COUNT];
    const char *peak_phase; /* "run", "build", "train" or "load" */
    size_t total;           /* what stays + the largest phase + scratch */
} mem_estimate;

const char *mem_part_name(mem_part p); /* "weights", "kv_cache", ... */

/* A job of cfg on a backend of compute type act: teachers = 1, nothing else. */
void mem_job_init(mem_job *j, const model_config *cfg, gf_dtype act, bool device);
/* 0, or -1 with a one-line message (a GDN config that does not check). */
int mem_estimate_job(mem_estimate *out, const mem_job *j);

/* Bytes as "41.2 GB" (decimal units, one decimal). */
void mem_format(char *buf, size_t n, size_t bytes);

/* 0 when need fits in free_bytes; else -1 with "needs 41.2 GB on cuda:0,
 * 30.1 GB free" (limit: "30.1 GB allowed by GRAFT_MEM_LIMIT" when the cap
 * is the limit, not the device). */
int mem_check(size_t need, size_t free_bytes, const char *device, bool limit);

/* GRAFT_MEM_LIMIT: bytes, with an optional K/M/G/T suffix (powers of 1000; KiB,
 * MiB, GiB, TiB with i: powers of 1024). 0 when unset; -1 with a message when
 * it does not parse. */
int mem_limit_from_env(size_t *out);

#endif
