#include "screens/halflife_panel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "theme.h"
#include "widgets/scale.h"

int halflife_hist_col(double tokens) {
    if (!(tokens > 0) || !isfinite(tokens)) return -1;
    const double w = (HL_HIST_LOG10_MAX - HL_HIST_LOG10_MIN) / HL_HIST_BINS;
    int b = (int)floor((log10(tokens) - HL_HIST_LOG10_MIN) / w);
    return b < 0 ? 0 : b >= HL_HIST_BINS ? HL_HIST_BINS - 1 : b;
}

/* The bar of a bin at one row of h rows (row 0 at the top): full, partial (eighths) or empty. */
static const char *bar_cell(const theme *th, long count, long max, int row, int h) {
    static const char *const eighths[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
    const double level = max > 0 ? (double)count / (double)max * h : 0; /* in rows */
    const double below = h - 1 - row;                                   /* rows under this one */
    double fill = level - below;
    if (fill <= 0) return count > 0 && row == h - 1 ? (th->utf8 ? eighths[1] : ".") : " ";
    if (fill >= 1) return th->utf8 ? eighths[8] : "#";
    return th->utf8 ? eighths[(int)(fill * 8) > 0 ? (int)(fill * 8) : 1] : "#";
}

int halflife_hist_draw(ui *u, grid *g, rect r, const halflife_view *v, int layer, int head) {
    const halflife_head *h = halflife_view_head(v, layer, head);
    if (r.h < 1) return 0;
    if (!h) {
        grid_printf(g, r.x, r.y, r.w, theme_dim(&u->th), "layer %d head %d: not a GDN head of %s", layer, head, v->ran.init);
        return 1;
    }
    char title[96];
    snprintf(title, sizeof title, "half-life over %ld tokens (%s)", v->r.tokens, v->ran.init);
    return halflife_head_hist_draw(u, g, r, h, title);
}

int halflife_head_hist_draw(ui *u, grid *g, rect r, const halflife_head *h, const char *title) {
    style dim = theme_dim(&u->th), acc = theme_accent(&u->th);
    if (r.h < 1) return 0;
    int y = r.y;
    grid_text(g, r.x, y++, r.w, title, acc);
    long max = 0;
    for (int b = 0; b < HL_HIST_BINS; b++) max = h->hist[b] > max ? h->hist[b] : max;
    const int bars = r.h - 5 >= 6 ? 6 : r.h - 5;
    for (int row = 0; row < bars; row++, y++)
        for (int b = 0; b < HL_HIST_BINS; b++) grid_text(g, r.x + b, y, 1, bar_cell(&u->th, h->hist[b], max, row, bars), STYLE_PLAIN);
    /* the marks under the bars: i idle, | median, T target (a later mark wins a shared column) */
    char marks[HL_HIST_BINS + 1];
    memset(marks, ' ', HL_HIST_BINS);
    marks[HL_HIST_BINS] = 0;
    const struct { double x; char c; } mk[] = {{h->idle, 'i'}, {h->p50, '|'}, {h->target, 'T'}};
    for (int k = 0; k < 3; k++) {
        int c = halflife_hist_col(mk[k].x);
        if (c >= 0) marks[c] = mk[k].c;
    }
    if (y < r.y + r.h) grid_text(g, r.x, y++, r.w, marks, acc);
    if (y < r.y + r.h) grid_text(g, r.x, y++, r.w, "0.1  1    10   100  1e3  1e4", dim);
    char idle[16], p50[16], tgt[16];
    fmt_num(idle, sizeof idle, h->idle);
    fmt_num(p50, sizeof p50, h->p50);
    fmt_num(tgt, sizeof tgt, h->target);
    if (y < r.y + r.h) grid_printf(g, r.x, y++, r.w, STYLE_PLAIN, "i idle %s  | p50 %s  T target %s", idle, p50, tgt);
    if (y < r.y + r.h) grid_printf(g, r.x, y++, r.w, h->flags ? acc : dim, "%s", h->flags ? h->reason : "no flag");
    return y - r.y;
}

int halflife_flagged_draw(ui *u, grid *g, rect r, const halflife_view *v) {
    int y = r.y;
    if (r.h < 1) return 0;
    grid_printf(g, r.x, y++, r.w, theme_dim(&u->th), "flagged heads, worst first: %d (f jumps)", v->n_flagged);
    for (int k = 0; k < v->n_flagged && y < r.y + r.h; k++, y++) {
        const halflife_head *h = &v->r.heads[v->flagged[k]];
        char names[128] = "";
        int n = 0;
        for (int f = 0; f < HL_FLAG_COUNT && n < (int)sizeof names - 24; f++)
            if (h->flags & (1u << f)) n += snprintf(names + n, sizeof names - n, "%s%s", n ? "," : "", halflife_flag_names[f]);
        grid_printf(g, r.x, y, r.w, k == v->jump ? theme_accent(&u->th) : STYLE_PLAIN, "%c L%d H%d %4.1f %s",
                    k == v->jump ? '>' : ' ', h->layer, h->head, h->severity, names);
    }
    return y - r.y;
}

void halflife_fix_draw(ui *u, grid *g, rect r, const halflife_view *v, int layer, int head) {
    style dim = theme_dim(&u->th), acc = theme_accent(&u->th);
    int y = r.y;
    if (r.h < 2) return;
    if (!v->have) {
        grid_text(g, r.x, y, r.w, "half-life fixes: h on 3 Stats measures a student first", dim);
        return;
    }
    const halflife_head *h = halflife_view_head(v, layer, head);
    char p50[16], tgt[16];
    fmt_num(p50, sizeof p50, h ? h->p50 : NAN);
    fmt_num(tgt, sizeof tgt, h ? h->target : NAN);
    grid_printf(g, r.x, y++, r.w, STYLE_PLAIN, "half-life fix of %s: layer %d head %d (p50 %s, target %s)%s", v->ran.init,
                layer, head, p50, tgt, h ? "   x: to its no-sink distance   X: to a half-life" : ": not a GDN head");
    if (!v->fixed || y >= r.y + r.h) return;
    const double d = 100 * (v->fix_out.ppl_after / v->fix_out.ppl_before - 1);
    grid_printf(g, r.x, y++, r.w, acc, "fixed layer %d head %d to %.4g tokens, Stage 2 of layer %d: perplexity %.4f -> %.4f (%+.2f %%)",
                v->fix.layer, v->fix.head, v->fix.half_life, v->fix.layer, v->fix_out.ppl_before, v->fix_out.ppl_after, d);
    if (y < r.y + r.h) grid_printf(g, r.x, y++, r.w, dim, "written to %s", v->fix_dir);
    const halflife_head *b = halflife_result_head(&v->fix_before, v->fix.layer, v->fix.head),
                        *a = halflife_result_head(&v->fix_after, v->fix.layer, v->fix.head);
    const int w = r.w / 2 - 1 < 40 ? r.w / 2 - 1 : 40;
    if (b && y < r.y + r.h) halflife_head_hist_draw(u, g, (rect){r.x, y, w, r.y + r.h - y}, b, "before the fix");
    if (a && y < r.y + r.h) halflife_head_hist_draw(u, g, (rect){r.x + w + 2, y, w, r.y + r.h - y}, a, "after");
}
