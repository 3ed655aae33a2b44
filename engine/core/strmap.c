#include "core/strmap.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

uint64_t strmap_hash(const char *key, size_t len) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a, then a final mix */
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)key[i]) * 1099511628211ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

void strmap_init(strmap *m, size_t expected) {
    memset(m, 0, sizeof *m);
    size_t cap = 16;
    while (cap < expected * 2) cap *= 2;
    m->cap = cap;
    m->slots = gf_calloc(cap, sizeof *m->slots);
}

void strmap_free(strmap *m) {
    free(m->slots);
    free(m->entries);
    free(m->arena);
    memset(m, 0, sizeof *m);
}

static size_t find_slot(const strmap *m, const char *key, size_t len, uint64_t h) {
    size_t mask = m->cap - 1, i = (size_t)h & mask;
    for (;;) {
        uint32_t s = m->slots[i];
        if (s == 0) return i;
        const struct strmap_entry *e = &m->entries[s - 1];
        if (e->hash == h && e->len == len && memcmp(m->arena + e->off, key, len) == 0) return i;
        i = (i + 1) & mask;
    }
}

static void grow(strmap *m) {
    size_t cap = m->cap * 2;
    uint32_t *slots = gf_calloc(cap, sizeof *slots);
    for (size_t k = 0; k < m->n; k++) {
        size_t i = (size_t)m->entries[k].hash & (cap - 1);
        while (slots[i]) i = (i + 1) & (cap - 1);
        slots[i] = (uint32_t)(k + 1);
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

void strmap_put(strmap *m, const char *key, size_t len, int value) {
    if ((m->n + 1) * 2 > m->cap) grow(m);
    uint64_t h = strmap_hash(key, len);
    size_t i = find_slot(m, key, len, h);
    if (m->slots[i]) {
        m->entries[m->slots[i] - 1].value = value;
        return;
    }
    if (m->n == m->entries_cap) {
        m->entries_cap = m->entries_cap ? m->entries_cap * 2 : 64;
        m->entries = gf_realloc(m->entries, m->entries_cap * sizeof *m->entries);
    }
    if (m->arena_len + len + 1 > m->arena_cap) {
        while (m->arena_len + len + 1 > m->arena_cap) m->arena_cap = m->arena_cap ? m->arena_cap * 2 : 4096;
        m->arena = gf_realloc(m->arena, m->arena_cap);
    }
    memcpy(m->arena + m->arena_len, key, len);
    m->arena[m->arena_len + len] = 0;
    m->entries[m->n] = (struct strmap_entry){(uint32_t)m->arena_len, (uint32_t)len, h, value};
    m->arena_len += len + 1;
    m->slots[i] = (uint32_t)(m->n + 1);
    m->n++;
}

int strmap_get(const strmap *m, const char *key, size_t len) {
    if (!m->cap) return -1;
    uint32_t s = m->slots[find_slot(m, key, len, strmap_hash(key, len))];
    return s ? m->entries[s - 1].value : -1;
}
