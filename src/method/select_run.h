/* The select operation: which layers keep softmax attention (uniform, ar,
 * ga-s2, manual), with the per-layer scores. `graft select` and the
 * workbench's Plan (Enter on ar / ga-s2) run it. */
#ifndef GRAFT_METHOD_SELECT_RUN_H
#define GRAFT_METHOD_SELECT_RUN_H

#include <cjson/cJSON.h>

#include "method/hooks.h"
#include "method/request.h"
#include "select/select.h"

typedef struct {
    layer_selection sel;
    strategy_spec ss;
    student_init init;        /* ga-s2: the converted layers' init */
    student_settings set;
} select_result;

/* A checked select request on its loaded teacher m. 0, or -1 with an error. */
int method_select_run(const request *r, model *m, const method_hooks *h, select_result *res);
/* graft select --json's object (without "memory"). */
cJSON *select_result_json(const request *r, const model *m, const select_result *res);
void select_result_free(select_result *res);

#endif
