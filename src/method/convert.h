/* The convert operation: a hybrid student from a teacher (METHOD.md sections
 * 3-8), its folder named and claimed by its request (method/artifact.h).
 * `graft convert` and the workbench's Results (evaluate) both run it. */
#ifndef GRAFT_METHOD_CONVERT_H
#define GRAFT_METHOD_CONVERT_H

#include <limits.h>

#include <cjson/cJSON.h>

#include "method/artifact.h"
#include "method/hooks.h"
#include "method/request.h"

/* Where a convert request's student goes, and what the folder held. */
typedef struct {
    char digest[ARTIFACT_DIGEST_HEX];
    cJSON *identity;     /* owned */
    char out[PATH_MAX];  /* the folder */
    artifact_claim claim;
    bool refused;        /* out holds what another request made (or files none recorded): --force replaces it */
    char held[ARTIFACT_DIGEST_HEX]; /* when refused: the digest out records, "" none */
} convert_target;

/* "stories260K" from "/path/stories260K.bin": the file name without .bin /
 * .gguf, only [A-Za-z0-9._-] ("teacher" when nothing is left). */
void artifact_short_name(const char *path, char *out, size_t n);

/* The request's identity and digest, and its folder: --out when given, else
 * parent/prefix-<digest> (parent NULL: the working folder; prefix NULL:
 * "student-<teacher>-<init>"); then claimed (artifact_claim_dir: refused
 * when another request made it, unless --force). 0, or -1 with an error
 * (t->refused, t->out and t->held say a refusal apart from the rest). */
int convert_target_resolve(const request *r, const char *parent, const char *prefix, convert_target *t);
void convert_target_free(convert_target *t);
/* "student-x reused: the same request made it" / "replacing ..." / "" for a new folder. */
const char *convert_claim_note(const convert_target *t, char *buf, size_t n);

typedef struct {
    student s;
    layer_selection sel;
    token_split sp;
    teacher_capture cal;   /* kept for the report's teacher statistics */
    strategy_spec ss;
    student_settings set;
} convert_result;

/* Builds the student of a checked convert request (request_check) from m
 * (its teacher, loaded): split, teacher capture, layer selection, Stage 1 /
 * Stage 2. 0, or -1 with an error ("cancelled" when the hooks' flag is set). */
int method_convert_run(const request *r, model *m, const method_hooks *h, convert_result *res);
/* report.json's object for the result (the caller may add to it). */
cJSON *convert_report_json(const request *r, const convert_result *res);
/* Writes the folder t->out (its config records the request). */
int method_convert_save(const request *r, const model *m, const convert_target *t, const convert_result *res,
                        const cJSON *report);
void convert_result_free(convert_result *res);

#endif
