/* A struct's plain fields as JSON from one table of (key, kind, offset):
 * one writer and one reader for every result struct instead of a cJSON call
 * per field in each. What is not a plain field (a name looked up, an array,
 * a nested object) the caller adds around the table. */
#ifndef GRAFT_METHOD_JSON_FIELDS_H
#define GRAFT_METHOD_JSON_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef enum {
    JSON_FIELD_INT,    /* int, a number */
    JSON_FIELD_LONG,   /* long, a number */
    JSON_FIELD_SIZE,   /* size_t, a number */
    JSON_FIELD_DOUBLE, /* double, a number; null when not finite (NaN when read back) */
    JSON_FIELD_FLAG,   /* int, true / false */
    JSON_FIELD_TEXT,   /* char[N] inside the struct, a string (truncated to N-1 bytes when read) */
} json_field_kind;

typedef struct {
    const char *key;
    json_field_kind kind;
    size_t offset;   /* offsetof(struct, member) */
    size_t size;     /* sizeof the member */
    bool omit_empty; /* not written when 0, false or "" */
} json_field;

/* The member's type must be the kind's (a compile error otherwise). */
#define JSON_FIELD_TYPE_CHECK_(type, member, T) (0 * sizeof(char[_Generic(((type *)0)->member, T: 1, default: -1)]))
#define JSON_FIELD_C_TYPE_INT int
#define JSON_FIELD_C_TYPE_LONG long
#define JSON_FIELD_C_TYPE_SIZE size_t
#define JSON_FIELD_C_TYPE_DOUBLE double
#define JSON_FIELD_C_TYPE_FLAG int
#define JSON_FIELD_C_TYPE_TEXT char *
#define JSON_FIELD_ENTRY_(type, member, key, KIND, omit)                                                            \
    {key, JSON_FIELD_##KIND, offsetof(type, member),                                                               \
     sizeof(((type *)0)->member) + JSON_FIELD_TYPE_CHECK_(type, member, JSON_FIELD_C_TYPE_##KIND), omit}
/* JSON_FIELD(result_row, ppl, "ppl", DOUBLE): the member ppl of result_row under the key "ppl". */
#define JSON_FIELD(type, member, key, KIND) JSON_FIELD_ENTRY_(type, member, key, KIND, false)
#define JSON_FIELD_OPT(type, member, key, KIND) JSON_FIELD_ENTRY_(type, member, key, KIND, true)

/* How many entries a table (an array, not a pointer) has. */
#define JSON_FIELDS_COUNT(table) (sizeof(table) / sizeof(table)[0])

/* Adds the n fields of s to the object o, in the table's order. */
void json_fields_write(cJSON *o, const void *s, const json_field *f, size_t n);
/* Reads the n fields of s from o: an absent key leaves its field as it is;
 * null reads as NaN for a DOUBLE. 0, or -1 with a one-line error naming
 * what (e.g. "a results row") and the key of a value of the wrong type or
 * a number out of the field's range. */
int json_fields_read(const cJSON *o, void *s, const json_field *f, size_t n, const char *what);

#endif
