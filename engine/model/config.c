#include "model/config.h"

const char *model_arch_name(model_arch a) {
    switch (a) {
    case ARCH_LLAMA: return "llama";
    case ARCH_QWEN2: return "qwen2";
    case ARCH_QWEN3: return "qwen3";
    }
    return "?";
}

const char *model_source_name(model_source s) {
    switch (s) {
    case SOURCE_HF: return "huggingface";
    case SOURCE_LLAMA2C: return "llama2.c";
    case SOURCE_GGUF: return "gguf";
    }
    return "?";
}
