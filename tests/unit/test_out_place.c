/* Unit tests: claiming output places (src/cli/out_place.h): kinds, the lock
 * a second claimant is refused by, its release, and the free-space check; the
 * workbench's claim (src/method/place_lock.h, what its jobs take on the
 * folders they write) and the command line's refuse each other, however the
 * place is spelled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/out_place.h"
#include "core/error.h"
#include "method/place_lock.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/graft_out_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    cli_out_release_all();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void second_claim_refused_until_released(void **state) {
    (void)state;
    char ck[128], lock[136];
    snprintf(ck, sizeof ck, "%s/run.ckpt", dir);
    snprintf(lock, sizeof lock, "%s.lock", ck);
    assert_int_equal(cli_out_claim("--ckpt", ck, OUT_CKPT, 1), 0);
    assert_int_equal(access(lock, F_OK), 0);
    /* flock conflicts between two open files, in one process too */
    assert_int_equal(cli_out_claim("--ckpt", ck, OUT_CKPT, 1), -1);
    char want[200];
    snprintf(want, sizeof want, "--ckpt %s is being written by another graft process (pid %ld)", ck, (long)getpid());
    if (!strstr(gf_last_error(), want)) fail_msg("'%s'", gf_last_error());
    cli_out_release_all();
    assert_int_equal(access(lock, F_OK), -1);
    assert_int_equal(cli_out_claim("--ckpt", ck, OUT_CKPT, 1), 0);
    cli_out_release_all();
}

static void kinds_and_folders(void **state) {
    (void)state;
    char p[128];
    assert_int_equal(cli_out_claim("--ckpt", dir, OUT_CKPT, 1), -1);
    assert_non_null(strstr(gf_last_error(), "is a folder; --ckpt takes a file"));
    snprintf(p, sizeof p, "%s/missing/stu", dir);
    assert_int_equal(cli_out_claim("--out", p, OUT_STUDENT, 1), -1);
    assert_non_null(strstr(gf_last_error(), "No such file"));
    assert_int_equal(cli_out_claim("--out", "/proc/graft-stu", OUT_STUDENT, 1), -1);
    assert_non_null(strstr(gf_last_error(), "cannot write in /proc"));
    assert_int_equal(cli_out_claim("--out", "", OUT_STUDENT, 1), -1);
    snprintf(p, sizeof p, "%s/stu", dir);
    assert_int_equal(cli_out_claim("--out", p, OUT_STUDENT, 1), 0);
    cli_out_release_all();
}

static void free_space(void **state) {
    (void)state;
    assert_int_equal(cli_out_check_space("--out", dir, 1), 0);
    assert_int_equal(cli_out_check_space("--out", dir, (uint64_t)1 << 62), -1); /* 4 EiB */
    assert_non_null(strstr(gf_last_error(), "--out"));
    assert_non_null(strstr(gf_last_error(), " free on "));
    model_config c = {0};
    c.dim = 64, c.n_layers = 2, c.vocab_size = 100, c.hidden_dim = 128, c.n_heads = 4, c.n_kv_heads = 2, c.head_dim = 16;
    assert_true(cli_out_bytes(OUT_CKPT, &c) > 3 * cli_out_bytes(OUT_LOG, &c));
    assert_true(cli_out_bytes(OUT_STUDENT, &c) > 0);
}

/* A job's lock on a student folder against `--out` naming the same folder
 * as "./x/../stu/" from the folder's parent: one lock file, each refuses the
 * other while it is held. */
static void job_and_command_meet(void **state) {
    (void)state;
    char stu[128], lock[136], cwd[4096];
    snprintf(stu, sizeof stu, "%s/stu", dir);
    snprintf(lock, sizeof lock, "%s.lock", stu);
    assert_non_null(getcwd(cwd, sizeof cwd));
    char x[128];
    snprintf(x, sizeof x, "%s/x", dir);
    assert_int_equal(mkdir(x, 0755), 0);
    place_lock job;
    assert_int_equal(place_lock_take(&job, "student folder", stu, "wait for it to end, then build again"), 0);
    assert_int_equal(access(lock, F_OK), 0);
    assert_int_equal(chdir(dir), 0);
    const int rc = cli_out_claim("--out", "./x/../stu/", OUT_STUDENT, 1);
    char err[512];
    snprintf(err, sizeof err, "%s", gf_last_error());
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, -1);
    char want[256];
    snprintf(want, sizeof want, "--out ./x/../stu/ is being written by another graft process (pid %ld); wait for it to "
                                "end or choose another --out", (long)getpid());
    if (!strstr(err, want)) fail_msg("'%s' lacks '%s'", err, want);
    place_lock_release(&job);
    assert_int_equal(access(lock, F_OK), -1);
    /* the other way round: the command holds it, the job is refused */
    assert_int_equal(cli_out_claim("--out", stu, OUT_STUDENT, 1), 0);
    assert_int_equal(place_lock_take(&job, "student folder", stu, "wait for it to end, then build again"), -1);
    snprintf(want, sizeof want, "student folder %s is being written by another graft process (pid %ld); wait for it "
                                "to end, then build again", stu, (long)getpid());
    if (!strstr(gf_last_error(), want)) fail_msg("'%s' lacks '%s'", gf_last_error(), want);
    assert_null(job.lock_path);
    place_lock_release(&job); /* not held: nothing to do */
    cli_out_release_all();
    assert_int_equal(place_lock_take(&job, "student folder", stu, "-"), 0);
    place_lock_release(&job);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(second_claim_refused_until_released),
        cmocka_unit_test(kinds_and_folders),
        cmocka_unit_test(free_space),
        cmocka_unit_test(job_and_command_meet),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
