/* Text wrapped into lines of w columns, for text that streams in (the
 * prompt box's continuation): pure, so tests check it directly.
 *
 * A line ends at '\n' (not part of it); within a paragraph a line takes the
 * glyphs that fit, then moves back to its last space when the next glyph is
 * not one (a break at a space drops that space); a run without a space
 * longer than w is cut at w. Columns are the terminal's (wide glyphs 2,
 * marks 0); other control bytes count 1 (drawn as a space), and so do bytes
 * that are not UTF-8 (a sequence cut by the end of the text included). */
#ifndef GRAFT_UI_WIDGETS_WRAP_H
#define GRAFT_UI_WIDGETS_WRAP_H

#include <stddef.h>

typedef struct {
    size_t start, len; /* bytes of the text */
} text_span;

/* The lines text[0..len) takes in w columns (a paragraph, even an empty one,
 * takes at least one); the first max go to out (out may be NULL). */
int wrap_lines(const char *text, size_t len, int w, text_span *out, int max);

/* One line's bytes as the grid may draw them: control bytes become spaces
 * and bytes that are not UTF-8 '?'; at most n - 1 bytes, NUL-terminated. */
void wrap_clean(const char *text, size_t len, char *buf, size_t n);

#endif
