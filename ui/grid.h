/* A text grid: what a frame looks like, independent of curses.
 *
 * Widgets render into a grid; ui/curses_blit.c copies a grid to the
 * terminal, grid_to_text() turns it into plain text (tests, snapshots).
 * A glyph occupies the columns a terminal gives it (utf8proc_charwidth): a
 * wide glyph (CJK, fullwidth) takes its cell and the next, which is left
 * empty ("", a continuation cell that renderers skip). */
#ifndef GRAFT_UI_GRID_H
#define GRAFT_UI_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COLOR_DEFAULT (-1) /* the terminal's own foreground / background */

enum { ATTR_BOLD = 1, ATTR_REVERSE = 2, ATTR_UNDERLINE = 4, ATTR_DIM = 8 };

typedef struct {
    char ch[5];   /* one UTF-8 encoded glyph, NUL-terminated; "" continues the wide glyph on its left */
    int16_t fg;   /* xterm colour index 0..255, or COLOR_DEFAULT */
    int16_t bg;
    uint8_t attr; /* ATTR_* bits */
} cell;

typedef struct {
    int w, h;
    cell *cells; /* [h, w] */
    const char *ellipsis; /* the glyph that ends text cut short ("…", or "~" in ASCII) */
} grid;

typedef struct {
    int x, y, w, h;
} rect;

typedef struct {
    int16_t fg, bg;
    uint8_t attr;
} style;

#define STYLE_PLAIN ((style){COLOR_DEFAULT, COLOR_DEFAULT, 0})

void grid_init(grid *g, int w, int h);
void grid_resize(grid *g, int w, int h); /* clears */
void grid_free(grid *g);
void grid_clear(grid *g);

cell *grid_at(grid *g, int x, int y); /* NULL outside */
/* Sets one cell (clipped). glyph: one UTF-8 glyph. */
void grid_put(grid *g, int x, int y, const char *glyph, style s);
/* Writes UTF-8 text from (x, y), each glyph in the columns it occupies on a
 * terminal (zero-width marks are left out), stopping at max_w columns (and
 * the grid edge); text cut short ends in g->ellipsis. Returns the columns
 * written. */
int grid_text(grid *g, int x, int y, int max_w, const char *utf8, style s);
/* Marks (x, y) as the second column of the wide glyph at (x - 1, y). */
void grid_put_continuation(grid *g, int x, int y, style s);
int grid_printf(grid *g, int x, int y, int max_w, style s, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void grid_fill(grid *g, rect r, const char *glyph, style s);
/* Overlays attribute bits on a rectangle (cursor highlights). */
void grid_add_attr(grid *g, rect r, uint8_t attr);

/* Row y as UTF-8 text with trailing spaces removed; returns its length. */
size_t grid_row_text(const grid *g, int y, char *buf, size_t n);
/* The whole grid, rows joined by '\n'; *len_out gets the length. Caller frees. */
char *grid_to_text(const grid *g, size_t *len_out);
/* Same into a caller buffer (no allocation; for the frame benchmark). Returns length. */
size_t grid_to_text_buf(const grid *g, char *buf, size_t n);

/* Terminal columns a UTF-8 string occupies (wide glyphs 2, marks 0). */
int utf8_width(const char *s);
/* Length in bytes of the UTF-8 sequence starting at s (1 for invalid bytes). */
int utf8_seq_len(const char *s);

#endif
