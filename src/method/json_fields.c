#include "method/json_fields.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

void json_fields_write(cJSON *o, const void *s, const json_field *f, size_t n) {
    const char *base = s;
    for (size_t i = 0; i < n; i++) {
        const void *p = base + f[i].offset;
        double v = 0;
        switch (f[i].kind) {
        case JSON_FIELD_TEXT:
            if (!f[i].omit_empty || ((const char *)p)[0]) cJSON_AddStringToObject(o, f[i].key, p);
            continue;
        case JSON_FIELD_FLAG:
            if (!f[i].omit_empty || *(const int *)p) cJSON_AddBoolToObject(o, f[i].key, *(const int *)p != 0);
            continue;
        case JSON_FIELD_INT: v = *(const int *)p; break;
        case JSON_FIELD_LONG: v = (double)*(const long *)p; break;
        case JSON_FIELD_SIZE: v = (double)*(const size_t *)p; break;
        case JSON_FIELD_DOUBLE: v = *(const double *)p; break;
        }
        if (f[i].omit_empty && v == 0) continue;
        if (isfinite(v)) cJSON_AddNumberToObject(o, f[i].key, v);
        else cJSON_AddNullToObject(o, f[i].key);
    }
}

/* A whole number within [lo, hi] (doubles are exact up to 2^53: the bounds are checked before the cast). */
static int whole(const cJSON *v, double lo, double hi, double *out) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi) || v->valuedouble != floor(v->valuedouble))
        return -1;
    *out = v->valuedouble;
    return 0;
}

int json_fields_read(const cJSON *o, void *s, const json_field *f, size_t n, const char *what) {
    char *base = s;
    for (size_t i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, f[i].key);
        if (!v) continue;
        void *p = base + f[i].offset;
        double x;
        switch (f[i].kind) {
        case JSON_FIELD_TEXT:
            if (!cJSON_IsString(v)) return gf_fail("%s: \"%s\" should be a string", what, f[i].key);
            snprintf(p, f[i].size, "%s", v->valuestring);
            break;
        case JSON_FIELD_FLAG:
            if (!cJSON_IsBool(v)) return gf_fail("%s: \"%s\" should be true or false", what, f[i].key);
            *(int *)p = cJSON_IsTrue(v);
            break;
        case JSON_FIELD_INT:
            if (whole(v, INT_MIN, INT_MAX, &x))
                return gf_fail("%s: \"%s\" should be a whole number in [%d, %d]", what, f[i].key, INT_MIN, INT_MAX);
            *(int *)p = (int)x;
            break;
        case JSON_FIELD_LONG:
            if (whole(v, -9.007199254740992e15, 9.007199254740992e15, &x)) /* +-2^53: exact in a double */
                return gf_fail("%s: \"%s\" should be a whole number of at most 2^53", what, f[i].key);
            *(long *)p = (long)x;
            break;
        case JSON_FIELD_SIZE:
            if (whole(v, 0, 9.007199254740992e15, &x))
                return gf_fail("%s: \"%s\" should be a whole number in [0, 2^53]", what, f[i].key);
            *(size_t *)p = (size_t)x;
            break;
        case JSON_FIELD_DOUBLE:
            if (!cJSON_IsNumber(v) && !cJSON_IsNull(v))
                return gf_fail("%s: \"%s\" should be a number or null", what, f[i].key);
            *(double *)p = cJSON_IsNumber(v) ? v->valuedouble : NAN;
            break;
        }
    }
    return 0;
}
