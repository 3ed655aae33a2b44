#include "cli/ranks.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/comm.h"
#include "cli/signals.h"
#include "core/error.h"

static gf_world world;
static bool prepared;
static int saved_stderr = -1, captured = -1; /* rank > 0: the real stderr, and where stderr goes meanwhile */

static const gf_world *world_of(void) {
    if (!prepared) {
        comm_world_env(&world);
        prepared = true;
    }
    return &world;
}

bool cli_ranks_several(void) {
    const gf_world *w = world_of();
    return w->launched && w->size != 1;
}

bool cli_rank0(void) {
    gf_comm *c = be_comm(be_default());
    if (c) return comm_rank(c) == 0;
    return world_of()->rank <= 0;
}

static bool shares_work(const char *cmd) {
    static const char *const names[] = {"train", "race", "stats", "select", "convert"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(cmd, names[i]) == 0) return true;
    return false;
}

int cli_ranks_prepare(const char *cmd) {
    const gf_world *w = world_of();
    if (!cli_ranks_several()) return 0;
    if (!shares_work(cmd)) {
        if (w->rank <= 0)
            fprintf(stderr, "graft %s: runs as one process; start it without mpirun (train, race, stats, select and "
                            "convert share their work between ranks)\n", cmd);
        return 2;
    }
    if (w->rank <= 0) return 0;
    fflush(stdout);
    fflush(stderr);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, STDOUT_FILENO);
        close(null);
    }
    captured = memfd_create("graft-rank-stderr", MFD_CLOEXEC);
    if (captured < 0) return 0; /* no memfd: this rank's stderr stays as it is */
    saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (saved_stderr < 0 || dup2(captured, STDERR_FILENO) < 0) {
        close(captured);
        captured = -1;
    }
    return 0;
}

/* The last non-empty line this rank wrote to stderr, as "graft CMD: rank R of N: why". */
static void print_last_line(void) {
    if (captured < 0 || saved_stderr < 0) return;
    fflush(stderr);
    off_t size = lseek(captured, 0, SEEK_END);
    if (size <= 0) return;
    const off_t keep = size < 4096 ? size : 4096;
    char buf[4097];
    if (pread(captured, buf, (size_t)keep, size - keep) != (ssize_t)keep) return;
    buf[keep] = 0;
    size_t n = (size_t)keep;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) buf[--n] = 0;
    char *line = strrchr(buf, '\n');
    line = line ? line + 1 : buf;
    char *cr = strrchr(line, '\r'); /* a progress bar's last redraw */
    if (cr) line = cr + 1;
    if (!*line) return;
    char out[4400];
    const char *colon = strncmp(line, "graft ", 6) == 0 ? strstr(line, ": ") : NULL;
    if (colon)
        snprintf(out, sizeof out, "%.*s: rank %d of %d: %s\n", (int)(colon - line), line, world.rank, world.size,
                 colon + 2);
    else
        snprintf(out, sizeof out, "graft: rank %d of %d: %s\n", world.rank, world.size, line);
    ssize_t w = write(saved_stderr, out, strlen(out));
    (void)w;
}

int cli_ranks_exit(int rc) {
    if (!cli_ranks_several()) return rc;
    /* a rank ends by exit (MPI finalizes), not by raising a caught stop signal
     * again: the launcher (graft --ranks / --gpus) ends by it instead */
    cli_record_stop(0);
    /* 128 + signal: the ranks stopped together after a step (train's checkpoint on SIGINT / SIGTERM) */
    if (rc == 0 || rc > 128) return rc;
    if (world.rank != 0) {
        /* a failure every rank shares ends the job from rank 0 first: it prints once. mpirun ends
         * this rank by SIGTERM then; a stop handler the command installed would only cut the wait
         * short (and this rank would print too), so the default disposition comes back first */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        struct timespec d = {2, 0};
        while (nanosleep(&d, &d) != 0 && errno == EINTR) {}
        print_last_line();
    }
    fflush(stdout);
    fflush(stderr);
    gf_comm *c = be_comm(be_default());
    if (c) comm_abort(c, rc); /* does not return: the other ranks end too */
    return rc;                 /* MPI never started: mpirun ends the job on this non-zero exit */
}

const char *cli_ranks_device(const char *device, char *buf, size_t size) {
    if (!device || strcmp(device, "cuda") != 0 || !cli_ranks_several()) return device;
    snprintf(buf, size, "cuda:%d", world_of()->local_rank);
    return buf;
}

int cli_ranks_join(const char *cmd, gf_backend *be) {
    if (!cli_ranks_several()) return 0;
    gf_comm *c;
    if (comm_open(&c, be, NULL) != 0) {
        fprintf(stderr, "graft %s: %s\n", cmd, gf_last_error());
        return 1;
    }
    be_set_comm(be, c);
    if (c && world.rank < 0) world.rank = comm_rank(c); /* PMIx told only MPI */
    if (c && world.size == 0) world.size = comm_size(c);
    return 0;
}

void cli_ranks_leave(gf_backend *be) {
    if (!be) return;
    gf_comm *c = be_comm(be);
    be_set_comm(be, NULL);
    comm_close(c);
}

/* ------------------------------------------------------------- the launcher */

static pid_t launched_pid;
static volatile sig_atomic_t forwarded, stop_by_usr; /* the signal passed on; train stops on SIGUSR1 / 2 */
/* mpirun passes SIGUSR1 / SIGUSR2 on to the ranks (train stops after a step
 * and checkpoints); its own SIGINT / SIGTERM ends them within a second */
static void forward_signal(int sig) {
    if (launched_pid <= 0) return;
    const int again = forwarded != 0; /* a second Ctrl-C: end the job now */
    forwarded = sig;
    if (stop_by_usr && !again) kill(launched_pid, sig == SIGINT ? SIGUSR1 : SIGUSR2);
    else kill(launched_pid, SIGTERM);
}

/* "--ranks", "--ranks=N", "--gpus", "--gpus=N": how many argv slots the option takes (0: not one). */
static int launch_option(char **argv, int i, int argc) {
    const char *a = argv[i];
    for (const char *const *o = (const char *const[]){"--ranks", "--gpus", NULL}; *o; o++) {
        const size_t n = strlen(*o);
        if (strncmp(a, *o, n) != 0) continue;
        if (a[n] == '=') return 1;
        if (a[n] == 0) return i + 1 < argc ? 2 : 1;
    }
    return 0;
}

static bool on_path(const char *prog) {
    if (strchr(prog, '/')) return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path) return false;
    char dir[4096];
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        const size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(dir, sizeof dir, "%.*s/%s", (int)n, p, prog);
        if (n && access(dir, X_OK) == 0) return true;
        p += n + (e ? 1 : 0);
    }
    return false;
}

/* mpirun's own messages come framed by dashed lines; graft's lines are forwarded at once. */
typedef struct {
    bool in_banner, graft_said;
    int dead_rank, dead_signal;
    char *held;          /* mpirun's messages, shown when no rank explained the failure */
    size_t held_len;
} launch_watch;

static void hold(launch_watch *w, const char *line) {
    const size_t n = strlen(line);
    if (w->held_len + n + 1 > (1 << 16)) return;
    w->held = gf_realloc(w->held, w->held_len + n + 1);
    memcpy(w->held + w->held_len, line, n + 1);
    w->held_len += n;
}

static void watch_line(launch_watch *w, const char *line) {
    if (strncmp(line, "-----", 5) == 0) {
        w->in_banner = !w->in_banner;
        hold(w, line);
        return;
    }
    int r, s;
    if (sscanf(line, "mpirun noticed that process rank %d with PID %*d on node %*s exited on signal %d", &r, &s) == 2) {
        w->dead_rank = r, w->dead_signal = s;
    }
    if (w->in_banner || (line[0] == '[' && strstr(line, "] ")) || strncmp(line, "mpirun", 6) == 0) {
        hold(w, line);
        return;
    }
    if (strncmp(line, "graft", 5) == 0) w->graft_said = true;
    fputs(line, stderr);
    fflush(stderr);
}

int cli_launch_ranks(const char *cmd, int argc, char **argv, int ranks, bool gpus, int threads) {
    if (cli_ranks_several()) {
        fprintf(stderr, "graft %s: --ranks / --gpus start mpirun; this process is already one of %d ranks\n", cmd,
                world_of()->size);
        return 2;
    }
    const char *mpirun = getenv("GRAFT_MPIRUN");
    if (!mpirun || !*mpirun) mpirun = "mpirun";
    if (!on_path(mpirun)) {
        fprintf(stderr, "graft %s: --%s %d needs mpirun (Debian: apt-get install openmpi-bin), and %s was not "
                        "found\n", cmd, gpus ? "gpus" : "ranks", ranks, mpirun);
        return 2;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "graft %s: cannot find graft's own path (/proc/self/exe)\n", cmd);
        return 1;
    }
    self[n] = 0;
    char np[24], th[24];
    snprintf(np, sizeof np, "%d", ranks);
    const char **av = gf_calloc((size_t)argc + 32, sizeof *av);
    int k = 0;
    av[k++] = mpirun;
    av[k++] = "-np", av[k++] = np;
    /* CPU ranks share the cores (more ranks than cores is fine); threads are
     * split explicitly, so no rank is pinned to one core */
    av[k++] = "--oversubscribe", av[k++] = "--bind-to", av[k++] = "none";
    /* mpirun runs in its own process group (Ctrl-C reaches only this process): no stdin for it */
    av[k++] = "--stdin", av[k++] = "none";
    if (geteuid() == 0) av[k++] = "--allow-run-as-root";
    av[k++] = self;
    av[k++] = argv[0]; /* the command */
    for (int i = 1; i < argc;) {
        const int skip = launch_option(argv, i, argc);
        if (skip) {
            i += skip;
            continue;
        }
        av[k++] = argv[i++];
    }
    if (gpus) av[k++] = "--device", av[k++] = "cuda";
    if (!gpus && threads == 0) { /* split this machine's cores between the CPU ranks */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        snprintf(th, sizeof th, "%ld", cores / ranks > 1 ? cores / ranks : 1);
        av[k++] = "--threads", av[k++] = th;
    }
    av[k] = NULL;

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        free(av);
        fprintf(stderr, "graft %s: cannot start mpirun: %s\n", cmd, strerror(errno));
        return 1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]), free(av);
        fprintf(stderr, "graft %s: cannot start mpirun: %s\n", cmd, strerror(errno));
        return 1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* this process gone: mpirun ends the job */
        dup2(fds[1], STDERR_FILENO);
        execvp(mpirun, (char *const *)av);
        dprintf(STDERR_FILENO, "graft %s: cannot start %s: %s\n", cmd, mpirun, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    free(av);
    /* SIGINT / SIGTERM to this process (Ctrl-C) are passed on to mpirun */
    launched_pid = pid;
    stop_by_usr = strcmp(cmd, "train") == 0;
    forwarded = 0;
    struct sigaction fwd = {.sa_handler = forward_signal, .sa_flags = SA_RESTART}, old_int, old_term;
    sigemptyset(&fwd.sa_mask);
    sigaction(SIGINT, &fwd, &old_int);
    sigaction(SIGTERM, &fwd, &old_term);
    launch_watch w = {0};
    FILE *in = fdopen(fds[0], "r");
    char *line = NULL;
    size_t cap = 0;
    while (in && getline(&line, &cap, in) > 0) watch_line(&w, line);
    free(line);
    if (in) fclose(in);
    else close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    launched_pid = 0;
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    /* main ends this process by the same signal (exit status 130 / 143) when the
     * job stopped for it; a job that finished its work before the signal took
     * effect (it came during the last step) exits 0 like the ranks did, instead
     * of 130 without a word */
    if (forwarded && rc != 0) cli_record_stop(forwarded);
    if (rc != 0 && !w.graft_said) {
        if (forwarded)
            fprintf(stderr, "graft %s: stopped by %s\n", cmd, forwarded == SIGINT ? "SIGINT" : "SIGTERM");
        else if (w.dead_signal > 0)
            fprintf(stderr, "graft %s: rank %d of %d ended by signal %d (%s); mpirun ended the other ranks\n", cmd,
                    w.dead_rank, ranks, w.dead_signal, strsignal(w.dead_signal));
        else if (rc > 128)
            fprintf(stderr, "graft %s: a rank ended by signal %d (%s); mpirun ended the other ranks\n", cmd, rc - 128,
                    strsignal(rc - 128));
        else if (w.held_len)
            fprintf(stderr, "graft %s: mpirun failed (exit status %d):\n%s", cmd, rc, w.held);
        else
            fprintf(stderr, "graft %s: mpirun failed (exit status %d)\n", cmd, rc);
    }
    free(w.held);
    return rc;
}

bool cli_ranks_launch(const char *cmd, int argc, char **argv, int ranks, int gpus, common_opts *co, int *status) {
    *status = 2;
    if (ranks < 0 || gpus < 0) {
        fprintf(stderr, "graft %s: --ranks and --gpus take a count >= 1\n", cmd);
        return true;
    }
    if (ranks > 1 && gpus > 0) {
        fprintf(stderr, "graft %s: give --ranks N (on --device) or --gpus N (one rank per GPU), not both\n", cmd);
        return true;
    }
    if (gpus > 0) co->device = "cuda";
    const int n = gpus > 0 ? gpus : ranks;
    if (n <= 1) return false;
    *status = cli_launch_ranks(cmd, argc, argv, n, gpus > 0, co->threads);
    return true;
}
