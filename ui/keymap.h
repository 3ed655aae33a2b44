/* Key map overrides from the config file: {"keys": {"metric": "x"}} makes x
 * do what m does. Actions are named; the canonical key stays usable unless
 * another action took it. */
#ifndef GRAFT_UI_KEYMAP_H
#define GRAFT_UI_KEYMAP_H

#include <stdbool.h>

typedef struct {
    char to_canonical[128]; /* user key -> canonical key (0: unchanged) */
    char shown[128];        /* canonical key -> key to show in bars (0: itself) */
} keymap;

typedef struct {
    const char *action;
    char key;
} key_action;

/* Every action that can be rebound, with its canonical key. */
const key_action *keymap_actions(int *n);
void keymap_init(keymap *km);
/* 0, or -1 with a one-line error (unknown action, not one printable ASCII character). */
int keymap_bind(keymap *km, const char *action, const char *key);
int keymap_translate(const keymap *km, int key);
/* The key to show for a canonical key label ("m" -> "x"); returns label when unchanged. */
const char *keymap_show(const keymap *km, const char *label, char buf[2]);

#endif
