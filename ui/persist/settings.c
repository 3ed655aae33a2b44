#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "persist/persist.h"
#include "theme.h"

int settings_read(app_state *st, const char *path) {
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
    cJSON_Delete(root);
    return rc;
}

int settings_write(const app_state *st, const char *path) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "palette", palette_name(st->palette));
    cJSON_AddNumberToObject(root, "refresh_hz", st->refresh_hz);
    int rc = json_write_atomic(path, root);
    cJSON_Delete(root);
    return rc;
}

void persist_load_settings(app_state *st) {
    char *path = persist_path("XDG_CONFIG_HOME", ".config", "config.json");
    if (path && settings_read(st, path)) app_state_log(st, "warning: %s; using defaults", gf_last_error());
    free(path);
}

void persist_save_settings(app_state *st) {
    char *path = persist_path("XDG_CONFIG_HOME", ".config", "config.json");
    if (path && settings_write(st, path)) fprintf(stderr, "graft: warning: %s\n", gf_last_error());
    free(path);
}
