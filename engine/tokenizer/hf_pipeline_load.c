/* The normalizer, pre_tokenizer and decoder sections of tokenizer.json, turned
 * into the op lists of hf_tokenizer. Unsupported normalizers and
 * pre-tokenizers are load errors (ids would be wrong); decoders that do not
 * change the output bytes are ignored. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tokenizer/hf_tokenizer.h"

const char *hf_json_str(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

bool hf_json_bool(const cJSON *o, const char *key, bool dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v);
    return dflt;
}

int hf_load_normalizer(hf_tokenizer *h, const cJSON *n, const char *path) {
    if (!n || cJSON_IsNull(n)) return 0;
    const char *type = hf_json_str(n, "type");
    if (!type) return gf_fail("%s: normalizer without a type", path);
    if (!strcmp(type, "Sequence")) {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(n, "normalizers"))
            if (hf_load_normalizer(h, e, path) != 0) return -1;
        return 0;
    }
    norm_op op = {0};
    if (!strcmp(type, "NFC")) {
        op.kind = NORM_NFC;
    } else if (!strcmp(type, "Prepend") && hf_json_str(n, "prepend")) {
        op.kind = NORM_PREPEND;
        op.a = gf_strdup(hf_json_str(n, "prepend"));
        op.alen = strlen(op.a);
    } else if (!strcmp(type, "Replace") && hf_json_str(cJSON_GetObjectItemCaseSensitive(n, "pattern"), "String") &&
               hf_json_str(n, "content")) {
        op.kind = NORM_REPLACE;
        op.a = gf_strdup(hf_json_str(cJSON_GetObjectItemCaseSensitive(n, "pattern"), "String"));
        op.alen = strlen(op.a);
        op.b = gf_strdup(hf_json_str(n, "content"));
        op.blen = strlen(op.b);
    } else {
        return gf_fail("%s: normalizer %s is not supported (NFC, Prepend, Replace of a string, Sequence)", path, type);
    }
    h->norm = gf_realloc(h->norm, (size_t)(h->n_norm + 1) * sizeof *h->norm);
    h->norm[h->n_norm++] = op;
    return 0;
}

static const char GPT2_REGEX[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static int push_pre(hf_tokenizer *h, pre_op op) {
    h->pre = gf_realloc(h->pre, (size_t)(h->n_pre + 1) * sizeof *h->pre);
    h->pre[h->n_pre++] = op;
    return 0;
}

int hf_load_pre_tokenizer(hf_tokenizer *h, const cJSON *p, const char *path, bool *bytelevel) {
    if (!p || cJSON_IsNull(p)) return 0;
    const char *type = hf_json_str(p, "type");
    if (!type) return gf_fail("%s: pre_tokenizer without a type", path);
    pre_op op = {0};
    if (!strcmp(type, "Sequence")) {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(p, "pretokenizers"))
            if (hf_load_pre_tokenizer(h, e, path, bytelevel) != 0) return -1;
        return 0;
    }
    if (!strcmp(type, "Split")) {
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(p, "pattern");
        const char *behavior = hf_json_str(p, "behavior");
        if (hf_json_bool(p, "invert", false) || !behavior || strcmp(behavior, "Isolated") != 0)
            return gf_fail("%s: Split pre-tokenizer supports only behavior Isolated without invert", path);
        const char *rx = hf_json_str(pat, "Regex"), *lit = hf_json_str(pat, "String");
        char *quoted = NULL;
        if (!rx && lit) { /* a literal pattern, quoted for PCRE2 */
            quoted = gf_malloc(strlen(lit) + 5);
            sprintf(quoted, "\\Q%s\\E", lit);
            rx = quoted;
        }
        if (!rx) return gf_fail("%s: Split pre-tokenizer without a pattern", path);
        op.kind = PRE_SPLIT_REGEX;
        op.regex = pretok_regex_compile(rx);
        if (!op.regex) {
            free(quoted);
            return gf_fail_prefix(path);
        }
        op.pattern = gf_strdup(quoted ? lit : rx);
        op.pattern_literal = quoted != NULL;
        free(quoted);
        return push_pre(h, op);
    }
    if (!strcmp(type, "ByteLevel")) {
        *bytelevel = true;
        op.kind = PRE_BYTELEVEL;
        op.add_prefix_space = hf_json_bool(p, "add_prefix_space", true);
        if (hf_json_bool(p, "use_regex", true)) {
            op.regex = pretok_regex_compile(GPT2_REGEX);
            if (!op.regex) return gf_fail_prefix(path);
        }
        return push_pre(h, op);
    }
    if (!strcmp(type, "Metaspace")) {
        op.kind = PRE_METASPACE;
        const char *rep = hf_json_str(p, "replacement");
        if (!rep || strlen(rep) == 0 || strlen(rep) >= sizeof op.meta)
            return gf_fail("%s: Metaspace pre-tokenizer needs a one-character replacement", path);
        strcpy(op.meta, rep);
        op.meta_len = strlen(rep);
        const char *scheme = hf_json_str(p, "prepend_scheme");
        if (scheme) {
            if (!strcmp(scheme, "always")) op.scheme = PREPEND_ALWAYS;
            else if (!strcmp(scheme, "first")) op.scheme = PREPEND_FIRST;
            else if (!strcmp(scheme, "never")) op.scheme = PREPEND_NEVER;
            else return gf_fail("%s: Metaspace prepend_scheme \"%s\" is unknown", path, scheme);
        } else {
            op.scheme = hf_json_bool(p, "add_prefix_space", true) ? PREPEND_ALWAYS : PREPEND_NEVER;
        }
        op.split = hf_json_bool(p, "split", true);
        return push_pre(h, op);
    }
    return gf_fail("%s: pre-tokenizer %s is not supported (Split, ByteLevel, Metaspace, Sequence)", path, type);
}

void hf_load_decoder(hf_tokenizer *h, const cJSON *d) {
    const char *type = hf_json_str(d, "type");
    if (!type) return;
    if (!strcmp(type, "Sequence")) {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(d, "decoders")) hf_load_decoder(h, e);
    } else if (!strcmp(type, "ByteLevel")) {
        h->dec_bytelevel = true;
    } else if (!strcmp(type, "ByteFallback")) {
        h->dec_byte_fallback = true;
    } else if (!strcmp(type, "Replace")) {
        const char *from = hf_json_str(cJSON_GetObjectItemCaseSensitive(d, "pattern"), "String");
        const char *to = hf_json_str(d, "content");
        if (from && to && !strcmp(to, " ") && strlen(from) < sizeof h->dec_meta) {
            strcpy(h->dec_meta, from);
            h->dec_meta_len = strlen(from);
        }
    } else if (!strcmp(type, "Strip")) {
        const cJSON *start = cJSON_GetObjectItemCaseSensitive(d, "start");
        const char *content = hf_json_str(d, "content");
        if (cJSON_IsNumber(start) && start->valueint >= 1 && content && !strcmp(content, " ")) h->dec_strip_first = true;
    } else if (!strcmp(type, "Metaspace")) {
        const char *rep = hf_json_str(d, "replacement");
        if (rep && strlen(rep) < sizeof h->dec_meta) {
            strcpy(h->dec_meta, rep);
            h->dec_meta_len = strlen(rep);
        }
        const char *scheme = hf_json_str(d, "prepend_scheme");
        h->dec_strip_first = scheme ? strcmp(scheme, "never") != 0 : hf_json_bool(d, "add_prefix_space", true);
    }
    /* Fuse and others change nothing for byte output */
}

