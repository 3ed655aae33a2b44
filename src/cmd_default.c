#include <stdio.h>

#include "commands.h"

int cmd_default(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "graft: the workbench is not built yet; try graft --help\n");
    return 2;
}
int cmd_inspect(int argc, char **argv) { return cmd_default(argc, argv); }
int cmd_generate(int argc, char **argv) { return cmd_default(argc, argv); }
int cmd_ppl(int argc, char **argv) { return cmd_default(argc, argv); }
int cmd_stats(int argc, char **argv) { return cmd_default(argc, argv); }
