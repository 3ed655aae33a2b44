#define NCURSES_WIDECHAR 1
#include "curses_blit.h"

#include <curses.h>
#include <string.h>
#include <wchar.h>

static attr_t to_attr(uint8_t a) {
    attr_t r = A_NORMAL;
    if (a & ATTR_BOLD) r |= A_BOLD;
    if (a & ATTR_REVERSE) r |= A_REVERSE;
    if (a & ATTR_UNDERLINE) r |= A_UNDERLINE;
    if (a & ATTR_DIM) r |= A_DIM;
    return r;
}

static int pair_for(int fg, int bg) {
    static int last_fg = -2, last_bg = -2, last_pair = 0;
    if (fg == last_fg && bg == last_bg) return last_pair;
    int p = alloc_pair(fg, bg); /* ncurses keeps an LRU table of pairs */
    if (p < 0) p = 0;
    last_fg = fg, last_bg = bg, last_pair = p;
    return p;
}

void curses_blit(const grid *g, bool colors) {
    int rows = g->h < LINES ? g->h : LINES, cols = g->w < COLS ? g->w : COLS;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            const cell *c = &g->cells[y * g->w + x];
            /* the second column of a wide glyph: curses drew it with the glyph */
            if (!c->ch[0] && x > 0 && utf8_width(g->cells[y * g->w + x - 1].ch) == 2) continue;
            wchar_t wc[2] = {L' ', 0};
            mbstate_t ms;
            memset(&ms, 0, sizeof ms);
            size_t n = mbrtowc(&wc[0], c->ch, strlen(c->ch), &ms);
            if (n == (size_t)-1 || n == (size_t)-2 || wc[0] < L' ') wc[0] = L'?';
            cchar_t cc;
            int pair = colors ? pair_for(c->fg, c->bg) : 0;
            setcchar(&cc, wc, to_attr(c->attr), (short)(pair < 32767 ? pair : 0), NULL);
            mvwadd_wch(stdscr, y, x, &cc); /* the bottom-right cell may report an error: harmless */
        }
    wnoutrefresh(stdscr);
    doupdate();
}
