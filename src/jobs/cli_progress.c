#include "jobs/cli_progress.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "jobs/eta.h"
#include "jobs/progress_line.h"

void cli_progress_format(char *buf, size_t n, const event *ev, int width) {
    char amount[64], rate[32];
    snprintf(amount, sizeof amount, "%.0f/%.0f", ev->done, ev->total);
    snprintf(rate, sizeof rate, "%.1f/s", ev->rate);
    progress_line_format(buf, n, width, ev->label, ev->fraction, amount, rate, ev->eta_s);
}

int job_run_cli(const char *name, job_fn fn, void *arg, void **result, atomic_int *stop,
                void (*on_event)(const event *ev, void *user), void *user) {
    if (result) *result = NULL;
    job_runner jr;
    if (job_runner_init(&jr)) return -1;
    bool tty = isatty(STDERR_FILENO);
    bool bar_shown = false;
    eta_smoother eta;
    eta_reset(&eta);
    double last_bar = 0;
    int rc = -1;
    char err[256] = "";
    if (job_start(&jr, name, fn, arg)) {
        snprintf(err, sizeof err, "%s", gf_last_error());
        goto out;
    }
    for (bool finished = false; !finished;) {
        struct pollfd pfd = {.fd = job_wake_fd(&jr), .events = POLLIN};
        int pr = poll(&pfd, 1, 200);
        if (pr < 0 && errno != EINTR) break;
        if (stop && atomic_load(stop)) job_cancel(&jr);
        job_clear_wake(&jr);
        event ev;
        while (job_pop_event(&jr, &ev)) {
            if (ev.kind == EV_PROGRESS) {
                ev.eta_s = eta_update(&eta, ev.t, ev.fraction);
                /* at most ~10 redraws a second, but always the final state */
                double t = job_now();
                if (!tty || (t - last_bar < 0.1 && ev.fraction < 1)) continue;
                last_bar = t;
                char line[256];
                cli_progress_format(line, sizeof line, &ev, terminal_columns(stderr) - 1);
                fprintf(stderr, "\r\033[K%s", line);
                bar_shown = true;
                continue;
            }
            if (bar_shown && (ev.kind == EV_LOG || event_is_final(ev.kind))) {
                fputs("\r\033[K", stderr);
                bar_shown = false;
            }
            if (ev.kind == EV_LOG) fprintf(stderr, "%s\n", ev.text);
            else if (ev.kind == EV_DONE) {
                if (result) *result = ev.result;
                rc = 0;
                finished = true;
            } else if (ev.kind == EV_ERROR || ev.kind == EV_CANCELLED) {
                snprintf(err, sizeof err, "%s", ev.text);
                finished = true;
            } else if (on_event) on_event(&ev, user);
        }
    }
    fflush(stderr);
out:
    job_runner_free(&jr);
    if (rc) gf_fail("%s", err[0] ? err : "job ended without a result");
    return rc;
}
