#include "method/reports.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "method/json_fields.h"

cJSON *attn_stats_json(const attn_stats *s) {
    cJSON *layers = cJSON_CreateArray();
    for (int l = 0; l < s->n_layers; l++) {
        cJSON *lo = cJSON_CreateObject();
        cJSON_AddNumberToObject(lo, "layer", l);
        cJSON *heads = cJSON_AddArrayToObject(lo, "heads");
        for (int h = 0; h < s->n_heads; h++) {
            cJSON *ho = cJSON_CreateObject();
            cJSON_AddNumberToObject(ho, "head", h);
            cJSON_AddNumberToObject(ho, "mean_distance", attn_stats_mean_distance(s, l, h));
            cJSON_AddNumberToObject(ho, "entropy", attn_stats_entropy(s, l, h));
            cJSON_AddNumberToObject(ho, "concentration", attn_stats_concentration(s, l, h));
            cJSON_AddNumberToObject(ho, "output_rms", attn_stats_output_rms(s, l, h));
            cJSON_AddNumberToObject(ho, "mean_distance_no_sink", attn_stats_mean_distance_nosink(s, l, h));
            cJSON_AddNumberToObject(ho, "sink_share", attn_stats_sink_share(s, l, h));
            cJSON_AddItemToArray(heads, ho);
        }
        cJSON_AddItemToArray(layers, lo);
    }
    return layers;
}

cJSON *split_json(const token_split *sp, const char *calib, const char *text) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "calib_file", calib);
    if (text) cJSON_AddStringToObject(o, "eval_file", text);
    cJSON_AddBoolToObject(o, "same_file", sp->same_file);
    cJSON_AddNumberToObject(o, "calib_seqs", sp->n_calib);
    cJSON_AddNumberToObject(o, "heldout_seqs", sp->n_heldout);
    cJSON_AddNumberToObject(o, "seq_len", sp->n_calib ? (double)(sp->calib.len / sp->n_calib) : 0);
    cJSON_AddNumberToObject(o, "calib_stream_tokens", (double)sp->calib_tokens_total);
    cJSON_AddNumberToObject(o, "heldout_end", (double)sp->heldout_end);
    cJSON_AddNumberToObject(o, "select_begin", (double)sp->select_begin);
    cJSON_AddNumberToObject(o, "select_end", (double)sp->select_end);
    cJSON_AddNumberToObject(o, "eval_begin", (double)sp->eval_begin);
    cJSON_AddNumberToObject(o, "eval_end", (double)sp->eval_end);
    return o;
}

cJSON *selection_json(const layer_selection *sel) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "strategy", strategy_name(sel->strategy));
    cJSON *k = cJSON_AddArrayToObject(o, "kept_layers");
    for (int i = 0; i < sel->k; i++) cJSON_AddItemToArray(k, cJSON_CreateNumber(sel->kept[i]));
    cJSON *sc = cJSON_AddArrayToObject(o, "scores");
    for (int l = 0; l < sel->L; l++)
        cJSON_AddItemToArray(sc, isfinite(sel->score[l]) ? cJSON_CreateNumber(sel->score[l]) : cJSON_CreateNull());
    cJSON_AddStringToObject(o, "score_meaning",
                            sel->strategy == STRATEGY_AR      ? "held-out perplexity with this layer's attention zeroed (keep highest)"
                            : sel->strategy == STRATEGY_GA_S2 ? "zero-shot perplexity when only this layer keeps attention (keep lowest)"
                                                              : "none");
    return o;
}

/* A float as its shortest decimal (1e-06, not 9.99999997e-07). */
static double float_value(float f) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", f);
    return strtod(buf, NULL);
}

#define CONFIG_FIELD(member, key) JSON_FIELD(model_config, member, key, INT)
static const json_field config_sizes[] = {
    CONFIG_FIELD(n_layers, "layers"),
    CONFIG_FIELD(dim, "hidden_size"),
    CONFIG_FIELD(hidden_dim, "intermediate_size"),
    CONFIG_FIELD(n_heads, "heads"),
    CONFIG_FIELD(n_kv_heads, "kv_heads"),
    CONFIG_FIELD(head_dim, "head_dim"),
    CONFIG_FIELD(vocab_size, "vocab_size"),
    CONFIG_FIELD(max_seq, "max_seq"),
};

cJSON *model_summary_json(const model *m) {
    const model_config *c = &m->cfg;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", m->path);
    cJSON_AddStringToObject(o, "format", model_source_name(c->source));
    cJSON_AddStringToObject(o, "dtype", m->weights_dtype);
    cJSON_AddStringToObject(o, "arch", model_arch_name(c->arch));
    json_fields_write(o, c, config_sizes, JSON_FIELDS_COUNT(config_sizes));
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

#define POINT_FIELD(member, key, KIND) JSON_FIELD(decode_bench_point, member, key, KIND)
static const json_field point_fields[] = {
    POINT_FIELD(context, "context", INT),
    POINT_FIELD(batch, "batch", INT),
    POINT_FIELD(tokens, "tokens", INT),
    POINT_FIELD(prefill_chunk, "prefill_chunk", INT),
    POINT_FIELD(prefill_s, "prefill_s", DOUBLE),
    POINT_FIELD(prefill_tok_s, "prefill_tok_s", DOUBLE),
    POINT_FIELD(decode_s, "decode_s", DOUBLE),
    POINT_FIELD(decode_tok_s, "decode_tok_s", DOUBLE),
    POINT_FIELD(ms_per_step, "ms_per_step", DOUBLE),
    POINT_FIELD(prefill_cpu_s, "prefill_cpu_s", DOUBLE),
    POINT_FIELD(decode_cpu_s, "decode_cpu_s", DOUBLE),
};
static const json_field point_memory_fields[] = {
    POINT_FIELD(kv_bytes_per_seq, "kv_cache", SIZE),
    POINT_FIELD(state_bytes_per_seq, "gdn_state", SIZE),
};

cJSON *decode_bench_point_json(const decode_bench_point *p) {
    cJSON *o = cJSON_CreateObject();
    json_fields_write(o, p, point_fields, JSON_FIELDS_COUNT(point_fields));
    cJSON *m = cJSON_AddObjectToObject(o, "memory_per_seq");
    json_fields_write(m, p, point_memory_fields, JSON_FIELDS_COUNT(point_memory_fields));
    cJSON_AddNumberToObject(m, "total", (double)(p->kv_bytes_per_seq + p->state_bytes_per_seq));
    cJSON_AddNumberToObject(o, "run_bytes", (double)p->run_bytes);
    return o;
}

static const json_field sample_fields[] = {
    JSON_FIELD(recall_sample, length, "length", INT),
    JSON_FIELD(recall_sample, depth, "depth", DOUBLE),
    JSON_FIELD(recall_sample, index, "index", INT),
    JSON_FIELD(recall_sample, max_new, "max_new", INT),
};

cJSON *recall_sample_json(const recall_sample *s, const tokenizer *tok) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", recall_task_name(s->task));
    json_fields_write(o, s, sample_fields, JSON_FIELDS_COUNT(sample_fields));
    cJSON_AddItemToObject(o, "ids", cJSON_CreateIntArray(s->ids, s->n_ids));
    char *text = tokenizer_decode(tok, s->ids, (size_t)s->n_ids, NULL);
    cJSON_AddStringToObject(o, "text", text);
    free(text);
    cJSON_AddItemToObject(o, "answers", cJSON_CreateStringArray((const char *const *)s->answers, s->n_answers));
    cJSON_AddStringToObject(o, "pred", s->pred);
    cJSON_AddNumberToObject(o, "score", s->score);
    return o;
}

void recall_dump_sample(FILE *f, const recall_sample *s, const tokenizer *tok, const recall_dump_at *at) {
    cJSON *o = recall_sample_json(s, tok);
    if (at) {
        cJSON_AddStringToObject(o, "run", at->run ? at->run : "");
        cJSON_AddNumberToObject(o, "step", (double)at->step);
        cJSON_AddNumberToObject(o, "tokens", (double)at->tokens);
    }
    char *line = cJSON_PrintUnformatted(o);
    fprintf(f, "%s\n", line);
    fflush(f);
    free(line);
    cJSON_Delete(o);
}
