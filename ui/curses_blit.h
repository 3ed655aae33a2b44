/* Copies a grid onto the curses screen; the only file that draws with curses. */
#ifndef GRAFT_UI_CURSES_BLIT_H
#define GRAFT_UI_CURSES_BLIT_H

#include <stdbool.h>

#include "grid.h"

/* Draws g into stdscr and calls doupdate once. colors: whether colour pairs are in use. */
void curses_blit(const grid *g, bool colors);

#endif
