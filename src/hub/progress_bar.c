#include "hub/progress_bar.h"

#include <string.h>
#include <unistd.h>

#include "hub/progress.h"

void hub_progress_bar_init(hub_progress_bar *b, FILE *out, bool quiet) {
    memset(b, 0, sizeof *b);
    b->out = out;
    b->quiet = quiet;
    b->tty = isatty(fileno(out)) && !quiet;
    b->last_plain = hub_now();
}

void hub_format_bytes(double x, char *buf, size_t cap) {
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (x >= 1000 && u < 4) x /= 1000, u++;
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", x, unit[u]);
}

static void format_eta(double s, char *buf, size_t cap) {
    if (s < 0) snprintf(buf, cap, "--:--");
    else if (s < 3600) snprintf(buf, cap, "%02d:%02d", (int)s / 60, (int)s % 60);
    else snprintf(buf, cap, "%dh%02d", (int)s / 3600, ((int)s % 3600) / 60);
}

static void draw(hub_progress_bar *b, const hub_event *ev) {
    char done[32], total[32], speed[32], eta[16], bar[26];
    hub_format_bytes((double)ev->total_done, done, sizeof done);
    hub_format_bytes((double)ev->total_total, total, sizeof total);
    hub_format_bytes(ev->bytes_per_s, speed, sizeof speed);
    format_eta(ev->eta_s, eta, sizeof eta);
    double frac = ev->total_total > 0 ? (double)ev->total_done / (double)ev->total_total : 0;
    if (frac > 1) frac = 1;
    int fill = (int)(frac * 24);
    for (int i = 0; i < 24; i++) bar[i] = i < fill ? '#' : '.';
    bar[24] = 0;
    const char *name = ev->file ? ev->file : "";
    size_t nl = strlen(name);
    if (nl > 28) name += nl - 28;
    fprintf(b->out, "\r\033[K[%s] %3d%% %s/%s %s/s ETA %s  %d/%d %s", bar, (int)(frac * 100), done, total, speed, eta,
            ev->files_done, ev->files_total, name);
    fflush(b->out);
    b->drawn = true;
}

void hub_progress_bar_event(const hub_event *ev, void *user) {
    hub_progress_bar *b = user;
    if (b->quiet) return;
    if (b->tty) {
        if (ev->file == NULL) { /* the whole download ended: leave the terminal clean */
            if (b->drawn) fprintf(b->out, "\r\033[K");
            fflush(b->out);
            b->drawn = false;
            return;
        }
        if (ev->state == HUB_EV_ERROR) return; /* the command prints the error once, at the end */
        draw(b, ev);
        return;
    }
    /* not a terminal: a line per finished file, and a heartbeat every 10 s */
    char done[32], total[32];
    if (ev->file && ev->state == HUB_EV_DONE) {
        hub_format_bytes((double)ev->file_done, done, sizeof done);
        fprintf(b->out, "graft: %s (%s) [%d/%d]\n", ev->file, done, ev->files_done, ev->files_total);
    } else if (ev->state == HUB_EV_PROGRESS && hub_now() - b->last_plain >= 10) {
        hub_format_bytes((double)ev->total_done, done, sizeof done);
        hub_format_bytes((double)ev->total_total, total, sizeof total);
        fprintf(b->out, "graft: downloading %s/%s\n", done, total);
        b->last_plain = hub_now();
    }
}
