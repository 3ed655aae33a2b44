/* Ctrl-C as shells expect. A command that must clean up on SIGINT / SIGTERM
 * (train writes its checkpoint, download keeps its partial file, the
 * workbench restores the terminal) catches them and records the signal; when
 * the command returns, main() ends the process by that same signal, so the
 * shell sees exit status 130 (143 for SIGTERM) and stops a script's loop, as
 * for any program killed by Ctrl-C. Commands that need no cleanup keep the
 * default action, which does the same at once. */
#ifndef GRAFT_CLI_SIGNALS_H
#define GRAFT_CLI_SIGNALS_H

#include <signal.h>
#include <stdatomic.h>

/* Installs the recording handler for SIGINT and SIGTERM (a SIGINT the shell
 * ignores, as for background jobs, stays ignored), and for SIGUSR1 / SIGUSR2,
 * recorded as SIGINT / SIGTERM (what mpirun forwards to the ranks of a job). */
void cli_catch_stop_signals(void);
/* The signal caught so far, 0 when none (lock-free: handlers store into it). */
atomic_int *cli_stop_flag(void);
/* For a command's own handler: records sig (async-signal-safe). */
void cli_record_stop(int sig);
/* When a stop signal was recorded: flushes stdout and stderr, restores the
 * default action and raises it (the process ends there). Returns otherwise. */
void cli_die_if_stopped(void);

#endif
