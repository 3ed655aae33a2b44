#include "cli/signals.h"

#include <stdio.h>
#include <string.h>

static atomic_int stop_sig;

void cli_record_stop(int sig) { atomic_store(&stop_sig, sig); }
static void on_signal(int sig) { atomic_store(&stop_sig, sig); }
atomic_int *cli_stop_flag(void) { return &stop_sig; }

void cli_catch_stop_signals(void) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, NULL, &old);
    if (old.sa_handler != SIG_IGN) sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void cli_die_if_stopped(void) {
    int sig = atomic_load(&stop_sig);
    if (!sig) return;
    fflush(stdout);
    fflush(stderr);
    signal(sig, SIG_DFL);
    raise(sig);
}
