#include "keymap.h"

#include <string.h>

#include "core/error.h"

static const key_action actions[] = {
    {"help", '?'}, {"quit", 'q'},    {"cancel", 'c'}, {"palette", 'p'}, {"metric", 'm'},
    {"metric_prev", 'M'}, {"log_scale", 'l'}, {"compare", 's'}, {"init", 'i'},
};

const key_action *keymap_actions(int *n) {
    *n = (int)(sizeof actions / sizeof actions[0]);
    return actions;
}

void keymap_init(keymap *km) { memset(km, 0, sizeof *km); }

int keymap_bind(keymap *km, const char *action, const char *key) {
    int n;
    const key_action *a = keymap_actions(&n);
    for (int i = 0; i < n; i++) {
        if (strcmp(a[i].action, action)) continue;
        if (!key || strlen(key) != 1 || key[0] <= ' ' || key[0] > '~')
            return gf_fail("key for '%s' must be one printable ASCII character", action);
        if (key[0] >= '1' && key[0] <= '9')
            return gf_fail("key for '%s': 1-9 are the screen keys", action);
        km->to_canonical[(int)key[0]] = a[i].key;
        km->shown[(int)a[i].key] = key[0];
        return 0;
    }
    return gf_fail("unknown key action '%s'", action);
}

int keymap_translate(const keymap *km, int key) {
    if (key > 0 && key < 128 && km->to_canonical[key]) return km->to_canonical[key];
    return key;
}

const char *keymap_show(const keymap *km, const char *label, char buf[2]) {
    if (label && strlen(label) == 1 && (unsigned char)label[0] < 128 && km->shown[(int)label[0]]) {
        buf[0] = km->shown[(int)label[0]];
        buf[1] = 0;
        return buf;
    }
    return label;
}
