/* Heat map of a rows x cols matrix (layers x heads).
 *
 * With colours and UTF-8, two matrix rows share a character row through the
 * upper half block (foreground = upper row, background = lower row). Without
 * colours, or in ASCII, each matrix row gets a line: shade glyphs in mono, a
 * coloured blank with colours. NaN means no data and stays blank. */
#ifndef GRAFT_UI_WIDGETS_HEATMAP_H
#define GRAFT_UI_WIDGETS_HEATMAP_H

#include <stdbool.h>

#include "grid.h"
#include "theme.h"
#include "widgets/scale.h"

typedef struct {
    const double *values;   /* [rows, cols] row-major */
    int rows, cols;
    value_scale scale;
    const bool *row_marked; /* [rows] or NULL: marker next to the label (kept attention) */
    const char *col_title;  /* header text left of the column numbers, e.g. "head" */
    int cursor_row, cursor_col; /* -1: no cursor */
    int cell_w;             /* glyphs per column, 1..3 */
    bool gap;               /* one blank column between columns */
    int first_row;          /* scroll position (matrix row), adjusted to show the cursor */
    bool tall;              /* one matrix row per line even with half blocks (room to spare) */
} heatmap_spec;

/* Where things landed, for mouse hits and for the caller's scroll state. */
typedef struct {
    int x_cells, y_cells;   /* top-left of the first cell */
    int pitch;              /* columns per matrix column */
    int cell_w;
    int rows_per_line;      /* 2 with half blocks, else 1 */
    int first_row, n_lines; /* visible matrix rows start at first_row, n_lines character rows */
    int rows, cols;
    int width;              /* total columns used */
} heatmap_layout;

/* Columns needed for a spec (labels + cells), to plan side-by-side layouts. */
int heatmap_width(const heatmap_spec *h);
bool heatmap_uses_half_blocks(const theme *t);
/* Matrix rows per character line for this spec and theme (2 or 1). */
int heatmap_rows_per_line(const heatmap_spec *h, const theme *t);
void heatmap_draw(grid *g, rect r, const heatmap_spec *h, const theme *t, heatmap_layout *out);
/* Matrix cell under screen position (x, y); false when outside the cells.
 * For half-block lines, `half` (0 upper, 1 lower) cannot be known from a click:
 * the upper row is chosen unless the cursor is already in that cell pair. */
bool heatmap_hit(const heatmap_layout *l, int x, int y, int *row, int *col);

#endif
