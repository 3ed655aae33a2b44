/* A teacher's Stage 1 options (4 Calibrate, saved with the session): which of
 * Stage 1's four components run (decay, beta, sigma, gate; docs/method.md
 * "Stage 1 components"), whether the decay reads the mean distance without
 * the first key, an optional half-life override, and how sigma is fitted
 * (--sigma-fit: reference, scaled or gated). Every workbench job that
 * builds a student under taylor-only or taylor-calibrate uses the teacher's
 * choice, through the same option path as `graft convert --stage1 ...
 * --distance ... --half-life ... --sigma-fit ...`, and its Results row records it. */
#ifndef GRAFT_WORKBENCH_STAGE1_CHOICE_H
#define GRAFT_WORKBENCH_STAGE1_CHOICE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "method/method_opts.h"
#include "student/student.h"

typedef struct {
    unsigned parts;    /* STAGE1_* bits (student/student.h), default STAGE1_ALL */
    bool no_sink;      /* the decay reads the mean distance without the first key */
    double half_life;  /* > 0: every head's idle half-life in tokens (needs decay); 0: from the distance */
    sigma_fit_mode sigma_fit; /* the value-scale fit (counts only with sigma among the parts), default reference */
} stage1_choice;

void stage1_choice_default(stage1_choice *c);
bool stage1_choice_is_default(const stage1_choice *c);
/* Equal in effect: the distance counts only with the decay from a distance. */
bool stage1_choice_same(const stage1_choice *a, const stage1_choice *b);
/* The distance feeds the decay (decay on, no override). */
bool stage1_choice_uses_distance(const stage1_choice *c);

/* Switches one component (a STAGE1_* bit); switching decay off drops the
 * half-life override (it sets the decay). Returns true when an override was dropped. */
bool stage1_choice_toggle(stage1_choice *c, unsigned part);
/* The next value-scale fit: reference -> scaled -> gated -> reference (--sigma-fit). */
void stage1_choice_next_fit(stage1_choice *c);
/* The half-life override from text: "", "0" or "off" clears it; else a number
 * of tokens in (0, 1e9] (as --half-life). 0, or -1 with a one-line error
 * (no decay among the components, a bad number); c is kept then. */
int stage1_choice_set_half_life(stage1_choice *c, const char *text);

/* "all", "none", "decay", "decay,sigma", "-beta" (all but beta); then
 * " (no-sink)" or " (half-life 32)" when the decay is changed; then
 * ", sigma scaled" or ", sigma gated" for another fit than the reference. */
void stage1_choice_label(const stage1_choice *c, char *buf, size_t n);
/* The command-line options of the choice, each with a leading space, only
 * those that differ from the defaults: " --stage1 decay,sigma --distance
 * no-sink --half-life 32 --sigma-fit gated"; "" for the defaults. */
void stage1_choice_flags(const stage1_choice *c, char *buf, size_t n);

/* The text the command line would have been given (storage for method_cli's strings). */
typedef struct {
    char parts[40], half_life[32];
} stage1_cli_text;
/* Sets mo's --stage1 / --distance / --half-life / --sigma-fit to the choice (text holds the strings). */
void stage1_choice_to_cli(const stage1_choice *c, method_cli *mo, stage1_cli_text *text);

/* {"components": ["decay", ...], "distance": "all" | "no-sink", "half_life": N | null,
 *  "sigma_fit": "scaled" | "gated" (absent: reference)} */
cJSON *stage1_choice_json(const stage1_choice *c);
/* 0, or -1 with a one-line error naming path (c keeps the defaults then). */
int stage1_choice_from_json(stage1_choice *c, const cJSON *o, const char *path);

#endif
