#include "method/reports.h"

#include <math.h>

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
