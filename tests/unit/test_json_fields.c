/* Unit tests: the table-driven JSON field writer and reader
 * (src/method/json_fields.h): every kind written and read back to the same
 * struct, NaN as null and back, fields left out when empty, absent keys
 * leaving fields as they are, and values of the wrong type or out of range
 * refused with a line naming the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "method/json_fields.h"

typedef struct {
    int count;
    long tokens;
    size_t bytes;
    double loss, unknown;
    int flag, unset_flag;
    char name[8];
    char empty[8];
} sample;

static const json_field fields[] = {
    JSON_FIELD(sample, count, "count", INT),
    JSON_FIELD(sample, tokens, "tokens", LONG),
    JSON_FIELD(sample, bytes, "bytes", SIZE),
    JSON_FIELD(sample, loss, "loss", DOUBLE),
    JSON_FIELD(sample, unknown, "unknown", DOUBLE),
    JSON_FIELD(sample, flag, "flag", FLAG),
    JSON_FIELD_OPT(sample, unset_flag, "unset_flag", FLAG),
    JSON_FIELD(sample, name, "name", TEXT),
    JSON_FIELD_OPT(sample, empty, "empty", TEXT),
};

static sample filled(void) {
    sample s;
    memset(&s, 0, sizeof s);
    s.count = -7;
    s.tokens = 5000000000L; /* past 2^32: a long, not an int */
    s.bytes = (size_t)3 << 40;
    s.loss = 2.5;
    s.unknown = NAN;
    s.flag = 1;
    snprintf(s.name, sizeof s.name, "gated");
    return s;
}

static void round_trip(void **state) {
    (void)state;
    const sample s = filled();
    cJSON *o = cJSON_CreateObject();
    json_fields_write(o, &s, fields, JSON_FIELDS_COUNT(fields));
    char *text = cJSON_PrintUnformatted(o);
    assert_string_equal(text, "{\"count\":-7,\"tokens\":5000000000,\"bytes\":3298534883328,\"loss\":2.5,"
                              "\"unknown\":null,\"flag\":true,\"name\":\"gated\"}");
    free(text);
    sample back;
    memset(&back, 0, sizeof back);
    back.unknown = 1; /* null must overwrite it with NaN */
    assert_int_equal(json_fields_read(o, &back, fields, JSON_FIELDS_COUNT(fields), "a sample"), 0);
    assert_int_equal(back.count, -7);
    assert_true(back.tokens == 5000000000L);
    assert_true(back.bytes == ((size_t)3 << 40));
    assert_true(back.loss == 2.5); /* exact: 2.5 is a binary fraction */
    assert_true(isnan(back.unknown));
    assert_int_equal(back.flag, 1);
    assert_int_equal(back.unset_flag, 0);
    assert_string_equal(back.name, "gated");
    assert_string_equal(back.empty, "");
    cJSON_Delete(o);
}

static void absent_keys_keep_the_field(void **state) {
    (void)state;
    sample s = filled();
    cJSON *o = cJSON_Parse("{\"count\":3}");
    assert_int_equal(json_fields_read(o, &s, fields, JSON_FIELDS_COUNT(fields), "a sample"), 0);
    assert_int_equal(s.count, 3);
    assert_true(s.loss == 2.5);
    assert_string_equal(s.name, "gated");
    cJSON_Delete(o);
}

static void long_text_is_cut_to_the_field(void **state) {
    (void)state;
    sample s = filled();
    cJSON *o = cJSON_Parse("{\"name\":\"reference-and-more\"}");
    assert_int_equal(json_fields_read(o, &s, fields, JSON_FIELDS_COUNT(fields), "a sample"), 0);
    assert_string_equal(s.name, "referen"); /* 7 bytes and the NUL */
    cJSON_Delete(o);
}

static void refusals_name_the_key(void **state) {
    (void)state;
    static const struct {
        const char *json, *message;
    } bad[] = {
        {"{\"count\":\"3\"}", "a sample: \"count\" should be a whole number in [-2147483648, 2147483647]"},
        {"{\"count\":1.5}", "a sample: \"count\" should be a whole number in [-2147483648, 2147483647]"},
        {"{\"count\":3e9}", "a sample: \"count\" should be a whole number in [-2147483648, 2147483647]"},
        {"{\"bytes\":-1}", "a sample: \"bytes\" should be a whole number in [0, 2^53]"},
        {"{\"tokens\":1e300}", "a sample: \"tokens\" should be a whole number of at most 2^53"},
        {"{\"loss\":\"low\"}", "a sample: \"loss\" should be a number or null"},
        {"{\"flag\":1}", "a sample: \"flag\" should be true or false"},
        {"{\"name\":7}", "a sample: \"name\" should be a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sample s = filled();
        cJSON *o = cJSON_Parse(bad[i].json);
        assert_non_null(o);
        assert_int_equal(json_fields_read(o, &s, fields, JSON_FIELDS_COUNT(fields), "a sample"), -1);
        assert_string_equal(gf_last_error(), bad[i].message);
        cJSON_Delete(o);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(absent_keys_keep_the_field),
        cmocka_unit_test(long_text_is_cut_to_the_field),
        cmocka_unit_test(refusals_name_the_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
