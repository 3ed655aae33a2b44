/* 9 Settings: what jobs run with (src/workbench/settings.h), one line each
 * with its value and what it changes. Up/Down pick, Left/Right halve /
 * double (or cycle), Enter types a value, d restores the default. Saved with
 * the session; every Results row records the values it ran with. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "keys.h"
#include "screens/screens.h"

/* The help of field f (for the device: the devices found here). */
static void field_help(settings_field f, char *help, size_t n) {
    snprintf(help, n, "%s", settings_get_info(f)->help);
    if (f != SET_DEVICE) return;
    const char *const *names;
    const int nd = settings_devices(&names);
    int k = snprintf(help, n, "%s", nd > 1 ? "found:" : "");
    for (int i = 0; i < nd && nd > 1 && k < (int)n; i++) k += snprintf(help + k, n - (size_t)k, " %s", names[i]);
    if (nd == 1) snprintf(help, n, "cpu only here (%s)", settings_no_gpu_reason());
    else if (k < (int)n) snprintf(help + k, n - (size_t)k, "; a change reloads the teacher there");
}

/* The list scrolls when the rows are short (the cursor stays in view); the selected
 * setting's help is whole under it, wrapped, whatever the width. */
static void draw(ui *u, grid *g, rect r) {
    const app_state *st = u->st;
    settings_view *v = &u->v.settings;
    style acc = theme_accent(&u->th), dim = theme_dim(&u->th);
    int x = r.x + 2, w = r.w - 4, y = r.y + 1;
    grid_text(g, x, y++, w, "Run settings (saved with the session; each Results row records its own)", acc);
    y++;
    const int label_w = 26, value_w = 20, detail = 3;
    const bool inline_help = w - label_w - value_w - 2 >= 40; /* else only the selected one's, below */
    int rows = r.y + r.h - y - (detail + 1) - 2; /* the detail lines, the key hint line and their gaps */
    if (rows < 1) rows = 1;
    if (rows > SET_COUNT) rows = SET_COUNT;
    if (v->first > v->cursor) v->first = v->cursor;
    if (v->cursor >= v->first + rows) v->first = v->cursor - rows + 1;
    if (v->first > SET_COUNT - rows) v->first = SET_COUNT - rows;
    if (v->first < 0) v->first = 0;
    v->row_y0 = y, v->rows = rows;
    for (int f = v->first; f < SET_COUNT && f < v->first + rows; f++, y++) {
        const settings_info *in = settings_get_info((settings_field)f);
        char val[64];
        settings_format(&st->settings, (settings_field)f, val, sizeof val);
        bool cur = f == v->cursor;
        grid_printf(g, x, y, label_w, cur ? acc : STYLE_PLAIN, "%s %s", cur ? theme_glyph(&u->th, G_RARROW) : " ",
                    in->label);
        if (cur && v->editing) entry_draw(g, x + label_w, y, value_w, "", &v->edit, true, STYLE_PLAIN);
        else grid_text(g, x + label_w, y, value_w, val, cur ? acc : STYLE_PLAIN);
        if (inline_help) {
            char help[256];
            field_help((settings_field)f, help, sizeof help);
            grid_text(g, x + label_w + value_w + 2, y, w - label_w - value_w - 2, help, dim);
        }
        if (cur) grid_add_attr(g, (rect){x, y, label_w + value_w, 1}, ATTR_REVERSE);
    }
    if (rows < SET_COUNT) { /* where in the list */
        char more[64];
        snprintf(more, sizeof more, "%d-%d of %d%s", v->first + 1, v->first + rows, SET_COUNT,
                 v->first + rows < SET_COUNT ? " (more below)" : "");
        grid_text(g, x + label_w + value_w + 2, r.y + 1 + 2 + rows - 1, w - label_w - value_w - 2, more, acc);
    }
    y = r.y + 3 + rows + 1;
    char help[256];
    field_help((settings_field)v->cursor, help, sizeof help);
    char text[320];
    snprintf(text, sizeof text, "%s: %s", settings_get_info((settings_field)v->cursor)->label, help);
    if (y + detail <= r.y + r.h) draw_wrapped(g, x, y, w, detail, text, dim);
    y += detail + 1;
    if (y < r.y + r.h)
        grid_text(g, x, y, w, "\u2191\u2193 pick   \u2190\u2192 halve / double   Enter type a value   d default",
                  dim);
}

/* A new device: the loaded teacher moves there (every job runs where it lives). */
static void device_changed(ui *u, const char *before) {
    const teacher_state *t = app_cur(u->st);
    if (!strcmp(before, settings_device_name(&u->st->settings)) || !t || !t->loaded) return;
    ui_run_action(u, ACT_LOAD);
}

static bool key(ui *u, int k) {
    settings_view *v = &u->v.settings;
    wb_settings *s = &u->st->settings;
    char before[sizeof s->device];
    snprintf(before, sizeof before, "%s", settings_device_name(s));
    const settings_info *in = settings_get_info((settings_field)v->cursor);
    if (v->editing) {
        entry_result res = entry_key(&v->edit, k);
        if (res == ENTRY_CANCEL) v->editing = u->typing = false;
        if (res == ENTRY_SUBMIT) {
            v->editing = u->typing = false;
            if (settings_parse(s, (settings_field)v->cursor, v->edit.text) != 0) ui_say(u, "%s", gf_last_error());
            else {
                u->st->session_dirty = true; /* saved at once (app.c) */
                char val[64];
                settings_format(s, (settings_field)v->cursor, val, sizeof val);
                ui_say(u, "%s: %s", in->label, val);
                device_changed(u, before);
            }
        }
        return true;
    }
    switch (k) {
    case UK_UP: v->cursor = v->cursor > 0 ? v->cursor - 1 : 0; return true;
    case UK_DOWN: v->cursor = v->cursor + 1 < SET_COUNT ? v->cursor + 1 : SET_COUNT - 1; return true;
    case UK_PGUP:
    case UK_HOME: v->cursor = 0; return true;
    case UK_PGDN:
    case UK_END: v->cursor = SET_COUNT - 1; return true;
    case UK_LEFT:
    case UK_RIGHT:
    case '-':
    case '+': {
        int dir = k == UK_RIGHT || k == '+' ? 1 : -1;
        if (settings_step(s, (settings_field)v->cursor, dir) != 0) {
            ui_say(u, "%s", gf_last_error());
        } else {
            char val[64];
            settings_format(s, (settings_field)v->cursor, val, sizeof val);
            ui_say(u, "%s: %s", in->label, val);
            u->st->session_dirty = true;
            device_changed(u, before);
        }
        return true;
    }
    case UK_ENTER: {
        char val[64];
        settings_format(s, (settings_field)v->cursor, val, sizeof val);
        char *sp = strchr(val, ' '); /* "0 (every core)": the number alone */
        if (sp && v->cursor == SET_THREADS) *sp = 0;
        entry_set(&v->edit, val);
        v->editing = u->typing = true;
        return true;
    }
    case 'd': {
        wb_settings def;
        settings_default(&def);
        char val[64];
        settings_format(&def, (settings_field)v->cursor, val, sizeof val);
        if (v->cursor == SET_KEEP_BEST) snprintf(val, sizeof val, "%s", def.keep_best_heldout ? "heldout" : "train");
        if (v->cursor == SET_THREADS) snprintf(val, sizeof val, "%d", def.threads);
        settings_parse(s, (settings_field)v->cursor, val);
        u->st->session_dirty = true;
        ui_say(u, "%s: back to the default", in->label);
        device_changed(u, before);
        return true;
    }
    }
    return false;
}

static const key_hint keys[] = {
    {"\u2191\u2193", "up/down", "pick"}, {"\u2190\u2192", "left/right", "halve/double"}, {"\u23ce", "Enter", "type"},
    {"d", NULL, "default"}, {"Home/End", NULL, "first/last"},
};

/* A click on a setting picks it. */
static bool click(ui *u, int x, int y) {
    (void)x;
    settings_view *v = &u->v.settings;
    if (v->editing || v->row_y0 <= 0 || y < v->row_y0 || y >= v->row_y0 + v->rows) return false;
    v->cursor = v->first + (y - v->row_y0);
    if (v->cursor >= SET_COUNT) v->cursor = SET_COUNT - 1;
    return true;
}

const screen screen_settings = {"Settings", draw, key, click, keys, sizeof keys / sizeof keys[0], -1};
