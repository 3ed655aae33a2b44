/* JSON views of a student's results (report.json, --json outputs). The plain
 * structs in student.h are the source; this only serializes them. */
#ifndef GRAFT_STUDENT_REPORT_JSON_H
#define GRAFT_STUDENT_REPORT_JSON_H

#include <cjson/cJSON.h>

#include "student/student.h"

typedef struct {
    double mean, median, max, min;
    int n;
} half_life_summary;

/* Over every head of the layers in mask (NULL: s->is_gdn). */
half_life_summary student_half_life_summary(const student *s, const bool *mask);

cJSON *layer_report_json(const layer_report *r, int H);
/* {"settings":{...}, "gdn_layers":[...], "layers":[per layer], "half_life":{...}} */
cJSON *student_report_json(const student *s);
cJSON *half_life_summary_json(half_life_summary h);
/* ["decay","beta",...] in application order; [] for none. */
cJSON *stage1_parts_json(unsigned parts);

#endif
