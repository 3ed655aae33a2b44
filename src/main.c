/* graft: convert a Transformer into a hybrid Gated DeltaNet model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/load_env.h"
#include "cli/ranks.h"
#include "method/artifact.h"
#include "cli/signals.h"
#include "commands.h"


static void usage(FILE *f) {
    fprintf(f, "usage: graft [COMMAND] [ARGS]   (graft COMMAND --help for its options)\n\ncommands:\n");
    for (int i = 0; i < graft_n_commands; i++)
        fprintf(f, "  %-10s %s\n", graft_commands[i].name, graft_commands[i].summary);
    fprintf(f, "\nWith no command, graft opens the default teacher.\n");
}

int main(int argc, char **argv) {
    load_env_reexec(argv);
    if (argc < 2) { /* the workbench: one process */
        int rc = cli_ranks_prepare("tui");
        if (rc) return rc;
        rc = cmd_default(argc, argv);
        cli_die_if_stopped();
        return rc;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) {
        char blas[256];
        load_env_blas_line(blas, sizeof blas);
        printf("graft %s\n%s\n", graft_version(), blas);
        return 0;
    }
    for (int i = 0; i < graft_n_commands; i++)
        if (!strcmp(name, graft_commands[i].name)) {
            /* one of several ranks (mpirun): rank 0 speaks for the job */
            int rc = cli_ranks_prepare(name);
            if (rc) return rc;
            rc = cli_ranks_exit(graft_commands[i].fn(argc - 1, argv + 1));
            cli_die_if_stopped(); /* Ctrl-C after a command's cleanup: end by SIGINT (130) */
            return rc;
        }
    fprintf(stderr, "graft: unknown command '%s' (graft --help lists them)\n", name);
    return 2;
}
