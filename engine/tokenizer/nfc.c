/* NFC in three steps on each run of text that may change: full canonical
 * decomposition, stable sort of combining marks by class, then composition of
 * each mark with the last starter when not blocked. Runs are delimited by
 * "stable" code points (class 0, NFC quick check Yes), which never interact
 * with their neighbours, so everything else is copied unchanged. */
#include "tokenizer/nfc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tokenizer/nfc_tables.h"
#include "tokenizer/utf8.h"

enum { S_BASE = 0xAC00, L_BASE = 0x1100, V_BASE = 0x1161, T_BASE = 0x11A7, L_COUNT = 19, V_COUNT = 21,
       T_COUNT = 28, N_COUNT = V_COUNT * T_COUNT, S_COUNT = L_COUNT * N_COUNT };

int nfc_ccc(uint32_t cp) {
    if (cp < 0x300) return 0;
    int lo = 0, hi = nfc_ccc_ranges_len - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < nfc_ccc_ranges[mid][0]) hi = mid - 1;
        else if (cp > nfc_ccc_ranges[mid][1]) lo = mid + 1;
        else return (int)nfc_ccc_ranges[mid][2];
    }
    return 0;
}

static bool unstable(uint32_t cp) {
    if (cp < 0x300) return false;
    int lo = 0, hi = nfc_unstable_ranges_len - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < nfc_unstable_ranges[mid][0]) hi = mid - 1;
        else if (cp > nfc_unstable_ranges[mid][1]) lo = mid + 1;
        else return true;
    }
    return false;
}

typedef struct {
    uint32_t *a;
    size_t n, cap;
} cp_buf;

static void cp_push(cp_buf *b, uint32_t cp) {
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 32;
        b->a = gf_realloc(b->a, b->cap * sizeof *b->a);
    }
    b->a[b->n++] = cp;
}

static void decompose(uint32_t cp, cp_buf *out) {
    if (cp >= S_BASE && cp < S_BASE + S_COUNT) {
        uint32_t s = cp - S_BASE;
        cp_push(out, L_BASE + s / N_COUNT);
        cp_push(out, V_BASE + (s % N_COUNT) / T_COUNT);
        if (s % T_COUNT) cp_push(out, T_BASE + s % T_COUNT);
        return;
    }
    int lo = 0, hi = nfc_decomp_index_len - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < nfc_decomp_index[mid][0]) hi = mid - 1;
        else if (cp > nfc_decomp_index[mid][0]) lo = mid + 1;
        else {
            for (uint32_t k = 0; k < nfc_decomp_index[mid][2]; k++)
                cp_push(out, nfc_decomp_data[nfc_decomp_index[mid][1] + k]);
            return;
        }
    }
    cp_push(out, cp);
}

/* The primary composite of (a, b), or 0. */
static uint32_t compose(uint32_t a, uint32_t b) {
    if (a >= L_BASE && a < L_BASE + L_COUNT && b >= V_BASE && b < V_BASE + V_COUNT)
        return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT;
    if (a >= S_BASE && a < S_BASE + S_COUNT && (a - S_BASE) % T_COUNT == 0 && b > T_BASE && b < T_BASE + T_COUNT)
        return a + (b - T_BASE);
    int lo = 0, hi = nfc_comp_pairs_len - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const uint32_t *p = nfc_comp_pairs[mid];
        if (a < p[0] || (a == p[0] && b < p[1])) hi = mid - 1;
        else if (a > p[0] || b > p[1]) lo = mid + 1;
        else return p[2];
    }
    return 0;
}

/* Normalizes one run of code points in place (b->n may shrink). */
static void normalize_run(cp_buf *b) {
    /* canonical ordering: insertion sort of each run of non-starters */
    for (size_t i = 1; i < b->n; i++) {
        int c = nfc_ccc(b->a[i]);
        if (c == 0) continue;
        size_t j = i;
        uint32_t x = b->a[i];
        while (j > 0 && nfc_ccc(b->a[j - 1]) > c) {
            b->a[j] = b->a[j - 1];
            j--;
        }
        b->a[j] = x;
    }
    /* composition; last_cc = -1 while the last kept code point is the starter */
    size_t n = 0;
    long starter = -1;
    int last_cc = -1;
    for (size_t i = 0; i < b->n; i++) {
        uint32_t c = b->a[i];
        int cc = nfc_ccc(c);
        if (starter >= 0 && (last_cc == -1 || (last_cc != 0 && last_cc < cc))) {
            uint32_t comp = compose(b->a[starter], c);
            if (comp) {
                b->a[starter] = comp;
                continue;
            }
        }
        if (cc == 0) {
            starter = (long)n;
            last_cc = -1;
        } else {
            last_cc = cc;
        }
        b->a[n++] = c;
    }
    b->n = n;
}

char *nfc_normalize(const char *s, size_t len, size_t *out_len) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k;
    /* quick check: the first code point that may change */
    size_t last_stable = 0;
    while (i < len) {
        if (u[i] < 0x80) { last_stable = i++; continue; }
        uint32_t cp = utf8_decode(u + i, len - i, &k);
        if (unstable(cp)) break;
        last_stable = i;
        i += k;
    }
    if (i >= len) return NULL;

    size_t cap = len * 2 + 64, o = last_stable;
    char *out = gf_malloc(cap);
    memcpy(out, s, last_stable);
    cp_buf run = {0};
    i = last_stable;
    while (i < len) {
        /* a run: one stable code point (or the start), then unstable ones */
        run.n = 0;
        size_t j = i;
        bool first = true;
        while (j < len) {
            uint32_t cp = utf8_decode(u + j, len - j, &k);
            if (!first && !unstable(cp)) break;
            first = false;
            decompose(cp, &run);
            j += k;
        }
        normalize_run(&run);
        /* room for this run and the rest of the input copied unchanged */
        size_t need = o + run.n * 4 + (len - j) + 1;
        if (need > cap) {
            cap = need * 2;
            out = gf_realloc(out, cap);
        }
        for (size_t r = 0; r < run.n; r++) o += (size_t)utf8_encode(run.a[r], out + o);
        i = j;
        /* copy the following stable stretch, keeping its last code point for the next run */
        size_t stable_start = i, last = i;
        while (i < len) {
            uint32_t cp = utf8_decode(u + i, len - i, &k);
            if (unstable(cp)) break;
            last = i;
            i += k;
        }
        if (i < len && last > stable_start) {
            memcpy(out + o, s + stable_start, last - stable_start);
            o += last - stable_start;
            i = last;
        } else if (i >= len) {
            memcpy(out + o, s + stable_start, i - stable_start);
            o += i - stable_start;
        } else {
            i = stable_start; /* no stable code point in between: continue the run */
        }
    }
    free(run.a);
    out[o] = 0;
    *out_len = o;
    return out;
}
