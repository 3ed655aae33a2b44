/* graft inspect MODEL: architecture, sizes, dtype, tokenizer. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/common.h"
#include "commands.h"

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

/* A float as its shortest decimal (1e-06, not 9.99999997e-07). */
static double float_value(float f) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", f);
    return strtod(buf, NULL);
}

cJSON *model_summary_json(const model *m) {
    const model_config *c = &m->cfg;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", m->path);
    cJSON_AddStringToObject(o, "format", model_source_name(c->source));
    cJSON_AddStringToObject(o, "dtype", m->weights_dtype);
    cJSON_AddStringToObject(o, "arch", model_arch_name(c->arch));
    cJSON_AddNumberToObject(o, "layers", c->n_layers);
    cJSON_AddNumberToObject(o, "hidden_size", c->dim);
    cJSON_AddNumberToObject(o, "intermediate_size", c->hidden_dim);
    cJSON_AddNumberToObject(o, "heads", c->n_heads);
    cJSON_AddNumberToObject(o, "kv_heads", c->n_kv_heads);
    cJSON_AddNumberToObject(o, "head_dim", c->head_dim);
    cJSON_AddNumberToObject(o, "vocab_size", c->vocab_size);
    cJSON_AddNumberToObject(o, "max_seq", c->max_seq);
    cJSON_AddNumberToObject(o, "rope_theta", float_value(c->rope_theta));
    cJSON_AddStringToObject(o, "rope_pairing", c->rope_pairing == ROPE_ADJACENT ? "adjacent" : "half");
    cJSON_AddStringToObject(o, "rope_scaling", c->rope_scaling.type == ROPE_SCALING_LLAMA3   ? "llama3"
                                               : c->rope_scaling.type == ROPE_SCALING_LINEAR ? "linear"
                                               : c->rope_scaling.type == ROPE_SCALING_FACTORS ? "factors"
                                                                                             : "none");
    cJSON_AddNumberToObject(o, "norm_eps", float_value(c->norm_eps));
    cJSON_AddBoolToObject(o, "qkv_bias", c->qkv_bias);
    cJSON_AddBoolToObject(o, "qk_norm", c->qk_norm);
    cJSON_AddBoolToObject(o, "tied_embeddings", c->tied_embeddings);
    cJSON_AddNumberToObject(o, "parameters", (double)model_param_count(c));
    if (m->tok) {
        cJSON *t = cJSON_AddObjectToObject(o, "tokenizer");
        cJSON_AddStringToObject(t, "kind", tokenizer_kind(m->tok));
        cJSON_AddNumberToObject(t, "vocab_size", tokenizer_vocab_size(m->tok));
        cJSON_AddNumberToObject(t, "bos", tokenizer_bos(m->tok));
        cJSON_AddNumberToObject(t, "eos", tokenizer_eos(m->tok));
    } else {
        cJSON_AddNullToObject(o, "tokenizer");
    }
    return o;
}

void model_summary_print(const model *m) { print_human(m); }

int cmd_inspect(int argc, char **argv) {
    common_opts co;
    common_opts_default(&co);
    opt_spec specs[] = {COMMON_OPTS(co)};
    const char *pos[1];
    int np, rc = cli_parse(argc, argv, specs, sizeof specs / sizeof *specs, pos, 1, 1, &np,
                           "graft inspect MODEL [--json]", &co);
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = cli_setup("inspect", &co))) return rc;
    model m;
    if (cli_load_model("inspect", pos[0], &co, &m) != 0) return 1;
    if (co.json)
        cli_print_json(model_summary_json(&m));
    else
        print_human(&m);
    model_free(&m);
    return 0;
}
