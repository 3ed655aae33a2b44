/* The seam between training and student folders (engine/student, `graft
 * convert`): load a student folder as a trainable model, and write a trained
 * one back. */
#ifndef GRAFT_METHOD_TRAIN_STUDENT_H
#define GRAFT_METHOD_TRAIN_STUDENT_H

#include <stdbool.h>

#include "align/stage2.h"
#include "method/method_opts.h"
#include "method/train_cli.h"
#include "core/progress.h"

/* 1 when path is a student folder (config.json with "graft_student"). */
bool train_student_is_folder(const char *path);

typedef struct train_student train_student; /* opaque: the loaded student */

/* Loads DIR into s (teacher-format weights + GDN mixers, max sequence ctx).
 * *init_name gets the folder's initialization ("random", "taylor-calibrate", ...). */
int train_student_load(cli_student *s, train_student **handle, const char *dir, const char *tokenizer, int ctx,
                       const char **init_name);
/* -1 with an error when the builder does not know `init`. */
int train_student_init_check(const char *init);
/* Builds a student of teacher m (borrowed; must outlive it) under `init`,
 * calibrated on the file calib, the layers keeping attention chosen by
 * strategy (uniform | ar | ga-s2 | manual:0,3) and keep (ignored by manual)
 * exactly as `graft convert` chooses them; ar / ga-s2 score on text (NULL:
 * the calibration file after its calibration part). *layers gets the
 * converted layers as text ("2,4"). mo: the method options (Stage 1
 * components, ...; NULL: defaults); progress and obs (may be NULL) get the
 * capture and build reports and every Stage 2 step, and progress's cancel
 * flag stops the build. */
int train_student_build(cli_student *s, train_student **handle, model *m, const char *init, const char *strategy,
                        double keep, const char *calib, const char *text, long seed, int ctx, char *layers,
                        size_t layers_size, const method_cli *mo, const progress_sink *progress,
                        const stage2_observer *obs);
/* The settings the student was built or saved with. */
const student_settings *train_student_settings(const train_student *handle);
/* Writes the trained weights of s back into the student and saves it to
 * out_dir; config_extra's members (may be NULL: the request that made it)
 * go into its config.json. */
int train_student_save(const cli_student *s, train_student *handle, const char *out_dir, const cJSON *config_extra);
void train_student_close(train_student *handle);

#endif
