/* Options and helpers every command shares: --json, --threads, --seed,
 * --device, --tokenizer; loading the MODEL argument; JSON output. */
#ifndef GRAFT_CLI_COMMON_H
#define GRAFT_CLI_COMMON_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "method/args.h"
#include "method/common_opts.h"
#include "method/opt_limits.h"
#include "method/request.h"
#include "method/train_cli.h"
#include "model/model.h"
#include "student/student.h"


/* The command's --ctx (0: the model's own), checked against the positions
 * of every model the command loads, before its weights are read
 * (opt_check_ctx; --extrapolate-positions from o lifts the upper bound). */
void cli_ctx_plan(int ctx, const common_opts *o);

/* Parses argv, prints the error or the usage; returns 0 to go on, or the exit
 * status to return (2 on a usage error, 0 after --help). */
int cli_parse(int argc, char **argv, const opt_spec *specs, int n_specs, const char **pos,
              int min_pos, int max_pos, int *n_pos, const char *usage_line, common_opts *common);

/* argv -> request (method/request.h): parses, prints the error or the usage,
 * then checks the request (request_check). Returns 0 to go on, or the exit
 * status to return (2 on a usage error or a request that does not check, 0
 * after --help: then *done is set). */
int cli_request(request *r, req_kind k, int argc, char **argv, bool *done);

/* Opens the backend of --device with --threads (be_open; more threads than
 * the processors there are is capped, with a line on stderr) and makes it
 * the process default. Returns 0 or prints one line and returns 2. */
int cli_setup(const char *cmd, const common_opts *o);
/* The backend cli_setup opened (or the default CPU one). */
gf_backend *cli_backend(void);

/* Loads MODEL (a path; later also a Hub repo id). Prints the error and
 * returns -1 on failure. */
int cli_load_model(const char *cmd, const char *arg, const common_opts *o, model *m);

/* Loads a student folder (engine/student/student_io.h). Prints the error and
 * returns -1 on failure. */
int cli_load_student(const char *cmd, const char *arg, const common_opts *o, student *s);

/* Prints "graft CMD: <last error>" on stderr; returns 1. */
int cli_fail(const char *cmd);

/* Prints a JSON object on stdout (one line) and deletes it. */
void cli_print_json(cJSON *obj);

/* train / race --recall-dump: claimed and opened on the rank that measures, before the teacher loads
 * (a bad path fails before hours of training); a resumed run appends. 0, or -1 with one line. */
int cli_recall_dump_open(train_cli *tc, bool resume);

/* The teacher summary shared by inspect and the default screen (its JSON: method/reports.h). */
void model_summary_print(const model *m);

#endif
