/* Benchmark: one Stats frame with a 36 x 32 heat map (+ colour bar + histogram)
 * rendered into the grid, and the grid turned into text (no curses).
 * Target: well under 5 ms per frame. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/clock.h"
#include "grid.h"
#include "theme.h"
#include "ui.h"
#include "widgets/charts.h"
#include "widgets/heatmap.h"

static double bench(const char *what, int iters, void (*fn)(void *), void *arg) {
    fn(arg); /* warm up */
    double best = 1e9, total = 0;
    for (int i = 0; i < iters; i++) {
        double t0 = clock_now_s();
        fn(arg);
        double dt = clock_now_s() - t0;
        total += dt;
        if (dt < best) best = dt;
    }
    printf("%-44s mean %8.3f ms   best %8.3f ms   (%d runs)\n", what, 1e3 * total / iters, 1e3 * best, iters);
    return total / iters;
}

typedef struct {
    grid g;
    double *v; /* [36, 32] */
    char *text;
    size_t text_cap;
    theme th;
    ui u;
    ui_prefs prefs;
    app_state st;
} ctx;

static void widgets_frame(void *p) {
    ctx *c = p;
    grid_clear(&c->g);
    heatmap_spec h = {.values = c->v, .rows = 36, .cols = 32, .cell_w = 1, .gap = true,
                      .cursor_row = 17, .cursor_col = 5, .col_title = "head"};
    scale_fit(&h.scale, c->v, 36 * 32, true);
    heatmap_layout l;
    heatmap_draw(&c->g, (rect){0, 2, 80, 20}, &h, &c->th, &l);
    colorbar_draw(&c->g, (rect){0, 22, 60, 1}, &h.scale, &c->th);
    histogram_draw(&c->g, (rect){82, 4, 40, 10}, c->v, 36 * 32, true, &c->th);
    grid_to_text_buf(&c->g, c->text, c->text_cap);
}

static void full_frame(void *p) {
    ctx *c = p;
    ui_render(&c->u, &c->g);
    grid_to_text_buf(&c->g, c->text, c->text_cap);
}

int main(void) {
    ctx c;
    grid_init(&c.g, 200, 60);
    c.v = malloc(36 * 32 * sizeof *c.v);
    unsigned long long s = 1;
    for (int i = 0; i < 36 * 32; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        c.v[i] = exp(10.0 * (double)(s >> 11) / 9007199254740992.0);
    }
    c.v[7] = NAN;
    c.text_cap = 200 * 60 * 4 + 61;
    c.text = malloc(c.text_cap);
    c.th = (theme){true, DEPTH_256, 0};

    app_state_init(&c.st);
    teacher_state *ts = app_teacher(&c.st, "/bench/teacher");
    teacher_state_set_shape(ts, 36, 32);
    app_switch(&c.st, ts);
    int t = teacher_init_index(ts, "teacher");
    double *m = teacher_metric(ts, t, MET_MEAN_DIST);
    for (int i = 0; i < 36 * 32; i++) m[i] = c.v[i];
    ui_prefs_default(&c.prefs);
    ui_init(&c.u, &c.st, NULL, &c.prefs, c.th);

    double a = bench("widgets: 36x32 heat map + bar + histogram", 2000, widgets_frame, &c);
    double b = bench("full Stats frame 200x60 (36x32) + to text", 2000, full_frame, &c);
    grid_resize(&c.g, 80, 24);
    double d = bench("full Stats frame 80x24 (36x32) + to text", 2000, full_frame, &c);
    int ok = a < 5e-3 && b < 5e-3 && d < 5e-3;
    printf("frame budget 5 ms: %s\n", ok ? "met" : "MISSED");
    app_state_free(&c.st);
    grid_free(&c.g);
    free(c.v);
    free(c.text);
    return 0;
}
