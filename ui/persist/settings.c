#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "persist/persist.h"
#include "workbench/json_file.h"
#include "theme.h"

int settings_read(ui_prefs *st, const char *path) {
    bool missing;
    cJSON *root = json_read_file(path, &missing);
    if (!root) return missing ? 0 : -1;
    int rc = 0;
    const cJSON *pal = cJSON_GetObjectItemCaseSensitive(root, "palette");
    if (pal) {
        int p = cJSON_IsString(pal) ? palette_find(pal->valuestring) : -1;
        if (p < 0) rc = gf_fail("%s: unknown palette (known: viridis, magma, light, gray)", path);
        else st->palette = p;
    }
    const cJSON *hz = cJSON_GetObjectItemCaseSensitive(root, "refresh_hz");
    if (hz) {
        if (!cJSON_IsNumber(hz) || hz->valuedouble < 1 || hz->valuedouble > 30)
            rc = gf_fail("%s: refresh_hz must be a number from 1 to 30", path);
        else st->refresh_hz = (int)hz->valuedouble;
    }
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(root, "keys");
    if (keys) {
        const cJSON *k;
        if (!cJSON_IsObject(keys)) rc = gf_fail("%s: \"keys\" must be an object", path);
        else
            cJSON_ArrayForEach(k, keys) {
                if (keymap_bind(&st->keys, k->string, cJSON_IsString(k) ? k->valuestring : NULL)) {
                    rc = gf_fail_prefix(path);
                }
            }
    }
    cJSON_Delete(root);
    return rc;
}

int settings_write(const ui_prefs *st, const char *path) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "palette", palette_name(st->palette));
    cJSON_AddNumberToObject(root, "refresh_hz", st->refresh_hz);
    int n;
    const key_action *a = keymap_actions(&n);
    cJSON *keys = NULL;
    for (int i = 0; i < n; i++) {
        char shown = st->keys.shown[(int)a[i].key];
        if (!shown) continue;
        if (!keys) keys = cJSON_AddObjectToObject(root, "keys");
        char k[2] = {shown, 0};
        cJSON_AddStringToObject(keys, a[i].action, k);
    }
    int rc = json_write_atomic(path, root);
    cJSON_Delete(root);
    return rc;
}

void persist_load_settings(ui_prefs *p, app_state *st) {
    char *path = persist_path("XDG_CONFIG_HOME", ".config", "config.json");
    if (path && settings_read(p, path)) app_log(st, LOG_WARN, "warning: %s; using defaults", gf_last_error());
    free(path);
}

void persist_save_settings(const ui_prefs *p) {
    char *path = persist_path("XDG_CONFIG_HOME", ".config", "config.json");
    if (path && settings_write(p, path)) fprintf(stderr, "graft: warning: %s\n", gf_last_error());
    free(path);
}
