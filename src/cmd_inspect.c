/* graft inspect MODEL: architecture, sizes, dtype, tokenizer, memory estimates:
 * argv -> inspect request -> load -> print. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/common.h"
#include "method/reports.h"
#include "method/mem_check.h"
#include "commands.h"
#include "core/error.h"

static void print_human(const model *m) {
    const model_config *c = &m->cfg;
    printf("model       %s\n", m->path);
    printf("format      %s (%s weights)\n", model_source_name(c->source), m->weights_dtype);
    printf("arch        %s\n", model_arch_name(c->arch));
    printf("layers      %d\n", c->n_layers);
    printf("hidden      %d (MLP %d)\n", c->dim, c->hidden_dim);
    printf("heads       %d query, %d key/value, head_dim %d\n", c->n_heads, c->n_kv_heads, c->head_dim);
    printf("vocab       %d\n", c->vocab_size);
    printf("context     %d\n", c->max_seq);
    printf("rope        theta %g, %s pairs%s\n", c->rope_theta,
           c->rope_pairing == ROPE_ADJACENT ? "adjacent" : "half-split",
           c->rope_scaling.type == ROPE_SCALING_LLAMA3   ? ", llama3 scaling"
           : c->rope_scaling.type == ROPE_SCALING_LINEAR ? ", linear scaling"
           : c->rope_scaling.type == ROPE_SCALING_FACTORS ? ", per-frequency factors"
                                                         : "");
    printf("norm eps    %g\n", c->norm_eps);
    printf("features    %s%s%s\n", c->qkv_bias ? "qkv-bias " : "", c->qk_norm ? "qk-norm " : "",
           c->tied_embeddings ? "tied-embeddings" : "untied-embeddings");
    printf("parameters  %zu\n", model_param_count(c));
    if (m->tok)
        printf("tokenizer   %s, %d tokens, bos %d, eos %d\n", tokenizer_kind(m->tok), tokenizer_vocab_size(m->tok),
               tokenizer_bos(m->tok), tokenizer_eos(m->tok));
    else
        printf("tokenizer   none found\n");
}


void model_summary_print(const model *m) { print_human(m); }

/* What the device would need for the model's usual jobs: the parameters
 * alone, perplexity at ctx, training a student with half its layers GDN at
 * batch x ctx (graft train's defaults otherwise). */
typedef struct {
    const char *name;
    mem_estimate e;
} inspect_job;

static int inspect_jobs(const model *m, int ctx, int batch, inspect_job out[3]) {
    gf_backend *be = m->be;
    mem_job j;
    out[0].name = "load";
    mem_job_init(&j, &m->cfg, be_act(be), !be_is_host(be));
    if (mem_estimate_job(&out[0].e, &j) != 0) return -1;
    out[1].name = "eval";
    cli_mem_eval(&j, 0, ctx, 0);
    if (mem_estimate_job(&out[1].e, &j) != 0) return -1;
    out[2].name = "train";
    mem_job_init(&j, &m->cfg, be_act(be), !be_is_host(be));
    j.train_B = batch, j.train_T = ctx, j.train_gdn = m->cfg.n_layers / 2, j.eval_B = batch;
    return mem_estimate_job(&out[2].e, &j);
}

int cmd_inspect(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_INSPECT, argc, argv, &done);
    if (rc || done) return rc;
    const common_opts co = r.co;
    int ctx = r.u.inspect.ctx;
    const int batch = r.u.inspect.batch;
    if ((rc = cli_setup("inspect", &co))) return rc;
    cli_ctx_plan(ctx, &co);
    model m;
    if (cli_load_model("inspect", r.pos[0], &co, &m) != 0) return 1;
    if (ctx == 0) ctx = m.cfg.max_seq > 0 && m.cfg.max_seq < 2048 ? m.cfg.max_seq : 2048;
    if (ctx < 2) ctx = 2;
    inspect_job jobs[3];
    size_t free_b = 0, total_b = 0;
    const bool info = be_mem_info(m.be, &free_b, &total_b) == 0;
    if (inspect_jobs(&m, ctx, batch, jobs) != 0) {
        model_free(&m);
        return cli_fail("inspect");
    }
    if (co.json) {
        cJSON *o = model_summary_json(&m);
        cJSON *mem = cli_mem_json();
        if (mem) {
            cJSON *est = cJSON_AddObjectToObject(mem, "estimates");
            for (int i = 0; i < 3; i++) cJSON_AddItemToObject(est, jobs[i].name, cli_mem_estimate_json(&jobs[i].e));
            cJSON_AddNumberToObject(mem, "ctx", ctx);
            cJSON_AddNumberToObject(mem, "batch", batch);
            cJSON_AddItemToObject(o, "memory", mem);
        }
        cli_print_json(o);
    } else {
        print_human(&m);
        char f[32], t[32], a[32], b[32], c[32];
        printf("device      %s", be_name(m.be));
        if (info && !be_is_host(m.be)) { /* a device's free memory (the host's varies run to run: --json has it) */
            mem_format(f, sizeof f, free_b);
            mem_format(t, sizeof t, total_b);
            printf(": %s free of %s", f, t);
        }
        mem_format(a, sizeof a, jobs[0].e.total);
        mem_format(b, sizeof b, jobs[1].e.total);
        mem_format(c, sizeof c, jobs[2].e.total);
        printf("\nmemory      load %s; eval at ctx %d: %s; train %d x %d, %d of %d layers GDN: %s\n", a, ctx, b, batch,
               ctx, m.cfg.n_layers / 2, m.cfg.n_layers, c);
    }
    model_free(&m);
    return 0;
}
