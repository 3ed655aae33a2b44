/* The method's requests and artifacts (src/method/request.h, artifact.h):
 *   - every request type, with every option set to a value other than its
 *     default, prints as its headless command and parses back to the same
 *     request (and prints the same again); quotes and spaces survive;
 *   - a default request prints no option; a few commands are spelled out;
 *   - validation: the messages name the option and the range;
 *   - identity: the same request has the same digest; another Stage 2 step
 *     count, or a teacher file of the same name with other bytes, another;
 *     options that only say where results go (--out, --json, --threads) do
 *     not change it;
 *   - folders: a new folder is taken, the same request's folder reused,
 *     another request's refused (naming it) unless forced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "method/artifact.h"
#include "method/opt_limits.h"
#include "method/request.h"

/* a value other than x inside option name's range (method/opt_limits.h): x + step, else x - step, else the
 * middle of the range (the parser refuses values out of range) */
static double in_range(const char *name, double x, double step) {
    const opt_limit *l = opt_limit_find(name);
    if (!l) return x + step;
    for (int sign = 1; sign >= -1; sign -= 2) {
        const double v = x + sign * step;
        if ((l->lo_open ? v > l->lo : v >= l->lo) && (l->hi_open ? v < l->hi : v <= l->hi)) return v;
    }
    const double mid = isfinite(l->hi) ? (l->lo + l->hi) / 2 : l->lo + 1;
    return mid == x ? mid + step / 8 : mid;
}

/* every option of r set to a value that is not its default (help left alone) */
static void set_everything(request *r, char (*strs)[64], int n_strs) {
    opt_spec specs[REQ_MAX_OPTS];
    const int n = request_bind(r, specs);
    for (int i = 0; i < n && i < n_strs; i++) {
        const opt_spec *s = &specs[i];
        if (!strcmp(s->name, "help")) continue;
        switch (s->kind) {
        case OPT_FLAG: *(bool *)s->dst = true; break;
        case OPT_INT: *(int *)s->dst = (int)in_range(s->name, *(int *)s->dst, 1); break;
        case OPT_LONG: *(long *)s->dst = (long)in_range(s->name, (double)*(long *)s->dst, 1); break;
        case OPT_DOUBLE: /* not a short decimal: printing must keep every bit */
            *(double *)s->dst = in_range(s->name, isfinite(*(double *)s->dst) ? *(double *)s->dst : 0.5, 0.1 + i / 7.0);
            break;
        case OPT_STR:
            snprintf(strs[i], sizeof strs[i], i % 2 ? "it's %d -- a \"v\" $x" : "plain%d", i);
            *(const char **)s->dst = strs[i];
            break;
        case OPT_STR_LIST: {
            str_list *l = s->dst;
            l->items[l->n++] = "a b";
            l->items[l->n++] = "c";
            break;
        }
        }
    }
    r->pos[0] = "/tmp/some dir/model's.bin";
    r->n_pos = 1;
    if (r->kind == REQ_RACE) {
        r->pos[1] = "students/a";
        r->pos[2] = "-not-an-option";
        r->n_pos = 3;
    }
}

static void round_trip_every_type(void **state) {
    (void)state;
    for (int k = 0; k < REQ_KIND_COUNT; k++) {
        request r, back, deflt;
        char strs[REQ_MAX_OPTS][64];
        request_init(&r, (req_kind)k);
        request_init(&deflt, (req_kind)k);
        set_everything(&r, strs, REQ_MAX_OPTS);
        assert_false(request_equal(&r, &deflt));
        char cmd[8192], again[8192];
        assert_int_equal(request_command(&r, cmd, sizeof cmd), 0);
        int argc;
        char **argv;
        assert_int_equal(request_split(cmd, &argc, &argv), 0);
        if (request_from_command(&back, argc, argv) != 0) fail_msg("%s: %s\n  %s", req_kind_name(k), gf_last_error(), cmd);
        if (!request_equal(&r, &back)) fail_msg("%s: parsed back differs\n  %s", req_kind_name(k), cmd);
        assert_int_equal(request_command(&back, again, sizeof again), 0);
        assert_string_equal(cmd, again);
        free(argv);
    }
}

static void defaults_print_bare(void **state) {
    (void)state;
    for (int k = 0; k < REQ_KIND_COUNT; k++) {
        request r;
        request_init(&r, (req_kind)k);
        r.pos[0] = "m.bin";
        r.n_pos = 1;
        char cmd[256], want[64];
        assert_int_equal(request_command(&r, cmd, sizeof cmd), 0);
        snprintf(want, sizeof want, "graft %s m.bin", req_kind_name(k));
        assert_string_equal(cmd, want);
    }
}

static void spelled_out(void **state) {
    (void)state;
    char *argv[] = {"convert", "/m/stories260K.bin", "--strategy", "uniform", "--keep=0.5", "--init", "taylor-calibrate",
                    "--calib", "/d/tiny stories.txt", "--steps", "10", "--keep-best", "heldout", "--json", NULL};
    request r;
    assert_int_equal(request_parse(&r, REQ_CONVERT, 14, argv), 0);
    assert_int_equal(request_check(&r), 0);
    char cmd[512];
    request_command(&r, cmd, sizeof cmd);
    assert_string_equal(cmd, "graft convert '/m/stories260K.bin' --keep 0.5 --strategy uniform --init taylor-calibrate "
                             "--calib '/d/tiny stories.txt' --steps 10 --keep-best heldout --json");
}

static void check_fails(request *r, const char *want) {
    assert_int_equal(request_check(r), -1);
    if (!strstr(gf_last_error(), want)) fail_msg("'%s' lacks '%s'", gf_last_error(), want);
}

static void validation_messages(void **state) {
    (void)state;
    request r;
    request_init(&r, REQ_CONVERT);
    r.pos[0] = "m.bin", r.n_pos = 1;
    check_fails(&r, "--strategy, --init and --calib are required");
    r.u.convert.strategy = "uniform", r.u.convert.init = "random", r.u.convert.calib = "c.txt";
    check_fails(&r, "--keep R is required");
    r.u.convert.keep = 1.5;
    check_fails(&r, "retention ratio must be in (0, 1), got 1.5");
    r.u.convert.keep = NAN;
    r.u.convert.strategy = "manual:0";
    assert_int_equal(request_check(&r), 0);
    r.u.convert.mo.damping = -1;
    check_fails(&r, "--damping");
    request_init(&r, REQ_GENERATE);
    r.pos[0] = "m.bin", r.n_pos = 1;
    r.u.generate.temp = INFINITY;
    check_fails(&r, "--temp must be a number in [0, 1e6], got inf");
    request_init(&r, REQ_EVAL);
    check_fails(&r, "missing argument");
    /* ppl, inspect, bench-decode, download: the checks their commands made before they became requests */
    request_init(&r, REQ_PPL);
    r.pos[0] = "m.bin", r.n_pos = 1;
    check_fails(&r, "--text FILE is required");
    request_init(&r, REQ_INSPECT);
    r.pos[0] = "m.bin", r.n_pos = 1;
    r.u.inspect.batch = 0;
    check_fails(&r, "--batch must be >= 1, got 0");
    r.u.inspect.batch = 4, r.u.inspect.ctx = -3;
    check_fails(&r, "--ctx must be >= 2 (0: the default), got -3");
    char *bd[] = {"bench-decode", "m.bin", "--contexts", "1k,2x", "--batch=1,16", NULL};
    assert_int_equal(request_parse(&r, REQ_BENCH_DECODE, 5, bd), 0);
    check_fails(&r, "--contexts '1k,2x': expected sizes like 1k,8k,32k");
    r.u.bench_decode.contexts = "1k";
    r.u.bench_decode.prefill_chunk = 0;
    check_fails(&r, "--prefill-chunk must be >= 1, got 0");
    int sizes[REQ_MAX_SIZES];
    assert_int_equal(request_sizes("1k,8K,3", sizes, REQ_MAX_SIZES), 3);
    assert_true(sizes[0] == 1024 && sizes[1] == 8192 && sizes[2] == 3);
    assert_int_equal(request_sizes("0", sizes, REQ_MAX_SIZES), -1);
    assert_int_equal(request_sizes("1,2,3", sizes, 2), -1); /* more than fit */
    char *dl[] = {"download", "org/name@v1", "--revision", "v2", "--include", "*.json", "--include", "a b", NULL};
    assert_int_equal(request_parse(&r, REQ_DOWNLOAD, 8, dl), 0);
    assert_int_equal(r.u.download.include.n, 2);
    check_fails(&r, "both @v1 and --revision v2 given");
    r.u.download.revision = "v1";
    assert_int_equal(request_check(&r), 0);
    char cmd[256];
    assert_int_equal(request_command(&r, cmd, sizeof cmd), 0);
    assert_string_equal(cmd, "graft download 'org/name@v1' --include '*.json' --include 'a b' --revision v1");
    r.pos[0] = "not a repo";
    check_fails(&r, "not a repo");
    char *nt[] = {"download", "org/name", "--threads", "2", NULL}; /* download loads no model: no shared options */
    assert_int_equal(request_parse(&r, REQ_DOWNLOAD, 4, nt), -1);
}

/* ---- identity and folders ---- */

static char tmp[256];

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void convert_request(request *r, const char *teacher, const char *calib, int steps) {
    request_init(r, REQ_CONVERT);
    r->pos[0] = teacher, r->n_pos = 1;
    r->u.convert.strategy = "uniform", r->u.convert.keep = 0.5, r->u.convert.init = "taylor-calibrate";
    r->u.convert.calib = calib;
    r->u.convert.mo.steps = steps;
}

static void digest_of(const request *r, char *d) {
    cJSON *id;
    assert_int_equal(artifact_identity(r, &id, d), 0);
    cJSON_Delete(id);
}

static void identity_and_digest(void **state) {
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/graft_test_method_XXXXXX");
    assert_non_null(mkdtemp(tmp));
    char a[300], b[300], t[300], calib[300];
    snprintf(a, sizeof a, "%s/a", tmp);
    snprintf(b, sizeof b, "%s/b", tmp);
    mkdir(a, 0755), mkdir(b, 0755);
    snprintf(t, sizeof t, "%s/a/teacher.bin", tmp);
    write_file(t, "weights one");
    snprintf(b, sizeof b, "%s/b/teacher.bin", tmp);
    write_file(b, "weights two");
    snprintf(calib, sizeof calib, "%s/calib.txt", tmp);
    write_file(calib, "once upon a time");
    request r1, r2, r3, r4;
    char d1[65], d2[65], d3[65], d4[65];
    convert_request(&r1, t, calib, 10);
    convert_request(&r2, t, calib, 10);
    r2.u.convert.out = "elsewhere", r2.co.json = true, r2.co.threads = 3, r2.u.convert.force = true;
    convert_request(&r3, t, calib, 20);
    convert_request(&r4, b, calib, 10);
    digest_of(&r1, d1), digest_of(&r2, d2), digest_of(&r3, d3), digest_of(&r4, d4);
    assert_string_equal(d1, d2);         /* where it goes and how it is shown: the same request */
    assert_string_not_equal(d1, d3);     /* other Stage 2 steps */
    assert_string_not_equal(d1, d4);     /* the same file name, other bytes */
    write_file(calib, "once upon a time, again");
    digest_of(&r1, d2);
    assert_string_not_equal(d1, d2);     /* other calibration text */
    /* a train whose recall samples also go to a dump is the same request (a resume may name another file) */
    request t1, t2;
    request_init(&t1, REQ_TRAIN);
    t1.pos[0] = t, t1.n_pos = 1;
    t1.u.train.tc.teacher = t, t1.u.train.tc.recall_every = 4;
    t2 = t1;
    t2.u.train.tc.recall_dump = "recall.jsonl";
    digest_of(&t1, d1), digest_of(&t2, d2);
    assert_string_equal(d1, d2);
    /* a Hub repo id that is no path: its id and revision */
    cJSON *id = artifact_path_identity("owner/model@v1");
    assert_non_null(id);
    assert_string_equal(cJSON_GetObjectItem(id, "repo")->valuestring, "owner/model");
    assert_string_equal(cJSON_GetObjectItem(id, "revision")->valuestring, "v1");
    cJSON_Delete(id);
    assert_null(artifact_path_identity("./missing.bin"));
}

static void folders_claimed(void **state) {
    (void)state;
    char dir[300], cfg[400];
    snprintf(dir, sizeof dir, "%s/student", tmp);
    artifact_claim c;
    const char *d1 = "1111111111111111111111111111111111111111111111111111111111111111";
    const char *d2 = "2222222222222222222222222222222222222222222222222222222222222222";
    assert_int_equal(artifact_claim_dir(dir, "config.json", d1, false, "hint", &c), 0);
    assert_int_equal(c, ARTIFACT_NEW);
    mkdir(dir, 0755);
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    write_file(cfg, "{\"graft_request\": {\"digest\": \"1111111111111111111111111111111111111111111111111111111111111111\", "
                    "\"command\": \"graft convert m --steps 10\"}}");
    assert_int_equal(artifact_claim_dir(dir, "config.json", d1, false, "hint", &c), 0);
    assert_int_equal(c, ARTIFACT_SAME);
    assert_int_equal(artifact_claim_dir(dir, "config.json", d2, false, "pass --force", &c), -1);
    assert_non_null(strstr(gf_last_error(), "holds what another request made, with other options or inputs (1111111111: graft convert m --steps 10): pass --force"));
    assert_int_equal(artifact_claim_dir(dir, "config.json", d2, true, "hint", &c), 0);
    assert_int_equal(c, ARTIFACT_FORCED);
    assert_int_equal(artifact_check(dir, "config.json", d1), 0);
    assert_int_equal(artifact_check(dir, "config.json", d2), -1);
    assert_non_null(strstr(gf_last_error(), "no longer holds this row's artifact"));
    write_file(cfg, "{}"); /* a folder no recorded request made */
    assert_int_equal(artifact_claim_dir(dir, "config.json", d1, false, "hint", &c), -1);
    assert_non_null(strstr(gf_last_error(), "no recorded request"));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_every_type), cmocka_unit_test(defaults_print_bare), cmocka_unit_test(spelled_out),
        cmocka_unit_test(validation_messages),   cmocka_unit_test(identity_and_digest), cmocka_unit_test(folders_claimed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
