/* The method's building blocks for the workbench's step-by-step screens
 * (Calibrate: Stage 1 a layer at a time; Align: Stage 2 on the converted
 * layers): the teacher capture of a corpus's calibration split, and the
 * build of chosen layers of a student under its settings. The same calls as
 * convert's run (method/convert.h), one layer set at a time. */
#ifndef GRAFT_METHOD_BUILD_LAYERS_H
#define GRAFT_METHOD_BUILD_LAYERS_H

#include "calibrate/capture.h"
#include "method/hooks.h"
#include "student/calib_split.h"
#include "student/student.h"

/* The split of corpus (spec) and the teacher pass over its calibration (with
 * heads) and held-out sequences. 0, or -1 with an error (sp, cal, held freed). */
int method_capture_corpus(const model *m, const char *corpus, const split_spec *spec, token_split *sp,
                          teacher_capture *cal, teacher_capture *held, const method_hooks *h);

/* Builds the layers of s with layers[l] set under s's settings: Stage 1,
 * Stage 2 as the init has them (held may have L = 0). 0, or -1 with an error. */
int method_build_layers(student *s, const bool *layers, const teacher_capture *cal, const teacher_capture *held,
                        const method_hooks *h);

#endif
