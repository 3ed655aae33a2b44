#include "workbench/settings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"

static const settings_info infos[SET_COUNT] = {
    [SET_STAGE2_STEPS] = {"stage2_steps", "Stage 2 steps",
                          "per converted layer: Results Enter, ga-s2 selection, 5 Align (graft convert --steps)"},
    [SET_ABLATE_STEPS] = {"ablate_steps", "ablation Stage 2 steps", "per layer in the ablation table (a on 7 Results)"},
    [SET_ABLATE_MODE] = {"ablation", "ablation compares",
                         "the six inits, or Stage 1 components: all, none, each alone, each left out (--stage1-subsets)"},
    [SET_KEEP_BEST] = {"keep_best", "Stage 2 keeps", "the state with the lowest training or held-out loss (--keep-best)"},
    [SET_EVAL_WINDOWS] = {"eval_windows", "evaluation windows",
                          "windows of 256 tokens in the evaluation slice (--eval-windows)"},
    [SET_RACE_TOKENS] = {"race_tokens", "race tokens per init", "the recovery race's training budget (6 Recover)"},
    [SET_RACE_LR_MIXER] = {"race_lr_mixer", "race lr (mixers)", "learning rate of attention and GDN parameters (--lr-mixer)"},
    [SET_RACE_LR_REST] = {"race_lr_rest", "race lr (rest)", "learning rate of the other parameters (--lr-rest)"},
    [SET_THREADS] = {"threads", "CPU threads", "threads a job uses, 0 = every core (--threads)"},
    [SET_DEVICE] = {"device", "device", "where every job runs (--device); a change reloads the teacher there"},
    [SET_RACE_RECALL] = {"race_recall", "race recall",
                         "recall accuracy at four evaluations of each race run, plotted on 6 Recover (--recall-every)"},
};

/* ---- the devices of this machine, found once ---- */

#define MAX_DEVICES 17
static char dev_names[MAX_DEVICES][16];
static const char *dev_list[MAX_DEVICES];
static int n_devs = -1, dev_override = -1;
static char no_gpu[96];

static void find_devices(void) {
    if (n_devs >= 0) return;
    int gpus = 0;
    no_gpu[0] = 0;
    if (dev_override >= 0) gpus = dev_override;
    else if (be_cuda_device_count(&gpus) != 0) snprintf(no_gpu, sizeof no_gpu, "built without the CUDA backend");
    if (gpus > MAX_DEVICES - 1) gpus = MAX_DEVICES - 1;
    if (gpus == 0 && !no_gpu[0]) snprintf(no_gpu, sizeof no_gpu, "no GPU");
    gf_clear_error();
    snprintf(dev_names[0], sizeof dev_names[0], "cpu");
    for (int i = 0; i < gpus; i++) /* i < MAX_DEVICES: the cast only tells the compiler so */
        snprintf(dev_names[i + 1], sizeof dev_names[0], "cuda:%u", (unsigned)(unsigned char)i);
    for (int i = 0; i <= gpus; i++) dev_list[i] = dev_names[i];
    n_devs = gpus + 1;
}

int settings_devices(const char *const **names) {
    find_devices();
    *names = dev_list;
    return n_devs;
}

const char *settings_no_gpu_reason(void) {
    find_devices();
    return no_gpu;
}

void settings_devices_override(int n_gpus) {
    dev_override = n_gpus;
    n_devs = -1;
}

void settings_default(wb_settings *s) {
    *s = (wb_settings){.stage2_steps = 300, .ablate_steps = 50, .keep_best_heldout = 0, .eval_windows = 32,
                       .race_tokens = 51200, .race_lr_mixer = 1e-3, .race_lr_rest = 1e-4, .threads = 0, .device = "cpu"};
}

const settings_info *settings_get_info(settings_field f) { return &infos[(unsigned)f < SET_COUNT ? f : 0]; }

const char *settings_device_name(const wb_settings *s) { return s->device[0] ? s->device : "cpu"; }

void settings_format(const wb_settings *s, settings_field f, char *buf, size_t n) {
    switch (f) {
    case SET_STAGE2_STEPS: snprintf(buf, n, "%d", s->stage2_steps); break;
    case SET_ABLATE_STEPS: snprintf(buf, n, "%d", s->ablate_steps); break;
    case SET_ABLATE_MODE: snprintf(buf, n, "%s", s->ablate_stage1 ? "Stage 1 components" : "inits"); break;
    case SET_KEEP_BEST: snprintf(buf, n, "%s", s->keep_best_heldout ? "held-out loss" : "training loss"); break;
    case SET_EVAL_WINDOWS: snprintf(buf, n, "%d", s->eval_windows); break;
    case SET_RACE_TOKENS: snprintf(buf, n, "%ld", s->race_tokens); break;
    case SET_RACE_LR_MIXER: snprintf(buf, n, "%g", s->race_lr_mixer); break;
    case SET_RACE_LR_REST: snprintf(buf, n, "%g", s->race_lr_rest); break;
    case SET_THREADS:
        if (s->threads > 0) snprintf(buf, n, "%d", s->threads);
        else snprintf(buf, n, "0 (every core)");
        break;
    case SET_DEVICE: snprintf(buf, n, "%s", settings_device_name(s)); break;
    case SET_RACE_RECALL: snprintf(buf, n, "%s", s->race_recall ? "on" : "off"); break;
    case SET_COUNT: buf[0] = 0; break;
    }
}

static int parse_long(const char *text, long lo, long hi, long *out, const char *label) {
    char *end;
    while (*text == ' ') text++;
    long v = strtol(text, &end, 10);
    while (*end == ' ') end++;
    if (end == text || *end) return gf_fail("%s: '%s' is not a whole number", label, text);
    if (v < lo || v > hi) return gf_fail("%s must be from %ld to %ld, got %ld", label, lo, hi, v);
    *out = v;
    return 0;
}

static int parse_double(const char *text, double lo, double hi, double *out, const char *label) {
    char *end;
    double v = strtod(text, &end);
    while (*end == ' ') end++;
    if (end == text || *end || !isfinite(v)) return gf_fail("%s: '%s' is not a number", label, text);
    if (v < lo || v > hi) return gf_fail("%s must be from %g to %g, got %g", label, lo, hi, v);
    *out = v;
    return 0;
}

int settings_parse(wb_settings *s, settings_field f, const char *text) {
    const char *label = settings_get_info(f)->label;
    long v = 0;
    double d = 0;
    switch (f) {
    case SET_STAGE2_STEPS:
        if (parse_long(text, 0, 100000, &v, label)) return -1;
        s->stage2_steps = (int)v;
        return 0;
    case SET_ABLATE_STEPS:
        if (parse_long(text, 0, 100000, &v, label)) return -1;
        s->ablate_steps = (int)v;
        return 0;
    case SET_ABLATE_MODE:
        if (!strcmp(text, "inits")) s->ablate_stage1 = 0;
        else if (!strncmp(text, "stage1", 6) || !strncmp(text, "Stage 1", 7) || !strcmp(text, "components"))
            s->ablate_stage1 = 1;
        else return gf_fail("%s: 'inits' or 'components', got '%s'", label, text);
        return 0;
    case SET_KEEP_BEST:
        if (!strncmp(text, "train", 5)) s->keep_best_heldout = 0;
        else if (!strncmp(text, "held", 4)) s->keep_best_heldout = 1;
        else return gf_fail("%s: 'train' or 'heldout', got '%s'", label, text);
        return 0;
    case SET_EVAL_WINDOWS:
        if (parse_long(text, 1, 100000, &v, label)) return -1;
        s->eval_windows = (int)v;
        return 0;
    case SET_RACE_TOKENS:
        if (parse_long(text, 512, 1L << 30, &v, label)) return -1;
        s->race_tokens = v;
        return 0;
    case SET_RACE_LR_MIXER:
    case SET_RACE_LR_REST:
        if (parse_double(text, 0, 1, &d, label)) return -1;
        if (f == SET_RACE_LR_MIXER) s->race_lr_mixer = d;
        else s->race_lr_rest = d;
        return 0;
    case SET_THREADS:
        if (parse_long(text, 0, 1024, &v, label)) return -1;
        s->threads = (int)v;
        return 0;
    case SET_DEVICE: {
        const char *const *names;
        const int n = settings_devices(&names);
        const char *want = strcmp(text, "cuda") ? text : "cuda:0";
        for (int i = 0; i < n; i++)
            if (!strcmp(want, names[i])) {
                snprintf(s->device, sizeof s->device, "%s", names[i]);
                return 0;
            }
        if (!strncmp(text, "cuda", 4)) {
            if (n == 1) return gf_fail("device %s: %s here; jobs run on the cpu", text, settings_no_gpu_reason());
            return gf_fail("device %s: no such GPU (%s .. %s found)", text, names[1], names[n - 1]);
        }
        return gf_fail("unknown device '%s' (cpu%s)", text, n > 1 ? " or cuda:N" : "");
    }
    case SET_RACE_RECALL:
        if (!strcmp(text, "on")) s->race_recall = 1;
        else if (!strcmp(text, "off")) s->race_recall = 0;
        else return gf_fail("%s: 'on' or 'off', got '%s'", label, text);
        return 0;
    case SET_COUNT: break;
    }
    return gf_fail("unknown setting");
}

int settings_step(wb_settings *s, settings_field f, int dir) {
    char buf[64];
    switch (f) {
    case SET_STAGE2_STEPS:
    case SET_ABLATE_STEPS:
    case SET_EVAL_WINDOWS:
    case SET_RACE_TOKENS: {
        long v = f == SET_STAGE2_STEPS ? s->stage2_steps : f == SET_ABLATE_STEPS ? s->ablate_steps
                 : f == SET_EVAL_WINDOWS ? s->eval_windows : s->race_tokens;
        v = dir > 0 ? (v > 0 ? v * 2 : 1) : v / 2;
        snprintf(buf, sizeof buf, "%ld", v);
        return settings_parse(s, f, buf);
    }
    case SET_RACE_LR_MIXER:
    case SET_RACE_LR_REST: {
        double v = f == SET_RACE_LR_MIXER ? s->race_lr_mixer : s->race_lr_rest;
        v = dir > 0 ? (v > 0 ? v * 2 : 1e-5) : v / 2;
        snprintf(buf, sizeof buf, "%.3g", v);
        return settings_parse(s, f, buf);
    }
    case SET_KEEP_BEST: s->keep_best_heldout = !s->keep_best_heldout; return 0;
    case SET_ABLATE_MODE: s->ablate_stage1 = !s->ablate_stage1; return 0;
    case SET_RACE_RECALL: s->race_recall = !s->race_recall; return 0;
    case SET_THREADS: {
        int v = s->threads + (dir > 0 ? 1 : -1);
        snprintf(buf, sizeof buf, "%d", v < 0 ? 0 : v);
        return settings_parse(s, f, buf);
    }
    case SET_DEVICE: { /* cycles through the devices found */
        const char *const *names;
        const int n = settings_devices(&names);
        if (n == 1) return gf_fail("device: only the cpu (%s)", settings_no_gpu_reason());
        int i = 0;
        while (i < n && strcmp(names[i], settings_device_name(s))) i++;
        i = ((i < n ? i : 0) + (dir > 0 ? 1 : n - 1)) % n;
        return settings_parse(s, f, names[i]);
    }
    case SET_COUNT: break;
    }
    return gf_fail("unknown setting");
}

cJSON *settings_json(const wb_settings *s) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "stage2_steps", s->stage2_steps);
    cJSON_AddNumberToObject(o, "ablate_steps", s->ablate_steps);
    cJSON_AddStringToObject(o, "ablation", s->ablate_stage1 ? "components" : "inits");
    cJSON_AddStringToObject(o, "keep_best", s->keep_best_heldout ? "heldout" : "train");
    cJSON_AddNumberToObject(o, "eval_windows", s->eval_windows);
    cJSON_AddNumberToObject(o, "race_tokens", (double)s->race_tokens);
    cJSON_AddNumberToObject(o, "race_lr_mixer", s->race_lr_mixer);
    cJSON_AddNumberToObject(o, "race_lr_rest", s->race_lr_rest);
    cJSON_AddNumberToObject(o, "threads", s->threads);
    cJSON_AddStringToObject(o, "device", settings_device_name(s));
    cJSON_AddStringToObject(o, "race_recall", s->race_recall ? "on" : "off");
    return o;
}

int settings_from_json(wb_settings *s, const cJSON *o, const char *path) {
    if (!cJSON_IsObject(o)) return gf_fail("%s: \"settings\" should be an object", path);
    int rc = 0;
    char err[256] = "";
    for (int f = 0; f < SET_COUNT; f++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, infos[f].key);
        if (!v) continue;
        char text[64];
        if (cJSON_IsNumber(v)) snprintf(text, sizeof text, "%.17g", v->valuedouble);
        else if (cJSON_IsString(v)) snprintf(text, sizeof text, "%s", v->valuestring);
        else snprintf(text, sizeof text, "?");
        wb_settings t = *s;
        if (settings_parse(&t, (settings_field)f, text) != 0) {
            if (!err[0]) snprintf(err, sizeof err, "%s: settings: %s", path, gf_last_error());
            rc = -1;
        } else {
            *s = t;
        }
    }
    if (rc) gf_fail("%s", err);
    return rc;
}
