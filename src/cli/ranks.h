/* A command as one rank of a data-parallel job (`mpirun -np N graft CMD ...`,
 * or `graft CMD --ranks N` / `--gpus N`, which start mpirun themselves).
 *
 * Rank 0 speaks for the job: it alone prints results and progress and writes
 * files. Another rank's stdout goes nowhere and its stderr is kept aside;
 * when that rank fails it waits a second (a failure every rank shares ends
 * the job from rank 0 first, so it prints once) and then prints the last
 * line it wrote, as "graft CMD: rank R of N: why". A failing rank ends the
 * whole job (MPI_Abort), so nobody waits in a collective for it.
 *
 * Commands that share their work between ranks: train, race, stats, select,
 * convert. The others refuse to run as several ranks (one line, exit 2). */
#ifndef GRAFT_CLI_RANKS_H
#define GRAFT_CLI_RANKS_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/backend.h"
#include "cli/common.h"

/* main, before command `cmd`: in a job of several ranks, refuses a command
 * that does not share its work (rank 0 says so; returns 2) and sets up rank
 * > 0's stdout and stderr. 0 to go on. */
int cli_ranks_prepare(const char *cmd);
/* main, after the command: on failure (rc != 0) of a job of several ranks,
 * ends the job; otherwise returns rc. */
int cli_ranks_exit(int rc);

/* cli_setup, before the backend opens: "cuda" becomes "cuda:<local rank>"
 * in a job of several ranks (one process per GPU); other names unchanged. */
const char *cli_ranks_device(const char *device, char *buf, size_t size);
/* cli_setup, after: opens the communicator on be and installs it (be_comm).
 * 0, or 1 after one line. */
int cli_ranks_join(const char *cmd, gf_backend *be);
/* Closes the communicator installed on be (MPI_Finalize). */
void cli_ranks_leave(gf_backend *be);

/* This process is rank 0 (or runs alone). */
bool cli_rank0(void);
/* This process is one of several ranks of a job (mpirun -np N, N > 1). */
bool cli_ranks_several(void);

/* After parsing --ranks / --gpus: with N > 1, runs the command line as N
 * ranks (cli_launch_ranks), puts its exit status in *status and returns
 * true; --gpus 1 just sets the device to cuda. A bad count: true, status 2,
 * one line. false: go on in this process. */
bool cli_ranks_launch(const char *cmd, int argc, char **argv, int ranks, int gpus, common_opts *co, int *status);

/* --ranks N / --gpus N: runs this very command line as N local ranks under
 * mpirun (without --ranks / --gpus; --gpus adds --device cuda), forwards its
 * output and returns its exit status; a rank that died without a word (a
 * signal) gets one line. Returns 2 after one line when mpirun is missing. */
int cli_launch_ranks(const char *cmd, int argc, char **argv, int ranks, bool gpus, int threads);

#define RANKS_OPTS(ranks, gpus)                                                                       \
    {"ranks", OPT_INT, &(ranks), "run as N local ranks under mpirun, sharing the work (default 1)"}, \
    {"gpus", OPT_INT, &(gpus), "run as N local ranks, one per GPU (--ranks N --device cuda)"}

#endif
