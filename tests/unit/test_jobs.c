/* Unit tests: the job runner, its event queue and self-pipe, typed payloads,
 * weighted phases, the cancel flag and its latency, the ETA, the CLI progress line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "core/error.h"
#include "jobs/cli_progress.h"
#include "jobs/eta.h"
#include "jobs/job.h"

/* the payload the dummy job publishes (EV_DATA) */
typedef struct {
    int layer, head;
    double value;
} dummy_stat;

typedef struct {
    int steps;          /* how many steps to run */
    int fail_at;        /* step that fails (-1: never) */
    int sleep_us;       /* per step */
    int stats_per_step; /* stat events per step */
} dummy_args;

static void sleep_us(int us) {
    struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static int dummy_job(job_ctx *ctx, void *p) {
    dummy_args *a = p;
    for (int i = 0; i < a->steps; i++) {
        if (job_cancelled(ctx)) return gf_fail("cancelled at step %d", i);
        if (i == a->fail_at) return gf_fail("dummy: step %d failed", i);
        for (int k = 0; k < a->stats_per_step; k++) {
            dummy_stat d = {i, k, i * 1000.0 + k};
            job_data(ctx, &d, sizeof d);
        }
        job_progress(ctx, i + 1, a->steps, "dummy");
        if (a->sleep_us) sleep_us(a->sleep_us);
    }
    int *result = malloc(sizeof *result);
    *result = a->steps;
    job_set_result(ctx, result);
    return 0;
}

/* Waits (bounded) on the wake fd and drains every event; returns the final one. */
static event drain_until_end(job_runner *jr, int *n_stats, int *n_progress, int *last_stat_layer) {
    event ev = {0}, last = {0};
    time_t t0 = time(NULL);
    while (time(NULL) - t0 < 20) {
        struct pollfd pfd = {.fd = job_wake_fd(jr), .events = POLLIN};
        poll(&pfd, 1, 10);
        job_clear_wake(jr);
        while (job_pop_event(jr, &ev)) {
            if (ev.kind == EV_DATA) {
                dummy_stat d;
                assert_int_equal(ev.data_len, sizeof d);
                memcpy(&d, ev.data, sizeof d);
                /* events arrive in order: layer never decreases, head cycles */
                if (last_stat_layer) {
                    assert_true(d.layer >= *last_stat_layer);
                    *last_stat_layer = d.layer;
                }
                assert_true(d.value == d.layer * 1000.0 + d.head);
                (*n_stats)++;
            } else if (ev.kind == EV_PROGRESS) {
                (*n_progress)++;
            } else if (event_is_final(ev.kind)) {
                return ev;
            }
            last = ev;
        }
    }
    fail_msg("job never finished");
    return last;
}

static void job_runs_to_done(void **state) {
    (void)state;
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    dummy_args a = {.steps = 20, .fail_at = -1, .stats_per_step = 3};
    assert_int_equal(job_start(&jr, "dummy", dummy_job, &a), 0);
    int n_stats = 0, n_prog = 0, last_layer = 0;
    event end = drain_until_end(&jr, &n_stats, &n_prog, &last_layer);
    assert_int_equal(end.kind, EV_DONE);
    assert_string_equal(end.job_name, "dummy");
    assert_non_null(end.result);
    assert_int_equal(*(int *)end.result, 20);
    free(end.result);
    assert_int_equal(n_stats, 60);
    assert_true(n_prog >= 1 && n_prog <= 20);
    job_wait(&jr);
    assert_false(job_running(&jr));
    job_runner_free(&jr);
}

static void job_error_path(void **state) {
    (void)state;
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    dummy_args a = {.steps = 10, .fail_at = 4, .stats_per_step = 1};
    assert_int_equal(job_start(&jr, "failing", dummy_job, &a), 0);
    int n_stats = 0, n_prog = 0;
    event end = drain_until_end(&jr, &n_stats, &n_prog, NULL);
    assert_int_equal(end.kind, EV_ERROR);
    assert_string_equal(end.text, "dummy: step 4 failed");
    assert_null(end.result);
    assert_int_equal(n_stats, 4);
    job_runner_free(&jr);
}

static void job_cancel_midway(void **state) {
    (void)state;
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    dummy_args a = {.steps = 100000, .fail_at = -1, .sleep_us = 1000, .stats_per_step = 1};
    assert_int_equal(job_start(&jr, "long", dummy_job, &a), 0);
    /* a second job is refused while the first runs */
    assert_int_equal(job_start(&jr, "other", dummy_job, &a), -1);
    assert_non_null(strstr(gf_last_error(), "long"));
    /* wait for some progress, then cancel */
    int n_prog = 0;
    event ev;
    for (int spins = 0; spins < 500 && n_prog < 3; spins++) {
        struct pollfd pfd = {.fd = job_wake_fd(&jr), .events = POLLIN};
        poll(&pfd, 1, 10);
        job_clear_wake(&jr);
        while (job_pop_event(&jr, &ev))
            if (ev.kind == EV_PROGRESS) n_prog++;
    }
    assert_true(job_running(&jr));
    job_cancel(&jr);
    int n_stats = 0;
    event end = drain_until_end(&jr, &n_stats, &n_prog, NULL);
    assert_int_equal(end.kind, EV_CANCELLED);
    assert_true(!strncmp(end.text, "cancelled", 9)); /* the job's own words */
    /* the runner measured how long the job took to stop after job_cancel */
    assert_true(end.cancel_latency_s >= 0 && end.cancel_latency_s < 5); /* a 1 ms step: 5 s means it never looked */
    job_wait(&jr);
    assert_false(job_running(&jr));
    /* the runner accepts a new job afterwards */
    dummy_args b = {.steps = 2, .fail_at = -1};
    assert_int_equal(job_start(&jr, "after", dummy_job, &b), 0);
    end = drain_until_end(&jr, &n_stats, &n_prog, NULL);
    assert_int_equal(end.kind, EV_DONE);
    free(end.result);
    job_runner_free(&jr);
}

/* Many events while the reader drains concurrently: none lost, order kept. */
static void job_many_events(void **state) {
    (void)state;
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    dummy_args a = {.steps = 2000, .fail_at = -1, .stats_per_step = 50};
    assert_int_equal(job_start(&jr, "flood", dummy_job, &a), 0);
    int n_stats = 0, n_prog = 0, last_layer = 0;
    event end = drain_until_end(&jr, &n_stats, &n_prog, &last_layer);
    assert_int_equal(end.kind, EV_DONE);
    free(end.result);
    assert_int_equal(n_stats, 2000 * 50);
    assert_int_equal(last_layer, 1999);
    job_runner_free(&jr);
}

static void queue_coalesces_progress(void **state) {
    (void)state;
    event_queue q;
    assert_int_equal(event_queue_init(&q), 0);
    for (int i = 0; i < 10; i++) {
        event ev = {.kind = EV_PROGRESS, .job_id = 1, .done = i};
        event_queue_push(&q, &ev);
    }
    event lg = {.kind = EV_LOG, .job_id = 1};
    strcpy(lg.text, "hello");
    event_queue_push(&q, &lg);
    event ev = {.kind = EV_PROGRESS, .job_id = 1, .done = 42};
    event_queue_push(&q, &ev);
    assert_int_equal(event_queue_size(&q), 3);
    struct pollfd pfd = {.fd = event_queue_wake_fd(&q), .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, 0), 1);
    event_queue_clear_wake(&q);
    assert_int_equal(poll(&pfd, 1, 0), 0);
    event out;
    assert_true(event_queue_pop(&q, &out));
    assert_int_equal(out.kind, EV_PROGRESS);
    assert_true(out.done == 9);
    assert_true(event_queue_pop(&q, &out));
    assert_string_equal(out.text, "hello");
    assert_true(event_queue_pop(&q, &out));
    assert_true(out.done == 42);
    assert_false(event_queue_pop(&q, &out));
    event_queue_free(&q);
}

static void cli_progress_line(void **state) {
    (void)state;
    event ev = {.kind = EV_PROGRESS, .fraction = 0.5, .done = 50, .total = 100, .rate = 10, .eta_s = 5};
    strcpy(ev.label, "stats");
    char line[256];
    cli_progress_format(line, sizeof line, &ev, 60);
    assert_true(strlen(line) <= 60);
    assert_non_null(strstr(line, "stats ["));
    assert_non_null(strstr(line, " 50%"));
    assert_non_null(strstr(line, "50/100"));
    assert_non_null(strstr(line, "eta 5s"));
    /* half the bar is filled */
    const char *b = strchr(line, '[') + 1;
    int hash = 0, dot = 0;
    for (; *b != ']'; b++) {
        if (*b == '#') hash++;
        else dot++;
    }
    assert_true(abs(hash - dot) <= 1);
}

static int stat_seen;
static void count_stats(const event *ev, void *user) {
    (void)user;
    if (ev->kind == EV_DATA) stat_seen++;
}

/* Phases: the whole job's fraction is the weighted sum, never decreases, and
 * an engine report named like a later phase enters it. */
static int phased_job(job_ctx *ctx, void *p) {
    (void)p;
    const job_phase ph[] = {{"a", 1}, {"b", 3}};
    job_set_phases(ctx, ph, 2);
    job_progress(ctx, 1, 2, "a");          /* 0.5 of a: 1/8 of the job */
    job_progress(ctx, 0, 2, "a");          /* a report going back: the fraction holds */
    progress_sink s = job_sink(ctx);
    progress_report(&s, "b", 1, 3);        /* enters b: (1 + 3 * 1/3) / 4 = 0.5 */
    job_progress(ctx, 5, 4, "b");          /* over 100 %: clamped */
    return 0;
}

static void job_phases_weighted(void **state) {
    (void)state;
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    assert_int_equal(job_start(&jr, "phased", phased_job, NULL), 0);
    double f[8];
    int n = 0, phase[8];
    event ev;
    for (time_t t0 = time(NULL); time(NULL) - t0 < 10;) {
        struct pollfd pfd = {.fd = job_wake_fd(&jr), .events = POLLIN};
        poll(&pfd, 1, 10);
        job_clear_wake(&jr);
        bool end = false;
        while (job_pop_event(&jr, &ev)) {
            if (ev.kind == EV_PROGRESS && n < 8) phase[n] = ev.phase, f[n++] = ev.fraction;
            end |= event_is_final(ev.kind);
        }
        if (end) break;
    }
    job_runner_free(&jr);
    /* progress events may coalesce in the queue: check what arrived, in order */
    assert_true(n >= 1);
    const double tol = 1e-12; /* exact arithmetic on small fractions */
    for (int i = 1; i < n; i++) assert_true(f[i] >= f[i - 1] - tol);
    assert_true(fabs(f[n - 1] - 1.0) <= tol);
    assert_int_equal(phase[n - 1], 1);
    for (int i = 0; i < n; i++) {
        assert_false(isnan(f[i]));
        if (phase[i] == 0) assert_true(fabs(f[i] - 0.125) <= tol);
    }
}

/* The sink's cancel flag is the runner's own: a cancel reaches engine loops at once. */
static int sink_job(job_ctx *ctx, void *p) {
    (void)p;
    progress_sink s = job_sink(ctx);
    if (s.cancel != job_cancel_flag(ctx)) return gf_fail("the sink has another cancel flag");
    while (!progress_cancelled(&s)) { /* an engine loop */
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return gf_fail("cancelled in the loop");
}

static void job_sink_cancel(void **state) {
    (void)state;
    job_runner jr;
    assert_int_equal(job_runner_init(&jr), 0);
    assert_int_equal(job_start(&jr, "sink", sink_job, NULL), 0);
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    job_cancel(&jr);
    int ns = 0, np = 0;
    event end = drain_until_end(&jr, &ns, &np, NULL);
    assert_int_equal(end.kind, EV_CANCELLED);
    assert_string_equal(end.text, "cancelled in the loop");
    assert_true(end.cancel_latency_s >= 0 && end.cancel_latency_s < 5); /* polled every 1 ms */
    job_runner_free(&jr);
}

/* The ETA: unknown at first, then counts down smoothly while the job keeps its pace. */
static void eta_counts_down(void **state) {
    (void)state;
    eta_smoother e;
    eta_reset(&e);
    assert_true(eta_update(&e, 0.5, 0.005) < 0); /* before 2 % and 10 s: unknown */
    /* a job at a steady 1 %/s: 100 s in all */
    double prev = eta_update(&e, 10, 0.10);
    assert_true(fabs(prev - 90) <= 1e-9); /* the first estimate: 0.9 left at 1 %/s (both rates agree) */
    for (int t = 11; t <= 99; t++) {
        double v = eta_update(&e, t, t / 100.0);
        assert_false(isnan(v));
        assert_true(v <= prev + 1e-9);       /* steady: never up */
        assert_true(prev - v <= 2.0 + 1e-9); /* smooth: at most 2 s less per second here */
        assert_true(fabs(v - (100 - t)) <= 1.0); /* and right: the steady job's true time left, within 1 s */
        prev = v;
    }
    assert_true(eta_update(&e, 131, 1.0) == 0);
}

/* A job that stalls (a long phase reporting nothing) is not shown as about to end: once the
 * quiet outlasts the estimate the ETA rises, and never sits at 0 while the job runs. */
static void eta_not_stuck_when_stalled(void **state) {
    (void)state;
    eta_smoother e;
    eta_reset(&e);
    double v = 0;
    for (int t = 1; t <= 50; t++) v = eta_update(&e, t, t / 100.0); /* 1 %/s: 50 s left */
    assert_true(fabs(v - 50) <= 1.0);
    double lowest = v;
    for (int t = 51; t <= 200; t++) { /* then nothing moves for 150 s */
        v = eta_update(&e, t, 0.50);
        if (v < lowest) lowest = v;
    }
    /* the estimate: the whole job's average (half in 200 s: 200 s left), and at least the quiet so
     * far (150 s); the shown time rises toward it once it is 25 % + 5 s over what is shown, so
     * it ends between the quiet and that estimate (5 % slack for the smoothing), never near 0 */
    assert_true(lowest >= 40);
    assert_true(v >= 0.95 * 150 && v <= 1.05 * 200);
}

/* A second half 4x slower than the first: the recent rate takes over and the ETA rises to the
 * true time left (within 15 %: the smoothing lags by about one time constant). */
static void eta_follows_a_slower_phase(void **state) {
    (void)state;
    eta_smoother e;
    eta_reset(&e);
    double v = 0;
    for (int t = 1; t <= 50; t++) v = eta_update(&e, t, t / 100.0); /* half the job at 1 %/s */
    for (int t = 51; t <= 150; t++) v = eta_update(&e, t, 0.50 + (t - 50) / 400.0); /* then 0.25 %/s */
    const double truth = (1 - 0.75) / 0.0025;                                         /* 100 s */
    assert_false(isnan(v));
    assert_true(fabs(v - truth) <= 0.15 * truth);
}

static void cli_runs_job(void **state) {
    (void)state;
    dummy_args a = {.steps = 5, .fail_at = -1, .stats_per_step = 2};
    void *res = NULL;
    stat_seen = 0;
    assert_int_equal(job_run_cli("cli", dummy_job, &a, &res, NULL, count_stats, NULL), 0);
    assert_non_null(res);
    assert_int_equal(*(int *)res, 5);
    free(res);
    assert_int_equal(stat_seen, 10);
    dummy_args b = {.steps = 5, .fail_at = 2};
    assert_int_equal(job_run_cli("cli", dummy_job, &b, &res, NULL, NULL, NULL), -1);
    assert_null(res);
    assert_string_equal(gf_last_error(), "dummy: step 2 failed");
}

/* a stop flag already set (a Ctrl-C while the command loaded) cancels the job at its next step
 * check: -1 with the job's own "cancelled" line, long before its 1,000 steps of 10 ms */
static void cli_stop_cancels_job(void **state) {
    (void)state;
    dummy_args a = {.steps = 1000, .fail_at = -1, .sleep_us = 10000};
    atomic_int stop = 2;
    void *res = NULL;
    assert_int_equal(job_run_cli("cli", dummy_job, &a, &res, &stop, NULL, NULL), -1);
    assert_null(res);
    int step = -1;
    assert_int_equal(sscanf(gf_last_error(), "cancelled at step %d", &step), 1);
    assert_true(step >= 0 && step < a.steps);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(job_runs_to_done),       cmocka_unit_test(job_error_path),
        cmocka_unit_test(job_cancel_midway),      cmocka_unit_test(job_many_events),
        cmocka_unit_test(queue_coalesces_progress), cmocka_unit_test(cli_progress_line),
        cmocka_unit_test(cli_runs_job),
        cmocka_unit_test(cli_stop_cancels_job),
        cmocka_unit_test(job_phases_weighted),
        cmocka_unit_test(job_sink_cancel),     cmocka_unit_test(eta_counts_down),
        cmocka_unit_test(eta_not_stuck_when_stalled),
        cmocka_unit_test(eta_follows_a_slower_phase),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
