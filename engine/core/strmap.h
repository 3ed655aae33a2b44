/* Open-addressing hash map from byte strings to int (vocabularies, merges).
 * Keys are copied into the map's own arena. */
#ifndef GRAFT_CORE_STRMAP_H
#define GRAFT_CORE_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t *slots;   /* index+1 into entries, 0 = empty; [cap] */
    struct strmap_entry { uint32_t off, len; uint64_t hash; int value; } *entries;
    size_t n, cap, entries_cap;
    char *arena;
    size_t arena_len, arena_cap;
} strmap;

void strmap_init(strmap *m, size_t expected);
void strmap_free(strmap *m);
/* Inserts or overwrites. */
void strmap_put(strmap *m, const char *key, size_t len, int value);
/* Returns the value, or -1 when absent (store only values >= 0). */
int strmap_get(const strmap *m, const char *key, size_t len);
uint64_t strmap_hash(const char *key, size_t len);

#endif
