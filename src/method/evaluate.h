/* Build and evaluate: a convert request's student, then the teacher's and the
 * student's perplexity on the evaluation slice of the same split (what
 * `graft eval STUDENT --split` measures), written to the request's folder
 * with the numbers in its report. The workbench's Results run it. */
#ifndef GRAFT_METHOD_EVALUATE_H
#define GRAFT_METHOD_EVALUATE_H

#include "method/convert.h"
#include "student/report_json.h"

typedef struct {
    convert_result build;
    double teacher_ppl, ppl; /* on the evaluation slice */
    long tokens;             /* tokens scored */
    half_life_summary hl;    /* the GDN heads' idle half-lives */
} evaluate_result;

/* A checked convert request (with --text: the file whose evaluation slice is
 * scored) on its loaded teacher m, into the claimed folder t. 0, or -1 with
 * an error. */
int method_evaluate_run(const request *r, model *m, const convert_target *t, const method_hooks *h, evaluate_result *res);
void evaluate_result_free(evaluate_result *res);

/* The headless command that measures the folder's student as the run did:
 * graft eval DIR --text FILE --split --eval-windows N --json (device as given). */
void evaluate_eval_request(const request *convert, const char *dir, request *eval);

#endif
