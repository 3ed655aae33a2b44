#include "method/common_opts.h"

#include <string.h>

void common_opts_default(common_opts *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->device = "cpu";
}
