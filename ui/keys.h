/* Key codes the screens see: printable ASCII as itself, the rest below.
 * The curses loop (ui/app.c) translates curses codes into these, so screen
 * logic is testable without a terminal. */
#ifndef GRAFT_UI_KEYS_H
#define GRAFT_UI_KEYS_H

enum {
    UK_UP = 0x1000, UK_DOWN, UK_LEFT, UK_RIGHT, UK_TAB, UK_BTAB, UK_ENTER, UK_ESC,
    UK_PGUP, UK_PGDN, UK_HOME, UK_END, UK_F1, UK_BACKSPACE, UK_F10,
};

#endif
