#include "hub/progress_bar.h"

#include <string.h>
#include <unistd.h>

#include "jobs/progress_line.h"
#include "core/clock.h"
#include "hub/progress.h"

void hub_progress_bar_init(hub_progress_bar *b, FILE *out, bool quiet) {
    memset(b, 0, sizeof *b);
    b->out = out;
    b->quiet = quiet;
    b->tty = isatty(fileno(out)) && !quiet;
    b->last_plain = clock_now_s();
}

void hub_format_bytes(double x, char *buf, size_t cap) {
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (x >= 1000 && u < 4) x /= 1000, u++;
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", x, unit[u]);
}

static void draw(hub_progress_bar *b, const hub_event *ev) {
    char done[32], total[32], speed[32], amount[96], rate[40], line[256];
    hub_format_bytes((double)ev->total_done, done, sizeof done);
    hub_format_bytes((double)ev->total_total, total, sizeof total);
    hub_format_bytes(ev->bytes_per_s, speed, sizeof speed);
    snprintf(amount, sizeof amount, "%s/%s, file %d/%d", done, total, ev->files_done, ev->files_total);
    snprintf(rate, sizeof rate, "%s/s", speed);
    double frac = ev->total_total > 0 ? (double)ev->total_done / (double)ev->total_total : 0;
    progress_line_format(line, sizeof line, terminal_columns(b->out) - 1, ev->file ? ev->file : "", frac, amount,
                         rate, ev->eta_s);
    fprintf(b->out, "\r\033[K%s", line);
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
    } else if (ev->state == HUB_EV_PROGRESS && clock_now_s() - b->last_plain >= 10) {
        hub_format_bytes((double)ev->total_done, done, sizeof done);
        hub_format_bytes((double)ev->total_total, total, sizeof total);
        fprintf(b->out, "graft: downloading %s/%s\n", done, total);
        b->last_plain = clock_now_s();
    }
}
