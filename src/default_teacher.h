/* Where graft finds its default teacher, karpathy/tinyllamas stories260K. */
#ifndef GRAFT_DEFAULT_TEACHER_H
#define GRAFT_DEFAULT_TEACHER_H

#define DEFAULT_TEACHER_REPO "karpathy/tinyllamas:stories260K/stories260K.bin"

/* $GRAFT_TEACHER, else the Hugging Face cache's snapshot of the repo, else the
 * shared copy beside the source tree (../shared/models/...). malloc'd path or
 * NULL with an error saying where it looked. */
char *default_teacher_path(void);

/* A default calibration text: $GRAFT_TEXT, else ../shared/data/tinystories.txt. NULL if none. */
char *default_text_path(void);

#endif
