/* The memory check of a command: before the first model's parameters are
 * allocated, the command's whole job (engine/memory/estimate.h) is estimated
 * for the teacher's config and checked against the backend's free memory
 * (devices) and GRAFT_MEM_LIMIT (any backend). A job that does not fit is
 * refused with one line ("graft train: needs 41.2 GB on cuda:0, 30.1 GB
 * free; lower --batch or --ctx"); the estimate goes into the --json output. */
#ifndef GRAFT_METHOD_MEM_CHECK_H
#define GRAFT_METHOD_MEM_CHECK_H

#include <cjson/cJSON.h>

#include "memory/estimate.h"
#include "model/model.h"
#include "student/calib_split.h"
#include "student/student.h"

/* Fills the job's shapes once the config is known (j is mem_job_init'ed). */
typedef void (*cli_mem_fill)(mem_job *j, void *ud);

/* Declares the command's job before it loads anything; hint ends the refusal
 * ("lower --batch or --ctx"). fill may be NULL (the parameters only). */
void cli_mem_plan(cli_mem_fill fill, void *ud, const char *hint);
/* Training commands with --recompute auto: when the job does not fit, the
 * check estimates it again with the training run recomputing activations
 * (mem_job.recompute) and, when that fits, sets *flag, says so on stderr and
 * goes on. */
void cli_mem_allow_recompute(bool *flag);
/* model_load_hooks.on_config: estimates (once per command) and checks. */
int cli_mem_on_config(void *ud, const model_config *cfg, gf_backend *be);
/* The estimate and the device's memory as a JSON object (NULL before a check). */
cJSON *cli_mem_json(void);
/* One estimate as JSON: {"bytes", "peak_phase", "parts": {...}}. */
cJSON *cli_mem_estimate_json(const mem_estimate *e);

/* Pieces of a fill. GDN layers' config from a student's settings: */
void cli_mem_gdn(mem_job *j, const student_settings *set);
/* run[slot]: the teacher capture of a split's calibration sequences (capture.c's batch) */
void cli_mem_capture(mem_job *j, int slot, const split_spec *sp);
/* run[slot]: perplexity in windows of ctx tokens over a model with n_gdn GDN layers (eval_nll) */
void cli_mem_eval(mem_job *j, int slot, int ctx, int n_gdn);
/* the build phase: n layers over a split's calibration (and held-out) sequences */
void cli_mem_build(mem_job *j, const split_spec *sp, bool stage2, int n);

/* Human-readable lines of an estimate ("  weights  3.1 GB" ...) on stdout. */
void cli_mem_print(const mem_estimate *e, const char *title);

#endif
