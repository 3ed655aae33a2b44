#include "model/config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Defaults and facts from transformers' LlamaConfig / Qwen2Config /
 * Qwen3Config and their attention modules, and llama.cpp's converter. */
const model_arch_desc model_archs[ARCH_COUNT] = {
    [ARCH_LLAMA] = {ARCH_LLAMA, "llama", "LlamaForCausalLM", "Llama", false, false, 0, 2048, true},
    [ARCH_QWEN2] = {ARCH_QWEN2, "qwen2", "Qwen2ForCausalLM", "Qwen2/2.5", true, false, 0, 32768, false},
    [ARCH_QWEN3] = {ARCH_QWEN3, "qwen3", "Qwen3ForCausalLM", "Qwen3", false, true, 128, 32768, false},
};

const char *model_arch_name(model_arch a) { return (unsigned)a < ARCH_COUNT ? model_archs[a].name : "?"; }

const model_arch_desc *model_arch_by_name(const char *name) {
    for (int i = 0; i < ARCH_COUNT; i++)
        if (strcmp(name, model_archs[i].name) == 0) return &model_archs[i];
    return NULL;
}

const model_arch_desc *model_arch_by_hf_class(const char *hf_class) {
    for (int i = 0; i < ARCH_COUNT; i++)
        if (strcmp(hf_class, model_archs[i].hf_class) == 0) return &model_archs[i];
    return NULL;
}

static char arch_list[96];
static pthread_once_t arch_list_once = PTHREAD_ONCE_INIT;
static void build_arch_list(void) {
    size_t n = 0;
    for (int i = 0; i < ARCH_COUNT && n < sizeof arch_list; i++)
        n += (size_t)snprintf(arch_list + n, sizeof arch_list - n, "%s%s", i ? ", " : "", model_archs[i].name);
}

const char *model_arch_list(void) {
    pthread_once(&arch_list_once, build_arch_list);
    return arch_list;
}

const char *model_source_name(model_source s) {
    switch (s) {
    case SOURCE_HF: return "huggingface";
    case SOURCE_LLAMA2C: return "llama2.c";
    case SOURCE_GGUF: return "gguf";
    }
    return "?";
}
