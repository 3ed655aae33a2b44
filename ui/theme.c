#include "theme.h"

#include <langinfo.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *glyphs[G_COUNT][2] = {
    [G_UPPER_HALF] = {"\u2580", "#"}, [G_LOWER_HALF] = {"\u2584", "#"},
    [G_FULL] = {"\u2588", "#"},       [G_HLINE] = {"\u2500", "-"},
    [G_VLINE] = {"\u2502", "|"},      [G_TL] = {"\u250c", "+"},
    [G_TR] = {"\u2510", "+"},         [G_BL] = {"\u2514", "+"},
    [G_BR] = {"\u2518", "+"},         [G_TEE_DOWN] = {"\u252c", "+"},
    [G_TEE_UP] = {"\u2534", "+"},     [G_TEE_LEFT] = {"\u2524", "+"},
    [G_BAR_LEFT] = {"\u2595", "|"},   [G_BAR_RIGHT] = {"\u258f", "|"},
    [G_ARROW_LR] = {"\u2190\u2192", "<>"}, [G_ARROW_UD] = {"\u2191\u2193", "^v"},
    [G_ARROW_ALL] = {"\u2191\u2193\u2190\u2192", "arrows"}, [G_ENTER] = {"\u23ce", "Enter"},
    [G_BULLET] = {"\u25cf", "*"},     [G_KEPT] = {"\u25a0", "*"},
    [G_REPLACED] = {"\u25a1", "o"},   [G_ELLIPSIS] = {"\u2026", "~"},
    [G_MIDDOT] = {"\u00b7", "-"},     [G_RARROW] = {"\u2192", "->"},
    [G_SORT_UP] = {"\u25b2", "^"},    [G_SORT_DOWN] = {"\u25bc", "v"},
};

void theme_detect(theme *t, int n_colors) {
    const char *cs = nl_langinfo(CODESET);
    t->utf8 = cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
    const char *nc = getenv("NO_COLOR");
    if ((nc && nc[0]) || n_colors < 8) t->depth = DEPTH_MONO;
    else if (n_colors >= 256) t->depth = DEPTH_256;
    else t->depth = DEPTH_8;
    if (t->palette < 0 || t->palette >= palette_count()) t->palette = 0;
}

const char *theme_glyph(const theme *t, glyph_id g) { return glyphs[g][t->utf8 ? 0 : 1]; }

static int level(double u, int n) {
    if (!(u >= 0)) u = 0; /* NaN too */
    if (u > 1) u = 1;
    int k = (int)(u * n);
    return k >= n ? n - 1 : k;
}

const char *theme_shade(const theme *t, double u) {
    static const char *utf[] = {"\u2591", "\u2592", "\u2593", "\u2588"};
    static const char *asc[] = {".", ":", "-", "=", "+", "*", "#", "%", "@"};
    return t->utf8 ? utf[level(u, 4)] : asc[level(u, 9)];
}

const char *theme_hbar_eighth(const theme *t, int n) {
    static const char *e[] = {" ", "\u258f", "\u258e", "\u258d", "\u258c",
                              "\u258b", "\u258a", "\u2589", "\u2588"};
    if (n < 0) n = 0;
    if (n > 8) n = 8;
    if (!t->utf8) return n >= 4 ? "#" : n > 0 ? "|" : " ";
    return e[n];
}

const char *theme_vbar_eighth(const theme *t, int n) {
    static const char *e[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
                              "\u2585", "\u2586", "\u2587", "\u2588"};
    if (n < 0) n = 0;
    if (n > 8) n = 8;
    if (!t->utf8) return n >= 4 ? "#" : n > 0 ? "_" : " ";
    return e[n];
}

/* --- palettes: RGB anchors, sampled into a 64-step xterm-256 gradient table --- */

typedef struct {
    const char *name;
    int n;
    unsigned char rgb[9][3];
} palette_def;

static const palette_def palettes[] = {
    /* perceptually uniform, colour-blind safe, dark background */
    {"viridis", 9, {{68, 1, 84}, {71, 44, 122}, {59, 81, 139}, {44, 113, 142}, {33, 144, 141},
                    {39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37}}},
    {"magma", 9, {{0, 0, 4}, {28, 16, 68}, {79, 18, 123}, {129, 37, 129}, {181, 54, 122},
                  {229, 80, 100}, {251, 135, 97}, {254, 194, 135}, {252, 253, 191}}},
    /* for light terminals: pale (low) to dark brown (high), ColorBrewer YlOrBr */
    {"light", 8, {{255, 247, 188}, {254, 227, 145}, {254, 196, 79}, {254, 153, 41},
                  {236, 112, 20}, {204, 76, 2}, {153, 52, 4}, {102, 37, 6}}},
    {"gray", 2, {{40, 40, 40}, {238, 238, 238}}},
};
#define N_PALETTES ((int)(sizeof palettes / sizeof palettes[0]))
#define RAMP 64
static int16_t ramps[N_PALETTES][RAMP];
static bool ramps_ready;

int palette_count(void) { return N_PALETTES; }
const char *palette_name(int i) { return i >= 0 && i < N_PALETTES ? palettes[i].name : "?"; }
int palette_find(const char *name) {
    for (int i = 0; name && i < N_PALETTES; i++)
        if (!strcmp(name, palettes[i].name)) return i;
    return -1;
}

static const int cube_levels[6] = {0, 95, 135, 175, 215, 255};

static int dist2(int r, int g, int b, int r2, int g2, int b2) {
    return (r - r2) * (r - r2) + (g - g2) * (g - g2) + (b - b2) * (b - b2);
}

int xterm_nearest(int r, int g, int b) {
    int best = 16, bd = 1 << 30;
    for (int i = 0; i < 216; i++) {
        int d = dist2(r, g, b, cube_levels[i / 36], cube_levels[i / 6 % 6], cube_levels[i % 6]);
        if (d < bd) bd = d, best = 16 + i;
    }
    for (int i = 0; i < 24; i++) {
        int v = 8 + 10 * i, d = dist2(r, g, b, v, v, v);
        if (d < bd) bd = d, best = 232 + i;
    }
    return best;
}

static void build_ramps(void) {
    for (int p = 0; p < N_PALETTES; p++) {
        const palette_def *d = &palettes[p];
        for (int i = 0; i < RAMP; i++) {
            double u = (double)i / (RAMP - 1) * (d->n - 1);
            int k = (int)u;
            if (k >= d->n - 1) k = d->n - 2;
            double f = u - k;
            int c[3];
            for (int j = 0; j < 3; j++) c[j] = (int)lround(d->rgb[k][j] * (1 - f) + d->rgb[k + 1][j] * f);
            ramps[p][i] = (int16_t)xterm_nearest(c[0], c[1], c[2]);
        }
    }
    ramps_ready = true;
}

int16_t theme_scale_color(const theme *t, double u) {
    if (t->depth == DEPTH_MONO) return COLOR_DEFAULT;
    if (t->depth == DEPTH_8) {
        static const int16_t eight[] = {4, 6, 2, 3, 7}; /* blue cyan green yellow white */
        return eight[level(u, 5)];
    }
    if (!ramps_ready) build_ramps();
    int p = t->palette >= 0 && t->palette < N_PALETTES ? t->palette : 0;
    return ramps[p][level(u, RAMP)];
}

int16_t theme_series_color(const theme *t, int k) {
    if (t->depth == DEPTH_MONO) return COLOR_DEFAULT;
    static const int16_t okabe_ito[] = {214, 117, 36, 227, 32, 166, 175}; /* xterm approximations */
    static const int16_t eight[] = {3, 6, 2, 5, 4, 1, 7};
    return t->depth == DEPTH_256 ? okabe_ito[k % 7] : eight[k % 7];
}

const char *theme_series_marker(int k) {
    static const char *m[] = {"*", "+", "o", "x", "#", "%", "@"};
    return m[k % 7];
}

style theme_accent(const theme *t) {
    if (t->depth == DEPTH_MONO) return (style){COLOR_DEFAULT, COLOR_DEFAULT, ATTR_BOLD};
    return (style){(int16_t)(t->depth == DEPTH_256 ? 81 : 6), COLOR_DEFAULT, ATTR_BOLD};
}

style theme_dim(const theme *t) {
    if (t->depth == DEPTH_256) return (style){245, COLOR_DEFAULT, 0};
    return (style){COLOR_DEFAULT, COLOR_DEFAULT, ATTR_DIM};
}
