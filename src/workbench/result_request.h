/* A Results row as the request that reproduces it (method/request.h), and its
 * headless command as that request prints: the Results footer and the Log
 * show it, and it parses back (request_from_command) to the same request.
 *
 * Every row kind has one: an evaluated plan is `graft eval STUDENT --split`
 * on its folder (the folder's config records the convert request that built
 * it, named by the row's digest); an ablation row is `graft ablate` of that
 * one row (its strategy, ratio, init and Stage 1 set); a race row is the
 * race that made it (the Recover screen builds its race request from the
 * same row, so its checkpoints are keyed by this request). Rows imported
 * from JSON and rows of older session files get theirs from the fields they
 * recorded; what a JSON does not record is said after the command. */
#ifndef GRAFT_WORKBENCH_RESULT_REQUEST_H
#define GRAFT_WORKBENCH_RESULT_REQUEST_H

#include <stddef.h>

#include "method/request.h"
#include "workbench/results.h"
#include "workbench/stage1_choice.h"

/* The strings the request points to (the row's may go before the request does). */
typedef struct {
    char corpus[200], student[256], device[16], strategy[16], init[24], keep[32], inits[160];
    stage1_cli_text s1;
} result_req_text;

/* The row's request; model_arg is MODEL (the teacher, as the row's teacher
 * was opened) and must outlive q. 0, or -1 with an error when the row has
 * none (an evaluated plan whose student folder was not written). */
int result_request(const result_row *r, const char *model_arg, request *q, result_req_text *txt);

/* What the command leaves out, as a shell comment ("   # ..."; "" none). */
void result_command_note(const result_row *r, char *buf, size_t n);

/* The row's command: request_command of result_request, then its note; or
 * "(no student folder was written)". */
void result_command(const result_row *r, const char *model_arg, char *buf, size_t n);

#endif
