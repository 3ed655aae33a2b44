#include "widgets/entry.h"

#include <stdio.h>
#include <string.h>

#include "keys.h"

enum { CTRL_A = 1, CTRL_E = 5, CTRL_H = 8, CTRL_K = 11, CTRL_U = 21, CTRL_W = 23 };

static bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

void entry_clear(entry *e) {
    e->text[0] = 0;
    e->len = e->cursor = 0;
    e->full = false;
}

void entry_set(entry *e, const char *text) {
    size_t n = strlen(text);
    if (n > ENTRY_MAX - 1) {
        n = ENTRY_MAX - 1;
        while (n > 0 && is_cont((unsigned char)text[n])) n--; /* never cut a character */
    }
    memcpy(e->text, text, n);
    e->text[n] = 0;
    e->len = e->cursor = (int)n;
    e->full = false;
}

static bool insert(entry *e, const char *bytes, int n) {
    if (e->len + n > ENTRY_MAX - 1) {
        e->full = true;
        return false;
    }
    memmove(e->text + e->cursor + n, e->text + e->cursor, (size_t)(e->len - e->cursor) + 1);
    memcpy(e->text + e->cursor, bytes, (size_t)n);
    e->len += n;
    e->cursor += n;
    return true;
}

static void erase(entry *e, int from, int to) {
    memmove(e->text + from, e->text + to, (size_t)(e->len - to) + 1);
    e->len -= to - from;
    e->cursor = from;
}

static int prev_char(const entry *e, int i) {
    if (i <= 0) return 0;
    i--;
    while (i > 0 && is_cont((unsigned char)e->text[i])) i--;
    return i;
}

static int next_char(const entry *e, int i) {
    if (i >= e->len) return e->len;
    i++;
    while (i < e->len && is_cont((unsigned char)e->text[i])) i++;
    return i;
}

/* A code point as UTF-8 (the ones below UK_UP: keys.h codes start there). */
static int encode(int cp, char out[4]) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
}

/* The start of the word before i: spaces first, then the non-spaces before them. */
static int word_start(const entry *e, int i) {
    while (i > 0 && e->text[i - 1] == ' ') i--;
    while (i > 0 && e->text[i - 1] != ' ') i--;
    return i;
}

entry_result entry_key(entry *e, int key) {
    if (key >= 0x80 && key <= 0xBF && e->skip > 0) { /* the rest of a character that did not fit */
        e->skip--;
        return ENTRY_EDITED;
    }
    e->skip = 0;
    if (key != UK_ENTER && key != UK_ESC) e->full = false; /* said for one key; the next insert says it again */
    switch (key) {
    case UK_ENTER: return ENTRY_SUBMIT;
    case UK_ESC: return ENTRY_CANCEL;
    case UK_BACKSPACE:
    case CTRL_H:
        if (e->cursor > 0) erase(e, prev_char(e, e->cursor), e->cursor);
        return ENTRY_EDITED;
    case UK_LEFT: e->cursor = prev_char(e, e->cursor); return ENTRY_EDITED;
    case UK_RIGHT: e->cursor = next_char(e, e->cursor); return ENTRY_EDITED;
    case UK_HOME:
    case CTRL_A: e->cursor = 0; return ENTRY_EDITED;
    case UK_END:
    case CTRL_E: e->cursor = e->len; return ENTRY_EDITED;
    case CTRL_U: erase(e, 0, e->cursor); return ENTRY_EDITED;
    case CTRL_K: erase(e, e->cursor, e->len); return ENTRY_EDITED;
    case CTRL_W: erase(e, word_start(e, e->cursor), e->cursor); return ENTRY_EDITED;
    }
    if (key >= 0x80 && key <= 0xFF) { /* one byte of a UTF-8 sequence, as getch delivers it */
        char b = (char)key;
        /* a lead byte goes in only when its whole character fits: never half a character */
        int need = key >= 0xF0 ? 4 : key >= 0xE0 ? 3 : key >= 0xC0 ? 2 : 1;
        if (need > 1 && e->len + need > ENTRY_MAX - 1) {
            e->full = true;
            e->skip = need - 1;
            return ENTRY_EDITED;
        }
        insert(e, &b, 1);
        return ENTRY_EDITED;
    }
    if ((key >= 0x20 && key < 0x7F) || (key > 0xFF && key < UK_UP)) {
        char buf[4];
        insert(e, buf, encode(key, buf));
        return ENTRY_EDITED;
    }
    /* other control keys do nothing here, but must not reach the frame while typing */
    return key < 0x20 || key == 0x7F ? ENTRY_EDITED : ENTRY_IGNORED;
}

/* Terminal columns of text[from..to) (wide glyphs 2, marks 0). */
static int cols(const char *text, int from, int to) {
    char buf[ENTRY_MAX];
    int n = to - from;
    memcpy(buf, text + from, (size_t)n);
    buf[n] = 0;
    return utf8_width(buf);
}

void entry_draw(grid *g, int x, int y, int w, const char *prompt, const entry *e, bool focus, style s) {
    int pw = prompt ? grid_text(g, x, y, w, prompt, s) : 0;
    x += pw;
    w -= pw;
    if (w <= 0) return;
    /* scroll: keep the cursor on screen, one cell spare for it at the end; start at a whole character */
    int i = 0;
    while (i < e->cursor && cols(e->text, i, e->cursor) >= w) i = next_char(e, i);
    const int cur_col = cols(e->text, i, e->cursor), first = 0;
    const char *ell = g->ellipsis; /* an edited text shows as it is: the cursor cell must stay its character */
    g->ellipsis = NULL;
    grid_text(g, x, y, w, e->text + i, s);
    g->ellipsis = ell;
    if (focus) {
        int cx = x + cur_col - first;
        if (cx >= x + w) cx = x + w - 1;
        cell *c = grid_at(g, cx, y);
        if (c && !c->ch[0]) grid_put(g, cx, y, " ", s);
        grid_add_attr(g, (rect){cx, y, 1, 1}, ATTR_REVERSE);
    }
}
