/* The Recall view on 7 Results (R): the length x depth map of recall accuracy
 * (graft recall's tasks niah-number, multikey and vt; 2 samples a cell) of the
 * teacher and of the row's student side by side, each cell its accuracy in
 * percent on the palette's scale, and a table per task and length under
 * them. Enter runs the "recall" job on both; Esc closes the view (the job goes
 * on; c stops it). */
#ifndef GRAFT_UI_SCREENS_RECALL_BOX_H
#define GRAFT_UI_SCREENS_RECALL_BOX_H

#include <stdbool.h>

#include "ui.h"

/* Opens the view on row (NULL: the teacher alone). */
void recall_box_open(ui *u, const result_row *row);
void recall_box_draw(ui *u, grid *g, rect r);
bool recall_box_key(ui *u, int k);
const key_hint *recall_box_keys(ui *u, int *n, const char **title);

#endif
