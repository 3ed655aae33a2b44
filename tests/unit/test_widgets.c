/* Unit tests: widgets rendered into a text grid (no curses involved). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "theme.h"
#include "widgets/bars.h"
#include "widgets/charts.h"
#include "widgets/heatmap.h"
#include "wb_test_util.h"
#include "demo.h"
#include "keys.h"
#include "ui.h"

#define UPPER "\u2580"
#define LOWER "\u2584"

static const theme utf8_256 = {true, DEPTH_256, 0};
static const theme ascii_mono = {false, DEPTH_MONO, 0};
static const theme utf8_mono = {true, DEPTH_MONO, 0};

static char *row(grid *g, int y) {
    static char buf[1024];
    grid_row_text(g, y, buf, sizeof buf);
    return buf;
}

static void grid_text_and_clip(void **state) {
    (void)state;
    grid g;
    grid_init(&g, 6, 2);
    assert_int_equal(grid_text(&g, 1, 0, 99, "h\u00e9llo world", STYLE_PLAIN), 5);
    assert_string_equal(row(&g, 0), " h\u00e9ll\u2026"); /* cut short: an ellipsis says so */
    assert_int_equal(grid_text(&g, 0, 1, 5, "exact", STYLE_PLAIN), 5);
    assert_string_equal(row(&g, 1), "exact"); /* fits: no ellipsis */
    grid_clear(&g);
    grid_text(&g, 1, 0, 99, "h\u00e9llo", STYLE_PLAIN);
    assert_int_equal(utf8_width("h\u00e9\u2580"), 3);
    grid_put(&g, 9, 9, "x", STYLE_PLAIN); /* outside: ignored */
    size_t len;
    char *txt = grid_to_text(&g, &len);
    assert_string_equal(txt, " h\u00e9llo\n\n");
    free(txt);
    grid_free(&g);
}

/* Widths are terminal columns (utf8proc_charwidth), not code points: CJK and
 * emoji take two cells, combining marks none. */
static void grid_text_columns(void **state) {
    (void)state;
    assert_int_equal(utf8_width("\u4f60\u597d"), 4);           /* two CJK ideographs */
    assert_int_equal(utf8_width("e\u0301"), 1);                /* e + combining acute */
    assert_int_equal(utf8_width("\U0001F600 ok"), 5);          /* an emoji is wide */
    assert_int_equal(utf8_width("\xff"), 1);                     /* an invalid byte shows as one '?' */
    grid g;
    grid_init(&g, 6, 1);
    assert_int_equal(grid_text(&g, 0, 0, 99, "a\u4f60b\u597dc", STYLE_PLAIN), 6);
    /* 'c' would be column 7 of 6: cut short, the ellipsis replaces the wide glyph whole */
    assert_string_equal(row(&g, 0), "a\u4f60b\u2026");
    assert_string_equal(grid_at(&g, 2, 0)->ch, ""); /* the continuation cell of U+4F60 */
    grid_clear(&g);
    assert_int_equal(grid_text(&g, 0, 0, 99, "a\u4f60b\u597d", STYLE_PLAIN), 6); /* fits exactly */
    assert_string_equal(row(&g, 0), "a\u4f60b\u597d");
    grid_clear(&g);
    /* a wide glyph that does not fit whole is not drawn */
    assert_int_equal(grid_text(&g, 0, 0, 4, "abc\u4f60", STYLE_PLAIN), 3);
    assert_string_equal(row(&g, 0), "ab\u2026");
    grid_free(&g);
}

/* 4 layers x 3 heads: two character rows of half blocks. */
static void heatmap_half_blocks(void **state) {
    (void)state;
    double v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    heatmap_spec h = {.values = v, .rows = 4, .cols = 3, .cell_w = 1, .gap = true,
                      .cursor_row = -1, .cursor_col = -1, .col_title = "head"};
    scale_fit(&h.scale, v, 12, false);
    grid g;
    grid_init(&g, 20, 3);
    heatmap_layout l;
    heatmap_draw(&g, (rect){0, 0, 20, 3}, &h, &utf8_256, &l);
    assert_int_equal(l.rows_per_line, 2);
    assert_int_equal(l.n_lines, 2);
    assert_string_equal(row(&g, 0), "head  0 1 2");
    assert_string_equal(row(&g, 1), " 0    " UPPER " " UPPER " " UPPER);
    assert_string_equal(row(&g, 2), " 2    " UPPER " " UPPER " " UPPER);
    /* upper row colour in fg, lower row colour in bg; values increase -> colours follow the ramp */
    cell *c00 = grid_at(&g, l.x_cells, l.y_cells), *c10 = grid_at(&g, l.x_cells, l.y_cells + 1);
    assert_int_equal(c00->fg, theme_scale_color(&utf8_256, 0.0));
    assert_int_equal(c00->bg, theme_scale_color(&utf8_256, 3.0 / 11));
    assert_int_equal(c10->bg, theme_scale_color(&utf8_256, 9.0 / 11));
    assert_int_not_equal(c00->fg, grid_at(&g, l.x_cells + 2 * l.pitch, l.y_cells + 1)->bg);
    /* a click on the cell of layer 2 head 1 */
    int r = -1, c = -1;
    assert_true(heatmap_hit(&l, l.x_cells + l.pitch, l.y_cells + 1, &r, &c));
    assert_int_equal(r, 2);
    assert_int_equal(c, 1);
    assert_true(heatmap_hit(&l, l.x_cells + l.pitch, l.y_cells + 1, &r, &c)); /* again: the lower row */
    assert_int_equal(r, 3);
    assert_false(heatmap_hit(&l, 0, l.y_cells, &r, &c));
    grid_free(&g);
}

static void heatmap_nan_cursor_marker(void **state) {
    (void)state;
    double v[6] = {NAN, 1, 2, 3, NAN, NAN}; /* 3 layers x 2 heads */
    bool kept[3] = {false, true, false};
    heatmap_spec h = {.values = v, .rows = 3, .cols = 2, .cell_w = 2, .gap = true,
                      .cursor_row = 1, .cursor_col = 1, .row_marked = kept};
    scale_fit(&h.scale, v, 6, false);
    grid g;
    grid_init(&g, 16, 3);
    heatmap_layout l;
    heatmap_draw(&g, (rect){0, 0, 16, 3}, &h, &utf8_256, &l);
    /* layer 0 head 0 NaN over layer 1 head 0 -> lower half only; head 1 both present;
     * cursor on layer 1 -> label shows 1, brackets around head 1; marker: lower row kept */
    assert_string_equal(row(&g, 1), " 1 " LOWER "  " LOWER LOWER "[" UPPER UPPER "]");
    /* layer 2 alone on the last line, all NaN -> blank cells */
    assert_string_equal(row(&g, 2), " 2");
    /* the kept marker is a lower half block: only layer 1 of the pair (0, 1) keeps attention */
    assert_string_equal(grid_at(&g, 3, 1)->ch, LOWER);
    grid_free(&g);
}

static void heatmap_ascii_mono_shades(void **state) {
    (void)state;
    double v[4] = {1, 10, 100, NAN};
    heatmap_spec h = {.values = v, .rows = 4, .cols = 1, .cell_w = 3, .gap = false,
                      .cursor_row = -1, .cursor_col = -1};
    scale_fit(&h.scale, v, 4, true); /* log: 1, 10, 100 -> 0, 0.5, 1 */
    assert_true(fabs(scale_unit(&h.scale, 10) - 0.5) < 1e-12);
    assert_true(isnan(scale_unit(&h.scale, -1)));
    grid g;
    grid_init(&g, 10, 5);
    heatmap_layout l;
    heatmap_draw(&g, (rect){0, 0, 10, 5}, &h, &ascii_mono, &l);
    assert_int_equal(l.rows_per_line, 1);
    assert_string_equal(row(&g, 1), " 0    ...");
    assert_string_equal(row(&g, 2), " 1    +++");
    assert_string_equal(row(&g, 3), " 2    @@@");
    assert_string_equal(row(&g, 4), " 3");
    /* UTF-8 mono uses shade blocks, one row per line */
    grid_clear(&g);
    heatmap_draw(&g, (rect){0, 0, 10, 5}, &h, &utf8_mono, &l);
    assert_string_equal(row(&g, 3), " 2    \u2588\u2588\u2588");
    assert_string_equal(row(&g, 1), " 0    \u2591\u2591\u2591");
    grid_free(&g);
}

static void heatmap_scrolls_to_cursor(void **state) {
    (void)state;
    double v[36 * 2];
    for (int i = 0; i < 72; i++) v[i] = i;
    heatmap_spec h = {.values = v, .rows = 36, .cols = 2, .cell_w = 1, .gap = true,
                      .cursor_row = 35, .cursor_col = 0};
    scale_fit(&h.scale, v, 72, false);
    grid g;
    grid_init(&g, 12, 6); /* 5 lines of 2 rows: 10 of 36 rows visible */
    heatmap_layout l;
    heatmap_draw(&g, (rect){0, 0, 12, 6}, &h, &utf8_256, &l);
    assert_int_equal(l.first_row, 26);
    assert_non_null(strstr(row(&g, 5), "35"));
    /* tall: one layer per line with full blocks in the layer's colour */
    h.tall = true;
    grid_clear(&g);
    heatmap_draw(&g, (rect){0, 0, 12, 6}, &h, &utf8_256, &l);
    assert_int_equal(l.rows_per_line, 1);
    assert_int_equal(l.first_row, 31);
    cell *c = grid_at(&g, l.x_cells, l.y_cells);
    assert_string_equal(c->ch, "\u2588");
    assert_int_equal(c->fg, theme_scale_color(&utf8_256, 62.0 / 71));
    grid_free(&g);
}

static void colorbar_legend(void **state) {
    (void)state;
    value_scale s = {0.5, 512, true};
    grid g;
    grid_init(&g, 30, 1);
    colorbar_draw(&g, (rect){0, 0, 30, 1}, &s, &ascii_mono);
    assert_string_equal(row(&g, 0), "0.500 |..:-=++*#%@@| 512 (log)");
    grid_clear(&g);
    colorbar_draw(&g, (rect){0, 0, 30, 1}, &s, &utf8_256);
    char *r = row(&g, 0);
    assert_true(strncmp(r, "0.500 \u2595", strlen("0.500 \u2595")) == 0);
    /* the gradient's background colours follow the palette from low to high */
    assert_int_equal(grid_at(&g, 7, 0)->bg, theme_scale_color(&utf8_256, 0));
    grid_free(&g);
}

static void histogram_bins_and_stats(void **state) {
    (void)state;
    double v[] = {1, 10, 100, 1000, NAN, 1000};
    size_t counts[3];
    histogram_bins(v, 6, true, 1, 1000, 3, counts);
    assert_int_equal(counts[0], 1);
    assert_int_equal(counts[1], 1);
    assert_int_equal(counts[2], 3);
    histogram_bins(v, 6, false, 1, 1000, 3, counts);
    assert_int_equal(counts[0], 3);
    assert_int_equal(counts[2], 2);
    grid g;
    grid_init(&g, 30, 5);
    size_t n = histogram_draw(&g, (rect){0, 0, 30, 5}, v, 6, true, &ascii_mono);
    assert_int_equal(n, 5);
    assert_string_equal(row(&g, 4), "mean 422  median 100  max 1000");
    assert_string_equal(row(&g, 3), "1.00                      1000");
    /* the tallest bin (1000, twice) is full height in the last column */
    assert_string_equal(grid_at(&g, 29, 0)->ch, "#");
    assert_string_equal(grid_at(&g, 0, 0)->ch, " ");
    assert_string_equal(grid_at(&g, 0, 2)->ch, "#");
    grid_free(&g);
}

static void linechart_braille_dots(void **state) {
    (void)state;
    /* y = x over 0..3 on a plot of 2 cells x 1 row of braille (4 x 4 dots): a diagonal */
    double x[] = {0, 1, 2, 3}, y[] = {0, 1, 2, 3};
    chart_series s = {"loss", x, y, 4};
    grid g;
    grid_init(&g, 20, 4); /* legend, 1 plot row, axis, x labels */
    linechart_draw(&g, (rect){0, 0, 20, 4}, &s, 1, "step", DOTS_BRAILLE, &utf8_256);
    assert_non_null(strstr(row(&g, 0), "loss"));
    /* plot starts after the y labels "3.00" and the axis: x = 5; 15 cells wide; W = 30 dots
     * The first cell holds the bottom-left dots; the last the top-right. */
    int lw = 4;
    cell *first = grid_at(&g, lw + 1, 1), *last = grid_at(&g, 19, 1);
    /* bottom-left dot (dot 7 = 0x40) is set in the first cell */
    unsigned char *f = (unsigned char *)first->ch, *la = (unsigned char *)last->ch;
    assert_int_equal(f[0], 0xE2);
    unsigned fb = ((f[1] & 0x3) << 6) | (f[2] & 0x3F);
    unsigned lb = ((la[1] & 0x3) << 6) | (la[2] & 0x3F);
    assert_true(fb & 0x40);
    assert_false(fb & 0x08); /* not the top-right of the first cell */
    assert_true(lb & 0x08);  /* top-right dot (dot 4) in the last cell */
    assert_string_equal(row(&g, 3), "     0     step 3.00");
    /* ASCII: one marker per touched cell */
    grid_clear(&g);
    linechart_draw(&g, (rect){0, 0, 20, 4}, &s, 1, "step", DOTS_ASCII, &ascii_mono);
    assert_string_equal(row(&g, 0), "*** loss");
    assert_string_equal(row(&g, 1), "3.00+***************");
    assert_string_equal(row(&g, 2), "    +---------------");
    grid_free(&g);
}

static void linechart_two_series_ascii(void **state) {
    (void)state;
    double x[] = {0, 10}, y1[] = {1, 1}, y2[] = {0, 0};
    chart_series s[2] = {{"a", x, y1, 2}, {"b", x, y2, 2}};
    grid g;
    grid_init(&g, 20, 6);
    linechart_draw(&g, (rect){0, 0, 20, 6}, s, 2, NULL, DOTS_ASCII, &ascii_mono);
    assert_string_equal(row(&g, 0), "*** a   +++ b");
    assert_string_equal(row(&g, 1), "1.00+***************");
    assert_string_equal(row(&g, 3), "   0++++++++++++++++");
    grid_free(&g);
}

static void linechart_block_fallback(void **state) {
    (void)state;
    /* half-block dots (1x2 per cell): a flat line at the top and one at the bottom */
    double x[] = {0, 1}, hi[] = {1, 1}, lo[] = {0, 0};
    chart_series s[2] = {{"hi", x, hi, 2}, {"lo", x, lo, 2}};
    grid g;
    grid_init(&g, 16, 5); /* 2 plot rows = 4 dot rows */
    linechart_draw(&g, (rect){0, 0, 16, 5}, s, 2, NULL, DOTS_BLOCKS, &utf8_256);
    assert_string_equal(grid_at(&g, 6, 1)->ch, UPPER);
    assert_string_equal(grid_at(&g, 6, 2)->ch, LOWER);
    assert_int_equal(grid_at(&g, 6, 1)->fg, theme_series_color(&utf8_256, 0));
    assert_int_equal(grid_at(&g, 6, 2)->fg, theme_series_color(&utf8_256, 1));
    assert_int_not_equal(grid_at(&g, 6, 1)->fg, grid_at(&g, 6, 2)->fg);
    grid_free(&g);
}

static void hbars_lengths(void **state) {
    (void)state;
    const char *labels[] = {"0", "1", "12"};
    const char *marks[] = {"kept", NULL, NULL};
    double v[] = {1.0, 0.5, 0.0};
    grid g;
    grid_init(&g, 40, 3); /* bar width 40 - 2 - 1 - 8 - 12 = 17 */
    hbars_draw(&g, (rect){0, 0, 40, 3}, labels, v, 3, 0, 1, marks, &ascii_mono);
    assert_string_equal(row(&g, 0), " 0 ################# 1.00 kept");
    assert_string_equal(row(&g, 1), " 1 #########         0.500");
    assert_string_equal(row(&g, 2), "12                   0");
    grid_free(&g);
}

static void tabbar_fits_and_hits(void **state) {
    (void)state;
    const char *names[] = {"1 Teacher", "2 Plan", "3 Stats"};
    grid g;
    grid_init(&g, 40, 1);
    tabbar_hits h;
    tabbar_draw(&g, 0, 40, names, 3, 1, &ascii_mono, &h);
    assert_string_equal(row(&g, 0), "+ 1 Teacher + 2 Plan + 3 Stats +");
    assert_int_equal(tabbar_hit(&h, 14, 0), 1);
    assert_int_equal(tabbar_hit(&h, 3, 0), 0);
    assert_int_equal(tabbar_hit(&h, 3, 1), -1);
    assert_true(grid_at(&g, 14, 0)->attr & ATTR_REVERSE);
    grid_clear(&g);
    tabbar_draw(&g, 0, 24, names, 3, 2, &utf8_256, &h); /* too narrow for the boxed form */
    assert_string_equal(row(&g, 0), "1 Teacher 2 Plan 3 Stats");
    grid_clear(&g);
    tabbar_draw(&g, 0, 14, names, 3, 2, &utf8_256, &h); /* narrower: inactive tabs as numbers */
    assert_string_equal(row(&g, 0), "1 2 3 Stats");
    assert_int_equal(tabbar_hit(&h, 2, 0), 1);
    grid_free(&g);
}

static void keybar_ascii_fallback(void **state) {
    (void)state;
    key_hint k[] = {{"\u2190\u2192", "<>", "tabs"}, {"q", NULL, "quit"}, {"?", NULL, "help"}};
    grid g;
    grid_init(&g, 20, 1);
    keybar_draw(&g, 0, 20, k, 3, &ascii_mono);
    assert_string_equal(row(&g, 0), " <> tabs  q quit");
    grid_clear(&g);
    keybar_draw(&g, 0, 20, k, 3, &utf8_256);
    assert_string_equal(row(&g, 0), " \u2190\u2192 tabs  q quit");
    grid_free(&g);
}

static void palettes_and_numbers(void **state) {
    (void)state;
    assert_int_equal(xterm_nearest(0, 0, 0), 16);
    assert_int_equal(xterm_nearest(255, 255, 255), 231);
    assert_int_equal(xterm_nearest(128, 128, 128), 244);
    theme t = utf8_256;
    for (int p = 0; p < palette_count(); p++) {
        t.palette = p;
        assert_int_not_equal(theme_scale_color(&t, 0), theme_scale_color(&t, 1));
        assert_int_equal(palette_find(palette_name(p)), p);
    }
    t.depth = DEPTH_8;
    assert_true(theme_scale_color(&t, 0.5) < 8);
    assert_int_equal(theme_scale_color(&ascii_mono, 0.5), COLOR_DEFAULT);
    char b[16];
    fmt_num(b, sizeof b, 143.24);
    assert_string_equal(b, "143");
    fmt_num(b, sizeof b, 3.914);
    assert_string_equal(b, "3.91");
    fmt_num(b, sizeof b, 30600);
    assert_string_equal(b, "30600");
    fmt_num(b, sizeof b, 1.5e6);
    assert_string_equal(b, "1.5e+06");
    fmt_num(b, sizeof b, NAN);
    assert_string_equal(b, "-");
}


/* --- the whole frame, headless --- */

static bool grid_contains(grid *g, const char *needle) {
    for (int y = 0; y < g->h; y++)
        if (strstr(row(g, y), needle)) return true;
    return false;
}

static ui_prefs prefs;

static void frame_stats_cursor_and_metric(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    ui_prefs_default(&prefs);
    demo_fill(&st, 28, 12);
    const teacher_state *t = app_cur(&st);
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    grid g;
    grid_init(&g, 100, 30);
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "3 Stats"));
    assert_true(grid_contains(&g, "metric: mean attention distance (tokens)   scale: log"));
    assert_true(grid_contains(&g, "q quit"));
    for (int i = 0; i < 3; i++) ui_key(&u, UK_DOWN);
    ui_key(&u, UK_RIGHT);
    ui_key(&u, UK_RIGHT);
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "layer 3 head 2"));
    /* the panel's d value is the teacher's matrix entry */
    char want[64], num[16];
    fmt_num(num, sizeof num, t->inits[0].m[MET_MEAN_DIST][3 * 12 + 2]);
    snprintf(want, sizeof want, "d         %s", num);
    assert_true(grid_contains(&g, want));
    /* a key map override: x does what m does, and the key bar says so */
    assert_int_equal(keymap_bind(&prefs.keys, "metric", "x"), 0);
    ui_key(&u, 'x');
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "metric: attention entropy (nats)   scale: linear"));
    assert_true(grid_contains(&g, "x metric"));
    ui_key(&u, 'l');
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "attention entropy (nats)   scale: log"));
    /* cursor stays in range */
    for (int i = 0; i < 40; i++) ui_key(&u, UK_DOWN);
    assert_int_equal(u.v.stats.cur_layer, 27);
    /* the legend says which layer each half block shows; the panel too */
    assert_true(grid_contains(&g, "\u2580 top: layer on the left, bottom: the next"));
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "layer 27 head 2 (lower half of row 26)"));
    /* a click on a heat-map cell moves the cursor there */
    heatmap_layout l = u.v.stats.heat[0];
    ui_render(&u, &g);
    l = u.v.stats.heat[0];
    assert_true(ui_click(&u, l.x_cells + 5 * l.pitch, l.y_cells + (l.n_lines - 1)));
    assert_int_equal(u.v.stats.cur_head, 5);
    /* s on a metric only the teacher has: it says so and compares a metric several inits have */
    ui_key(&u, 'm');
    ui_key(&u, 'M');
    assert_int_equal(u.v.stats.metric, MET_ENTROPY);
    ui_key(&u, 's');
    assert_non_null(strstr(u.status, "comparing idle half-life instead"));
    ui_render(&u, &g);
    assert_int_equal(u.v.stats.n_heat, 2);
    assert_true(grid_contains(&g, "random: "));
    assert_true(grid_contains(&g, "taylor-calibrate: "));
    assert_true(grid_contains(&g, "median"));
    /* side by side at 80 and at 100 columns: two maps on one row */
    int widths[2] = {80, 100};
    for (int k = 0; k < 2; k++) {
        grid_resize(&g, widths[k], 30);
        ui_render(&u, &g);
        assert_int_equal(u.v.stats.n_heat, 2);
        assert_int_equal(u.v.stats.heat[0].y_cells, u.v.stats.heat[1].y_cells); /* side by side */
        assert_true(u.v.stats.heat[1].x_cells > u.v.stats.heat[0].x_cells + u.v.stats.heat[0].width - 3);
    }
    /* narrower than two maps: stacked, one under the other */
    grid_resize(&g, 30, 40);
    ui_render(&u, &g);
    assert_int_equal(u.v.stats.n_heat, 2);
    assert_true(u.v.stats.heat[1].y_cells > u.v.stats.heat[0].y_cells);
    assert_int_equal(u.v.stats.heat[1].x_cells, u.v.stats.heat[0].x_cells);
    grid_free(&g);
    app_state_free(&st);
}

/* Stats keys with nothing to act on say why, never do nothing silently. */
static void stats_keys_say_why(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    ui_prefs_default(&prefs);
    teacher_state *t = app_teacher(&st, "/m/t");
    snprintf(t->name, sizeof t->name, "t");
    teacher_state_set_shape(t, 4, 2);
    app_switch(&st, t);
    ui u;
    ui_init(&u, &st, NULL, &prefs, utf8_256);
    const char *keys = "mlsiM";
    for (const char *k = keys; *k; k++) {
        u.status[0] = 0;
        assert_true(ui_key(&u, *k));
        assert_non_null(strstr(u.status, "no statistics for t yet"));
    }
    /* teacher statistics only: i and s point at Stage 1 */
    int te = teacher_init_index(t, "teacher");
    for (int i = 0; i < 8; i++) teacher_metric(t, te, MET_MEAN_DIST)[i] = 1 + i;
    ui_key(&u, 'i');
    assert_non_null(strstr(u.status, "run Stage 1 first"));
    ui_key(&u, 's');
    assert_non_null(strstr(u.status, "run Stage 1 first"));
    assert_false(u.v.stats.side_by_side);
    ui_key(&u, 'm');
    assert_non_null(strstr(u.status, "the only metric so far"));
    ui_key(&u, 'l');
    assert_non_null(strstr(u.status, "linear"));
    app_state_free(&st);
}

static void frame_tabs_help_log_quit(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    ui_prefs_default(&prefs);
    ui u;
    ui_init(&u, &st, NULL, &prefs, ascii_mono);
    grid g;
    grid_init(&g, 80, 24);
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "not available yet: per-head statistics"));
    assert_true(grid_contains(&g, "no teacher loaded"));
    /* ASCII frame: no UTF-8 bytes anywhere */
    for (int y = 0; y < g.h; y++)
        for (const char *p = row(&g, y); *p; p++) assert_true((unsigned char)*p < 0x80);
    ui_key(&u, '8');
    app_state_log(&st, "hello from the log");
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "hello from the log"));
    /* clicking the first tab */
    assert_true(ui_click(&u, u.tabs.x0[0], u.tabs.y));
    assert_int_equal(u.screen, SCR_TEACHER);
    ui_key(&u, UK_TAB);
    assert_int_equal(u.screen, SCR_PLAN);
    ui_key(&u, '?');
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "cancel the running job"));
    ui_key(&u, 'x'); /* any key closes help */
    assert_false(u.help);
    ui_key(&u, 'p');
    assert_int_equal(prefs.palette, 1);
    ui_key(&u, '2');
    ui_key(&u, UK_ENTER); /* nothing wired: a message, no crash */
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "nothing to run here"));
    /* a running job: its line with the whole job's fraction, elapsed time and ETA */
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    assert_true(wbt_start(&st, &jr, "stats", NULL) > 0);
    u.jr = &jr;
    st.job.fraction = 0.5, st.job.eta = 75;
    snprintf(st.job.phase, sizeof st.job.phase, "stats");
    st.job.phase_i = 1, st.job.n_phases = 2;
    st.job.started = 0;
    u.now = 10, u.last_event = 2, u.status[0] = 0;
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "* stats"));
    assert_true(grid_contains(&g, " 50%  stats (2/2)  10s elapsed, eta 1m15s"));
    /* a job that stopped talking is called out, never waited on */
    assert_true(grid_contains(&g, "(no news for 8s)"));
    ui_key(&u, 'q'); /* a job is active: asks first */
    assert_false(u.quit);
    assert_true(u.confirm_quit);
    ui_key(&u, 'n');
    assert_false(u.quit);
    /* c: cancelling, then the job's end on the same line, without a key */
    ui_key(&u, 'c');
    ui_render(&u, &g);
    assert_true(grid_contains(&g, "cancelling"));
    wbt_finish(&st, &jr);
    ui_render(&u, &g);
    assert_false(grid_contains(&g, "cancelling"));
    assert_true(grid_contains(&g, "last job: stats cancelled after"));
    assert_true(grid_contains(&g, "s after c)"));
    job_runner_free(&jr);
    u.jr = NULL;
    ui_key(&u, 'q');
    assert_true(u.quit);
    grid_free(&g);
    app_state_free(&st);
}

/* Every screen at every size from tiny to large, in both glyph sets, with and
 * without help: nothing may write outside the grid (ASan watches in make sanitize)
 * and the key bar stays on the last row once there is room for a frame. */
static void frame_all_sizes(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    ui_prefs_default(&prefs);
    demo_fill(&st, 36, 32);
    const theme *themes[] = {&utf8_256, &ascii_mono};
    grid g;
    grid_init(&g, 1, 1);
    for (int t = 0; t < 2; t++)
        for (int scr = 0; scr < SCR_COUNT; scr++)
            for (int w = 1; w <= 130; w += 13)
                for (int h = 1; h <= 42; h += 5) {
                    ui u;
                    ui_init(&u, &st, NULL, &prefs, *themes[t]);
                    u.screen = scr;
                    u.v.stats.side_by_side = (w + h) % 2;
                    u.v.stats.metric = (w / 13) % MET_COUNT;
                    u.v.stats.cur_layer = 35, u.v.stats.cur_head = 31;
                    u.help = h % 3 == 0;
                    grid_resize(&g, w, h);
                    ui_render(&u, &g);
                    if (w >= 40 && h >= 10 && !u.help) assert_true(grid_contains(&g, "q quit"));
                }
    grid_free(&g);
    app_state_free(&st);
}

static void events_fill_state(void **state) {
    (void)state;
    app_state st;
    app_state_init(&st);
    teacher_state *t = app_teacher(&st, "/m/t");
    teacher_state_set_shape(t, 4, 2);
    app_switch(&st, t);
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    int id = wbt_start(&st, &jr, "stats", t);
    wb_event e = {.kind = WB_HEAD_VALUE};
    snprintf(e.u.head_value.init, sizeof e.u.head_value.init, "taylor-calibrate");
    e.u.head_value.metric = MET_BETA;
    e.u.head_value.layer = 3, e.u.head_value.head = 1, e.u.head_value.value = 0.5;
    assert_true(wbt_apply(&st, id, &e));
    int i = teacher_init_index(t, "taylor-calibrate");
    assert_true(t->inits[i].m[MET_BETA][3 * 2 + 1] == 0.5);
    assert_true(isnan(t->inits[i].m[MET_BETA][0]));
    e.u.head_value.layer = 9; /* out of range: ignored */
    assert_false(wbt_apply(&st, id, &e));
    wb_event p = {.kind = WB_RACE_POINT};
    snprintf(p.u.race_point.init, sizeof p.u.race_point.init, "random");
    p.u.race_point.tokens = 3, p.u.race_point.loss = 0.25;
    assert_true(wbt_apply(&st, id, &p));
    assert_int_equal(t->n_series, 1);
    assert_string_equal(t->series[0].name, "race/random");
    assert_true(t->series[0].y[0] == 0.25);
    /* a payload of the wrong size is refused, not read */
    event bad;
    memset(&bad, 0, sizeof bad);
    bad.kind = EV_DATA, bad.job_id = id, bad.data_len = 3;
    assert_false(app_apply_event(&st, &bad));
    /* an error: the job ends, the log says so with how long it ran */
    event err;
    memset(&err, 0, sizeof err);
    err.kind = EV_ERROR, err.job_id = id, err.t = 1.25;
    strcpy(err.job_name, "stats");
    strcpy(err.text, "boom");
    app_apply_event(&st, &err);
    assert_false(st.job.active);
    assert_string_equal(wb_log_get(&st.log, st.log.n - 1)->text, "stats: error after 1.2 s: boom");
    assert_int_equal(wb_log_get(&st.log, st.log.n - 1)->level, LOG_ERROR);
    assert_int_equal(app_job_find(&st, id)->outcome, JOB_FAILED);
    wbt_finish(&st, &jr); /* the thread still waits: cancel it (its final event finds the record ended) */
    job_runner_free(&jr);
    for (int k = 0; k < WB_LOG_CAP + 5; k++) app_log(&st, LOG_INFO, "line %d", k);
    assert_int_equal(st.log.n, WB_LOG_CAP);
    assert_string_equal(wb_log_get(&st.log, st.log.n - 1)->text, "line 2004");
    /* the filter matches text and time stamps, ignoring case */
    assert_true(wb_log_matches(wb_log_get(&st.log, 0), "LINE 5"));
    assert_false(wb_log_matches(wb_log_get(&st.log, 0), "nothing like it"));
    app_state_free(&st);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grid_text_and_clip),       cmocka_unit_test(grid_text_columns),
        cmocka_unit_test(heatmap_half_blocks),
        cmocka_unit_test(heatmap_nan_cursor_marker), cmocka_unit_test(heatmap_ascii_mono_shades),
        cmocka_unit_test(heatmap_scrolls_to_cursor), cmocka_unit_test(colorbar_legend),
        cmocka_unit_test(histogram_bins_and_stats), cmocka_unit_test(linechart_braille_dots),
        cmocka_unit_test(linechart_two_series_ascii), cmocka_unit_test(hbars_lengths),
        cmocka_unit_test(linechart_block_fallback),
        cmocka_unit_test(tabbar_fits_and_hits),     cmocka_unit_test(keybar_ascii_fallback),
        cmocka_unit_test(palettes_and_numbers),     cmocka_unit_test(frame_stats_cursor_and_metric),
        cmocka_unit_test(frame_tabs_help_log_quit), cmocka_unit_test(events_fill_state),
        cmocka_unit_test(frame_all_sizes),          cmocka_unit_test(stats_keys_say_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
