#include "method/mem_check.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"

static struct {
    cli_mem_fill fill;
    void *ud;
    const char *hint;
    bool done;            /* estimated and checked (the first model of the command) */
    mem_estimate est;
    char device[128];
    size_t free_bytes, total_bytes, limit;
    bool have_info;
    bool *recompute;      /* cli_mem_allow_recompute's flag, or NULL */
    bool trains, recomputing; /* the job has a training phase; its run recomputes activations */
} S;

void cli_mem_allow_recompute(bool *flag) { S.recompute = flag; }

/* 0 when need fits the device's free memory and GRAFT_MEM_LIMIT; else -1 with the message */
static int fits(size_t need, bool host, const char *dev) {
    return (!host && mem_check(need, S.free_bytes, dev, false) != 0) || (S.limit && mem_check(need, S.limit, dev, true) != 0)
               ? -1
               : 0;
}

void cli_mem_plan(cli_mem_fill fill, void *ud, const char *hint) {
    S.fill = fill;
    S.ud = ud;
    S.hint = hint;
    S.done = false;
}

int cli_mem_on_config(void *ud, const model_config *cfg, gf_backend *be) {
    (void)ud;
    if (S.done) return 0; /* the first model's check covered the command's whole job */
    mem_job j;
    mem_job_init(&j, cfg, be_act(be), !be_is_host(be));
    j.tasks = be_tasks_at_once(be); /* Stage 2's layers at once, each with its arena */
    if (S.fill) S.fill(&j, S.ud);
    if (mem_estimate_job(&S.est, &j) != 0) return -1;
    snprintf(S.device, sizeof S.device, "%s", be_name(be));
    S.have_info = be_mem_info(be, &S.free_bytes, &S.total_bytes) == 0;
    if (mem_limit_from_env(&S.limit) != 0) return -1;
    S.done = true;
    /* "cuda:0 NVIDIA H200 (bf16)" -> "cuda:0" in the message */
    char dev[sizeof S.device];
    memcpy(dev, S.device, sizeof dev);
    dev[strcspn(dev, " ")] = 0;
    const char *hint = S.hint ? S.hint : "";
    char why[512];
    if (!be_is_host(be) && !S.have_info) {
        snprintf(why, sizeof why, "%s", gf_last_error());
        return gf_fail("%s: free memory unknown: %s", dev, why);
    }
    S.trains = j.train_B > 0;
    S.recomputing = j.recompute;
    if (fits(S.est.total, be_is_host(be), dev) == 0) return 0;
    snprintf(why, sizeof why, "%s", gf_last_error()); /* gf_fail writes the buffer it would read */
    char also[96] = "";
    if (S.recompute && S.trains && !j.recompute) { /* --recompute auto: does the job fit with it? */
        mem_estimate with;
        j.recompute = true;
        if (mem_estimate_job(&with, &j) != 0) return -1;
        mem_format(also, sizeof also, with.total);
        snprintf(also + strlen(also), sizeof also - strlen(also), " recomputing activations");
        if (fits(with.total, be_is_host(be), dev) == 0) {
            char a[32], b[32];
            mem_format(a, sizeof a, with.total);
            mem_format(b, sizeof b, S.est.total);
            fprintf(stderr, "graft: recomputing activations in the backward to fit: %s instead of %s on %s\n", a, b, dev);
            S.est = with;
            S.recomputing = *S.recompute = true;
            gf_clear_error();
            return 0;
        }
    }
    return gf_fail("%s%s%s%s%s%s", why, *also ? " (" : "", also, *also ? ")" : "", *hint ? "; " : "", hint);
}

void cli_mem_gdn(mem_job *j, const student_settings *set) {
    gdn_config g;
    if (student_gdn_config(&g, j->cfg, set) == 0) j->gcfg = g; /* else the default; the build reports the error */
    gf_clear_error();
}

void cli_mem_capture(mem_job *j, int slot, const split_spec *sp) {
    int B = 4096 / (sp->ctx > 0 ? sp->ctx : 1);
    if (B < 1) B = 1;
    const int n = sp->n_calib > sp->n_heldout ? sp->n_calib : sp->n_heldout;
    if (B > n) B = n > 0 ? n : 1;
    j->run[slot] = (tf_run_opts){.B = B, .T = sp->ctx, .stats = true, .logit_rows = 1};
    j->run_gdn[slot] = 0;
}

void cli_mem_eval(mem_job *j, int slot, int ctx, int n_gdn) {
    j->run[slot] = (tf_run_opts){.B = 1, .T = ctx};
    j->run_gdn[slot] = n_gdn;
}

void cli_mem_build(mem_job *j, const split_spec *sp, bool stage2, int n) {
    j->build_B = sp->n_calib;
    j->build_T = sp->ctx;
    j->held_B = sp->n_heldout;
    j->held_T = sp->ctx;
    j->stage2 = stage2;
    if (j->tasks > n) j->tasks = n > 0 ? n : 1;
}


cJSON *cli_mem_estimate_json(const mem_estimate *e) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "bytes", (double)e->total);
    cJSON_AddStringToObject(o, "peak_phase", e->peak_phase);
    cJSON *p = cJSON_AddObjectToObject(o, "parts");
    for (int i = 0; i < MEM_PART_COUNT; i++) cJSON_AddNumberToObject(p, mem_part_name((mem_part)i), (double)e->part[i]);
    return o;
}

cJSON *cli_mem_json(void) {
    if (!S.done) return NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "device", S.device);
    cJSON_AddNumberToObject(o, "estimate_bytes", (double)S.est.total);
    cJSON_AddStringToObject(o, "peak_phase", S.est.peak_phase);
    cJSON *p = cJSON_AddObjectToObject(o, "parts");
    for (int i = 0; i < MEM_PART_COUNT; i++) cJSON_AddNumberToObject(p, mem_part_name((mem_part)i), (double)S.est.part[i]);
    if (S.have_info) {
        cJSON_AddNumberToObject(o, "free_bytes", (double)S.free_bytes);
        cJSON_AddNumberToObject(o, "total_bytes", (double)S.total_bytes);
    }
    if (S.limit) cJSON_AddNumberToObject(o, "limit_bytes", (double)S.limit);
    if (S.trains) cJSON_AddBoolToObject(o, "recompute", S.recomputing);
    return o;
}

void cli_mem_print(const mem_estimate *e, const char *title) {
    char b[32];
    mem_format(b, sizeof b, e->total);
    printf("%s %s (peak: %s)\n", title, b, e->peak_phase);
    for (int i = 0; i < MEM_PART_COUNT; i++) {
        if (!e->part[i]) continue;
        mem_format(b, sizeof b, e->part[i]);
        printf("  %-13s %s\n", mem_part_name((mem_part)i), b);
    }
}
