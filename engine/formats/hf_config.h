/* Hugging Face config.json -> model_config, for the decoder families graft
 * converts: llama (LlamaForCausalLM), qwen2 (Qwen2ForCausalLM, Qwen2.5 too)
 * and qwen3 (Qwen3ForCausalLM).
 *
 * Defaults for absent fields follow transformers' config classes:
 *   num_key_value_heads  = num_attention_heads
 *   head_dim             = hidden_size / num_attention_heads (llama, qwen2);
 *                          128 for qwen3 (Qwen3Config's default)
 *   rms_norm_eps         = 1e-6 (all three classes)
 *   rope_theta           = 10000
 *   max_position_embeddings = 2048 (llama), 32768 (qwen2, qwen3)
 *   tie_word_embeddings  = false (LlamaConfig, Qwen2Config and Qwen3Config all
 *                          pass False, overriding PretrainedConfig's True)
 *   bos/eos_token_id     = -1 (unknown); an eos list gives its first id
 * qkv biases: qwen2 always has them (its attention hard-codes bias=True on
 * q/k/v); llama and qwen3 have them when attention_bias is true (their o_proj
 * bias, which transformers adds too, is rejected by the weight loader).
 * hidden_size, intermediate_size, num_hidden_layers, num_attention_heads and
 * vocab_size are required. */
#ifndef GRAFT_FORMATS_HF_CONFIG_H
#define GRAFT_FORMATS_HF_CONFIG_H

#include <stddef.h>

#include "model/config.h"

/* Parses json[0..len). `where` names the file in error messages. */
int hf_config_parse(model_config *c, const char *json, size_t len, const char *where);
/* Reads and parses the file at path. */
int hf_config_load(model_config *c, const char *path);

#endif
