/* Building a student's GDN layers under its initialization (METHOD.md
 * section 7): default init, then the gate edits (zero-gate, small-gate),
 * Stage 1 (taylor-only, taylor-calibrate) and Stage 2 (align-only,
 * taylor-calibrate). Stage 2 runs the layers as independent tasks
 * (be_run_tasks: on CPU threads over layers, each layer single-threaded). */
#ifndef GRAFT_CONVERT_BUILD_H
#define GRAFT_CONVERT_BUILD_H

#include "align/stage2.h"
#include "calibrate/capture.h"
#include "student/student.h"

/* Computes parameters and reports for every layer with layers[l] set (and
 * marks them in s->have). cal must hold per-head outputs when Stage 1 runs;
 * held (may be NULL) gives the held-out alignment curve and, with keep_best =
 * heldout, picks the kept state. */
int student_build_layers(student *s, const bool *layers, const teacher_capture *cal, const teacher_capture *held,
                         const progress_sink *progress);
/* The same, with a Stage 2 per-step observer (may be NULL). */
int student_build_layers_observed(student *s, const bool *layers, const teacher_capture *cal,
                                  const teacher_capture *held, const progress_sink *progress,
                                  const stage2_observer *obs);

#endif
