/* A one-line text entry: the text, a cursor, and the keys that edit them.
 * Key handling and drawing are pure (no curses), so tests drive them directly.
 *
 * Keys (keys.h codes): printable ASCII and UTF-8 bytes (0x80-0xFF, as curses
 * getch delivers them one by one; or a code point below 0x1000) insert at the
 * cursor; Backspace / Ctrl-H delete before it; Left / Right move by a
 * character; Home / Ctrl-A and End / Ctrl-E jump; Ctrl-U deletes from the
 * start to the cursor, Ctrl-K from the cursor to the end, Ctrl-W the word
 * before the cursor; Enter submits, Esc cancels. Text past ENTRY_MAX - 1 bytes
 * is refused whole (never half a character) and `full` says so until the next
 * edit, for the caller to show. Drawing counts terminal columns (wide glyphs 2). */
#ifndef GRAFT_UI_WIDGETS_ENTRY_H
#define GRAFT_UI_WIDGETS_ENTRY_H

#include <stdbool.h>

#include "grid.h"
#include "theme.h"

#define ENTRY_MAX 512 /* bytes, NUL included */

typedef struct {
    char text[ENTRY_MAX];
    int len;    /* bytes */
    int cursor; /* byte offset, on a character boundary (or inside a UTF-8 sequence still being typed) */
    bool full;  /* the last key's text did not fit (the limit is ENTRY_MAX - 1 bytes) */
    int skip;   /* continuation bytes still to drop of a character that did not fit */
} entry;

typedef enum {
    ENTRY_IGNORED, /* not an editing key: the caller may use it */
    ENTRY_EDITED,  /* text or cursor changed (or a key was swallowed) */
    ENTRY_SUBMIT,  /* Enter: read e->text */
    ENTRY_CANCEL,  /* Esc */
} entry_result;

void entry_clear(entry *e);
/* Replaces the text (truncated to fit, on a character boundary); cursor at the end. */
void entry_set(entry *e, const char *text);
entry_result entry_key(entry *e, int key);
/* Draws "prompt" then the text in w columns at (x, y), scrolled so the cursor
 * shows; with focus the cursor cell is drawn in reverse video. */
void entry_draw(grid *g, int x, int y, int w, const char *prompt, const entry *e, bool focus, style s);

#endif
