/* The prompt box on 7 Results (g): a one-line prompt (the entry widget), and
 * Enter runs a "generate" job on the selected row's student folder or on the
 * teacher (the same call as `graft generate`); the continuation streams in
 * under it with its speed and the KV-cache bytes per token of the model and
 * of its teacher. While the job runs the box lets go of the keyboard so that
 * c cancels it; it takes it back when the job ends. Esc closes it. */
#ifndef GRAFT_UI_SCREENS_PROMPT_BOX_H
#define GRAFT_UI_SCREENS_PROMPT_BOX_H

#include <stdbool.h>

#include "ui.h"

/* Opens the box on row (NULL: the teacher); its prompt and settings stay from the last time. */
void prompt_box_open(ui *u, const result_row *row);
void prompt_box_draw(ui *u, grid *g, rect r);
/* Every key while the box is open (true: handled; false: the frame's, e.g. c while it generates). */
bool prompt_box_key(ui *u, int k);
const key_hint *prompt_box_keys(ui *u, int *n, const char **title);

/* "student uniform 60% t-calib" / "ablate row uniform 25% random": what a row's model is called in the box. */
void prompt_box_row_label(const result_row *row, char *buf, size_t n);

#endif
