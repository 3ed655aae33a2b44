#include "cli/signals.h"

#include <stdio.h>
#include <string.h>

#include "cli/out_place.h"

static atomic_int stop_sig;

void cli_record_stop(int sig) { atomic_store(&stop_sig, sig); }
/* SIGUSR1 / SIGUSR2 stand for SIGINT / SIGTERM: what `graft CMD --ranks/--gpus`
 * and a user send mpirun, which passes those two on to every rank (its own
 * SIGINT / SIGTERM end the ranks a second later; cli/ranks.h) */
static void on_signal(int sig) { atomic_store(&stop_sig, sig == SIGUSR1 ? SIGINT : sig == SIGUSR2 ? SIGTERM : sig); }
atomic_int *cli_stop_flag(void) { return &stop_sig; }

void cli_catch_stop_signals(void) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, NULL, &old);
    if (old.sa_handler != SIG_IGN) sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
}

void cli_die_if_stopped(void) {
    int sig = atomic_load(&stop_sig);
    if (!sig) return;
    fflush(stdout);
    fflush(stderr);
    cli_out_release_all(); /* ending by the signal skips atexit */
    signal(sig, SIG_DFL);
    raise(sig);
}
