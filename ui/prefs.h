/* How the workbench looks and which keys it takes: the user's preferences,
 * saved in $XDG_CONFIG_HOME/graft/config.json (ui/persist/settings.c). What
 * jobs run with is elsewhere: the run settings of the session
 * (src/workbench/settings.h, the Settings screen). */
#ifndef GRAFT_UI_PREFS_H
#define GRAFT_UI_PREFS_H

#include "keymap.h"

typedef struct {
    int palette;    /* index into the palette table */
    int refresh_hz; /* at most this many frames a second (1..30) */
    keymap keys;    /* overrides from config.json "keys" */
} ui_prefs;

static inline void ui_prefs_default(ui_prefs *p) {
    p->palette = 0;
    p->refresh_hz = 30;
    keymap_init(&p->keys);
}

#endif
