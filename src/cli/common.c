#include "cli/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/ranks.h"
#include "cli/signals.h"
#include "method/mem_check.h"
#include "cli/out_place.h"
#include "core/error.h"
#include "formats/model_load.h"
#include "hub/progress_bar.h"
#include "hub/resolve.h"
#include "student/student_io.h"

int cli_parse(int argc, char **argv, const opt_spec *specs, int n_specs, const char **pos,
              int min_pos, int max_pos, int *n_pos, const char *usage_line, common_opts *common) {
    opt_limits_command(argv[0]); /* a command's own ranges (opt_limits.c) */
    if (args_parse(argc, argv, specs, n_specs, pos, max_pos, n_pos) != 0) {
        fprintf(stderr, "graft %s: %s (see graft %s --help)\n", argv[0], gf_last_error(), argv[0]);
        return 2;
    }
    if (common && common->help) {
        fprintf(stderr, "usage: %s\n\noptions:\n", usage_line);
        args_usage(specs, n_specs);
        return -1;
    }
    if (*n_pos < min_pos) {
        fprintf(stderr, "graft %s: missing argument (usage: %s)\n", argv[0], usage_line);
        return 2;
    }
    return 0;
}

int cli_request(request *r, req_kind k, int argc, char **argv, bool *done) {
    *done = false;
    if (request_parse(r, k, argc, argv) != 0) {
        fprintf(stderr, "graft %s: %s (see graft %s --help)\n", argv[0], gf_last_error(), argv[0]);
        return 2;
    }
    if (r->co.help) {
        opt_spec specs[REQ_MAX_OPTS];
        const int n = request_bind(r, specs);
        fprintf(stderr, "usage: %s\n\noptions:\n", request_usage(k));
        args_usage(specs, n);
        *done = true;
        return 0;
    }
    if (request_check(r) != 0) {
        fprintf(stderr, "graft %s: %s\n", argv[0], gf_last_error());
        return 2;
    }
    return 0;
}

static gf_backend *cli_be;

static void close_backend(void) {
    be_set_default(NULL);
    cli_ranks_leave(cli_be); /* MPI_Finalize in a job of several ranks */
    be_close(cli_be);
    cli_be = NULL;
}

int cli_setup(const char *cmd, const common_opts *o) {
    if (opt_check("threads", o->threads) != 0) {
        fprintf(stderr, "graft %s: %s\n", cmd, gf_last_error());
        return 2;
    }
    bool capped;
    const int threads = opt_threads_cap(o->threads, &capped);
    if (capped) /* more OpenMP threads than processors only oversubscribe them */
        fprintf(stderr, "graft %s: --threads %d capped at the %d processors there are\n", cmd, o->threads, threads);
    /* --device and --threads, parsed once: the backend every model of this command lives on;
     * one of several ranks takes its own GPU (cli/ranks.h) */
    char dev[32];
    const gf_backend_opts bo = {cli_ranks_device(o->device, dev, sizeof dev), threads, false};
    gf_backend *be;
    if (be_open(&be, &bo) != 0) {
        fprintf(stderr, "graft %s: %s\n", cmd, gf_last_error());
        return 2;
    }
    if (cli_be) close_backend();
    else atexit(close_backend);
    cli_be = be;
    be_set_default(be);
    return cli_ranks_join(cmd, be);
}

gf_backend *cli_backend(void) { return be_default(); }

static struct {
    int ctx;
    bool extrapolate;
} ctx_plan;

void cli_ctx_plan(int ctx, const common_opts *o) {
    ctx_plan.ctx = ctx;
    ctx_plan.extrapolate = o->extrapolate_positions;
}

/* model_load_hooks.on_config of every model a command loads: --ctx against
 * its positions, the free space of the places it writes, then the memory
 * check (which --ctx sizes) */
static int on_config(void *ud, const model_config *cfg, gf_backend *be) {
    if (ctx_plan.ctx > 0 && opt_check_ctx(ctx_plan.ctx, cfg->max_seq, ctx_plan.extrapolate) != 0) return -1;
    if (cli_out_on_config(cfg) != 0) return -1; /* the free space of --out / --ckpt */
    return cli_mem_on_config(ud, cfg, be);
}

int cli_load_model(const char *cmd, const char *arg, const common_opts *o, model *m) {
    /* a local path as it is; ORG/NAME[@REV][:PATH] through the Hugging Face cache */
    hub_progress_bar bar;
    hub_progress_bar_init(&bar, stderr, o->json && !isatty(STDERR_FILENO));
    /* a command that catches Ctrl-C (cli/signals.h) stops a download at once; the partial file stays */
    hub_callbacks cb = {.on_event = hub_progress_bar_event, .user = &bar, .cancel = cli_stop_flag()};
    char *path = NULL;
    if (hub_resolve_model(arg, &path, &cb) != 0) {
        cli_fail(cmd);
        return -1;
    }
    if (student_folder_detect(path)) {
        /* its teacher part would load and silently run without the GDN layers */
        fprintf(stderr, "graft %s: %s is a student folder (hybrid GDN model); graft %s takes a teacher "
                "(students: graft eval / graft ppl)\n", cmd, arg, cmd);
        free(path);
        return -1;
    }
    const model_load_opts lo = {o->tokenizer, cli_backend()};
    const model_load_hooks hk = {on_config, NULL, 0};
    int rc = model_load_hooked(m, path, &lo, &hk);
    free(path);
    if (rc != 0) {
        cli_fail(cmd);
        return -1;
    }
    return 0;
}

int cli_load_student(const char *cmd, const char *arg, const common_opts *o, student *s) {
    char *path = NULL;
    hub_callbacks cb = {.cancel = cli_stop_flag()}; /* as cli_load_model's */
    if (hub_resolve_model(arg, &path, &cb) != 0) {
        cli_fail(cmd);
        return -1;
    }
    const model_load_opts lo = {o->tokenizer, cli_backend()};
    const model_load_hooks hk = {on_config, NULL, 0};
    int rc = student_load_with(s, path, &lo, &hk);
    free(path);
    if (rc != 0) {
        cli_fail(cmd);
        return -1;
    }
    return 0;
}

int cli_fail(const char *cmd) {
    fprintf(stderr, "graft %s: %s\n", cmd, gf_last_error());
    return 1;
}

void cli_print_json(cJSON *obj) {
    char *s = cJSON_PrintUnformatted(obj);
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        free(s);
    }
    cJSON_Delete(obj);
}

int cli_recall_dump_open(train_cli *tc, bool resume) {
    if (!cli_rank0() || !tc->recall_dump) return 0;
    return cli_out_claim("--recall-dump", tc->recall_dump, OUT_LOG, 1) != 0 || train_cli_recall_dump_open(tc, resume) != 0 ? -1 : 0;
}
