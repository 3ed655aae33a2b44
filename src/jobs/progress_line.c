#include "jobs/progress_line.h"

#include <math.h>
#include <string.h>
#include <sys/ioctl.h>

void format_duration(char *b, size_t n, double s) {
    if (!(s >= 0)) snprintf(b, n, "?");
    else if (s < 60) snprintf(b, n, "%.0fs", s);
    else if (s < 3600) snprintf(b, n, "%dm%02ds", (int)s / 60, (int)s % 60);
    else if (s < 1e7) snprintf(b, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else snprintf(b, n, ">100d");
}

int terminal_columns(FILE *f) {
    struct winsize ws;
    if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
    return 80;
}

void progress_line_format(char *buf, size_t n, int width, const char *label, double fraction, const char *amount,
                          const char *rate, double eta_s) {
    if (!(fraction >= 0)) fraction = 0;
    if (fraction > 1) fraction = 1;
    char eta[24] = "", tail[160];
    if (!isnan(eta_s)) {
        char d[16];
        format_duration(d, sizeof d, eta_s);
        snprintf(eta, sizeof eta, "  eta %s", d);
    }
    snprintf(tail, sizeof tail, " %3.0f%%%s%s%s%s%s", 100 * fraction, amount[0] ? "  " : "", amount,
             rate[0] ? "  " : "", rate, eta);
    /* the label keeps its end (a file name's), at most 28 columns */
    size_t ll = strlen(label);
    int label_w = ll > 28 ? 28 : (int)ll;
    const char *lab = label + ll - (size_t)label_w;
    int bar_w = width - label_w - (int)strlen(tail) - 4;
    if (bar_w < 5) bar_w = 5;
    if (bar_w > 40) bar_w = 40;
    char bar[48];
    int fill = (int)lround(fraction * bar_w);
    for (int i = 0; i < bar_w; i++) bar[i] = i < fill ? '#' : '.';
    bar[bar_w] = 0;
    snprintf(buf, n, "%.*s [%s]%s", label_w, lab, bar, tail);
}
