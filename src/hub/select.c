/* Which files of a repo a request selects. */
#include <fnmatch.h>
#include <string.h>

#include "hub/hub.h"

int hub_is_model_file(const char *name) {
    static const char *const exact[] = {"config.json", "generation_config.json", "tokenizer.json",
                                        "tokenizer_config.json"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (!strcmp(name, exact[i])) return 1;
    /* top-level safetensors weights and their index (model.safetensors.index.json) */
    if (strchr(name, '/')) return 0;
    return fnmatch("*.safetensors", name, 0) == 0 || fnmatch("*.safetensors.index.json", name, 0) == 0;
}

/* tokenizer.bin or tok*.bin in the checkpoint's folder (llama2.c's conventions). */
int hub_is_tokenizer_beside(const char *name, const char *checkpoint) {
    const char *cs = strrchr(checkpoint, '/'), *ns = strrchr(name, '/');
    size_t cdir = cs ? (size_t)(cs - checkpoint) : 0, ndir = ns ? (size_t)(ns - name) : 0;
    if (cdir != ndir || strncmp(checkpoint, name, cdir) != 0) return 0;
    const char *base = ns ? ns + 1 : name;
    if (!strcmp(name, checkpoint)) return 0;
    return !strcmp(base, "tokenizer.bin") || fnmatch("tok*.bin", base, 0) == 0;
}
