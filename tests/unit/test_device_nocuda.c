/* test_device_open.c's checks against the backend dispatch compiled as in a
 * build without the CUDA backend (make GRAFT_CUDA=0): backend.c is compiled
 * into this program with GRAFT_WITH_CUDA undefined, so its be_* functions are
 * the ones linked (the library's copy is not pulled in: nothing here needs a
 * symbol only it defines), and `--device cuda` must say the build lacks it. */
#undef GRAFT_WITH_CUDA
#include "backend/backend.c"

#include "test_device_open.c"
