/* Hugging Face folders: config.json + safetensors. (Being written.) */
#include "core/error.h"
#include "formats/loaders.h"

int load_hf_folder(model *m, const char *dir, const model_load_opts *opts) {
    (void)m;
    (void)opts;
    return gf_fail("%s: Hugging Face folders are not supported by this build yet", dir);
}
