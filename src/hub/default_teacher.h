/* Where graft finds its default teacher, karpathy/tinyllamas stories260K. */
#ifndef GRAFT_HUB_DEFAULT_TEACHER_H
#define GRAFT_HUB_DEFAULT_TEACHER_H

/* $GRAFT_TEACHER, else the Hugging Face cache's snapshot of
 * karpathy/tinyllamas:stories260K/stories260K.bin, else the shared copy beside
 * the source tree (../shared/models/...), else the repo id itself (resolved,
 * and downloaded when missing, by whoever loads it). malloc'd. */
char *default_teacher_path(void);

/* A default calibration text: $GRAFT_TEXT, else ../shared/data/tinystories.txt. NULL if none. */
char *default_text_path(void);

#endif
