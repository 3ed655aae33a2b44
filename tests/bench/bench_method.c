/* Wall time of the method on stories260K: one full `graft convert`
 * (taylor-calibrate, uniform 50 %, 4 x 256 calibration tokens, 300 Stage 2
 * steps) and the full default `graft ablate` (3 strategies x 3 ratios x 6
 * initializations, calibration and evaluation split from tinystories.txt).
 * Runs the built graft binary; skips when the shared data is missing.
 * GRAFT_BENCH_QUICK=1 skips the ablate run (about 5 minutes on 2 busy cores). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_util.h"

static double timed(const char *cmd) {
    double t = bench_now();
    int rc = system(cmd);
    t = bench_now() - t;
    if (rc != 0) {
        printf("  command failed (exit %d): %s\n", rc, cmd);
        return -1;
    }
    return t;
}

int main(void) {
    const char *sh = getenv("GRAFT_SHARED");
    const char *root = getenv("GRAFT_ROOT");
    char model[2048], text[2048], graft[2048], cmd[16384];
    snprintf(model, sizeof model, "%s/models/tinyllamas/stories260K/stories260K.bin", sh ? sh : "../shared");
    snprintf(text, sizeof text, "%s/data/tinystories.txt", sh ? sh : "../shared");
    snprintf(graft, sizeof graft, "%s/build/graft", root ? root : ".");
    if (access(model, R_OK) || access(text, R_OK) || access(graft, X_OK)) {
        printf("skipped: stories260K, tinystories.txt or build/graft missing\n");
        return 0;
    }
    char dir[] = "/tmp/graft_bench_method_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    snprintf(cmd, sizeof cmd,
             "%s convert %s --keep 0.5 --strategy uniform --init taylor-calibrate --calib %s --out %s/student >/dev/null",
             graft, model, text, dir);
    double t = timed(cmd);
    if (t >= 0) printf("convert stories260K (uniform 0.5, taylor-calibrate, 300 steps): %.2f s\n", t);
    snprintf(cmd, sizeof cmd, "%s convert %s --keep 0.5 --strategy ga-s2 --init taylor-calibrate --calib %s --out %s/student2 >/dev/null",
             graft, model, text, dir);
    t = timed(cmd);
    if (t >= 0) printf("convert stories260K (ga-s2 0.5: all 5 layers aligned + 5 scorings): %.2f s\n", t);
    if (!getenv("GRAFT_BENCH_QUICK")) {
        snprintf(cmd, sizeof cmd, "%s ablate %s --calib %s --eval %s --json >%s/ablate.json 2>/dev/null", graft, model, text,
                 text, dir);
        t = timed(cmd);
        if (t >= 0) printf("ablate stories260K (3 strategies x 3 ratios x 6 inits = 54 rows): %.1f s\n", t);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
