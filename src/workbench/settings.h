/* The workbench's run settings (the Settings screen, saved in the session):
 * how many Stage 2 steps a built student gets, which Stage 2 state is kept,
 * how long the evaluation slice is, the race's budget and learning rates,
 * CPU threads and the device. Each job copies what it needs when it starts;
 * every Results row records the settings it was made with. */
#ifndef GRAFT_WORKBENCH_SETTINGS_H
#define GRAFT_WORKBENCH_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct {
    int stage2_steps;     /* Stage 2 steps per layer: Results' Enter, ga-s2 selection, 5 Align (300) */
    int ablate_steps;     /* Stage 2 steps per layer of the ablation table's students (50) */
    int ablate_stage1;    /* 0: the ablation compares the six inits; 1: Stage 1's component sets (--stage1-subsets) */
    int keep_best_heldout; /* 0: keep the lowest training loss (the CLI's default), 1: the lowest held-out loss */
    int eval_windows;     /* evaluation slice: windows of 256 tokens (32) */
    long race_tokens;     /* recovery race budget per init (51200) */
    double race_lr_mixer; /* race learning rate of attention / GDN parameters (1e-3) */
    double race_lr_rest;  /* race learning rate of the other parameters (1e-4) */
    int threads;          /* CPU threads for jobs, 0 = every core */
    char device[16];      /* where jobs run: "cpu" or "cuda:N", one of settings_devices() */
    int race_recall;      /* 1: the race measures recall at four evaluations per run (6 Recover), 0: not */
} wb_settings;

typedef enum {
    SET_STAGE2_STEPS, SET_ABLATE_STEPS, SET_ABLATE_MODE, SET_KEEP_BEST, SET_EVAL_WINDOWS, SET_RACE_TOKENS,
    SET_RACE_LR_MIXER, SET_RACE_LR_REST, SET_THREADS, SET_DEVICE, SET_RACE_RECALL, SET_COUNT
} settings_field;

typedef struct {
    const char *key;   /* JSON key in the session: "stage2_steps" */
    const char *label; /* "Stage 2 steps" */
    const char *help;  /* one line: what it changes */
} settings_info;

void settings_default(wb_settings *s);
const settings_info *settings_get_info(settings_field f);
/* The value as text ("300", "held-out", "1e-3", "all cores"). */
void settings_format(const wb_settings *s, settings_field f, char *buf, size_t n);
/* Sets a field from text. 0, or -1 with a one-line error (the value is kept). */
int settings_parse(wb_settings *s, settings_field f, const char *text);
/* Left / right on the Settings screen: halves / doubles numbers, cycles choices. 0 or -1 with why not. */
int settings_step(wb_settings *s, settings_field f, int dir);
/* Where jobs run: "cpu" or "cuda:N". */
const char *settings_device_name(const wb_settings *s);
/* The devices found when first asked: "cpu", then "cuda:0" .. "cuda:N-1" for
 * every GPU the CUDA backend sees (be_cuda_device_count). Returns how many. */
int settings_devices(const char *const **names);
/* Why no GPU is listed ("no GPU", "built without the CUDA backend"); "" when one is. */
const char *settings_no_gpu_reason(void);
/* Tests: lists n_gpus GPUs as if the CUDA backend had found them (-1: ask it again). */
void settings_devices_override(int n_gpus);

cJSON *settings_json(const wb_settings *s);
/* Reads the known keys; a bad value keeps the default and returns -1 with an error naming it. */
int settings_from_json(wb_settings *s, const cJSON *o, const char *path);

#endif
