#include "student/calib_split.h"

#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "data/text_tokens.h"

void split_spec_default(split_spec *s) {
    s->ctx = 256;
    s->n_calib = 4;
    s->n_heldout = 1;
    s->sel_windows = 8;
    s->eval_windows = 64;
}

static void slice_with_bos(int_vec *out, int bos, const int *ids, size_t begin, size_t end) {
    if (bos >= 0) int_vec_push(out, bos);
    for (size_t i = begin; i < end; i++) int_vec_push(out, ids[i]);
}

/* Same file by identity (device + inode), so ./a.txt and a.txt split too. */
static int same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return strcmp(a, b) == 0;
}

int token_split_make(token_split *out, const tokenizer *tok, const char *calib_path, const char *eval_path,
                     const split_spec *sp) {
    memset(out, 0, sizeof *out);
    if (sp->ctx < 2) return gf_fail("--ctx must be at least 2, got %d", sp->ctx);
    if (sp->n_calib < 1) return gf_fail("--calib-seqs must be at least 1, got %d", sp->n_calib);
    const int bos = tokenizer_bos(tok);
    const size_t body = bos >= 0 ? (size_t)sp->ctx - 1 : (size_t)sp->ctx;
    int_vec cids = {0}, eids = {0};
    int rc = -1;
    if (text_file_tokens(tok, calib_path, false, &cids) != 0) goto done;
    out->calib_tokens_total = cids.len;
    if (cids.len < body * (size_t)sp->n_calib) {
        gf_fail("%s: calibration text holds %zu tokens, fewer than %d sequence%s of %d", calib_path, cids.len,
                sp->n_calib, sp->n_calib == 1 ? "" : "s", sp->ctx);
        goto done;
    }
    if (cut_sequences(cids.data, cids.len, 0, bos, sp->ctx, sp->n_calib, &out->calib, &out->n_calib) != 0) goto done;
    size_t at = body * (size_t)sp->n_calib;
    int nh = sp->n_heldout;
    if (nh > 0 && (cids.len - at) / body < (size_t)nh) nh = (int)((cids.len - at) / body);
    if (nh > 0 && cut_sequences(cids.data, cids.len, at, bos, sp->ctx, nh, &out->heldout, &out->n_heldout) != 0)
        goto done;
    at += body * (size_t)out->n_heldout;
    out->heldout_end = at;
    if (eval_path) {
        out->same_file = same_file(calib_path, eval_path);
        const int_vec *e = &cids;
        size_t start = at;
        if (!out->same_file) {
            if (text_file_tokens(tok, eval_path, false, &eids) != 0) goto done;
            e = &eids;
            start = 0;
        }
        out->eval_tokens_total = e->len;
        size_t sel_end = start + body * (size_t)sp->sel_windows;
        if (sel_end > e->len) sel_end = e->len;
        out->select_begin = start;
        out->select_end = sel_end;
        slice_with_bos(&out->select, bos, e->data, start, sel_end);
        size_t eb = e->len / 2 > sel_end ? e->len / 2 : sel_end;
        size_t ee = e->len;
        if (sp->eval_windows > 0 && eb + body * (size_t)sp->eval_windows < ee) ee = eb + body * (size_t)sp->eval_windows;
        if (ee < eb + 2) {
            gf_fail("%s: no tokens left for evaluation after calibration and selection (%zu tokens in all)", eval_path,
                    e->len);
            goto done;
        }
        out->eval_begin = eb;
        out->eval_end = ee;
        slice_with_bos(&out->eval, bos, e->data, eb, ee);
    }
    rc = 0;
done:
    int_vec_free(&cids);
    int_vec_free(&eids);
    if (rc != 0) token_split_free(out);
    return rc;
}

void token_split_free(token_split *s) {
    int_vec_free(&s->calib);
    int_vec_free(&s->heldout);
    int_vec_free(&s->select);
    int_vec_free(&s->eval);
    memset(s, 0, sizeof *s);
}
