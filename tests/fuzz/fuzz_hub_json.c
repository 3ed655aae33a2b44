/* libFuzzer harness: the Hub's JSON answers (model info: the file list, sizes
 * and LFS hashes) and the repo references graft parses (ORG/NAME[@REV][:PATH]).
 * What parses is used: every file is looked up by name, and every accepted
 * file name must be a relative path that stays inside the snapshot. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "harness.h"
#include "hub/model_info.h"
#include "hub/repo_ref.h"

/* A relative path whose every '/'-separated part is a real name. */
static bool stays_inside(const char *p) {
    if (!*p || *p == '/') return false;
    for (const char *s = p;;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return false;
        if (!e) return true;
        s = e + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    hub_model_info mi;
    if (hub_parse_model_info(text, &mi) == 0) {
        for (int i = 0; i < mi.n_files; i++) {
            const hub_sibling *f = &mi.files[i];
            if (!stays_inside(f->name)) abort();
            if (!hub_model_info_find(&mi, f->name)) abort();
            if (f->lfs && strlen(f->sha256) != 64) abort();
        }
        hub_model_info_free(&mi);
    } else {
        fuzz_rejected("hub_parse_model_info");
    }
    hub_ref ref;
    if (hub_parse_ref(text, &ref) == 0) {
        char *url = hub_url_resolve("https://huggingface.co", ref.repo, ref.revision, ref.path[0] ? ref.path : "x");
        free(url);
    }
    free(text);
    gf_clear_error();
    return 0;
}
