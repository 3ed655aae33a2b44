/* graft bench-decode MODEL|STUDENT [--contexts 1k,8k,32k] [--batch 1,16]
 * [--tokens N]: decoding speed and memory per sequence at each context and
 * batch (engine/eval/bench_decode.h), prefill timed apart from decode:
 * argv -> bench-decode request -> the runs -> print. A
 * command of its own rather than a mode of generate: it takes lists, makes
 * its own prompts and prints a table, none of which generate does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "method/reports.h"
#include "method/mem_check.h"
#include "commands.h"
#include "eval/bench_decode.h"
#include "student/student_io.h"

typedef struct {
    int n_gdn;
    student_settings set;
    decode_bench_opts largest;
} bench_plan;

static void bench_fill(mem_job *j, void *ud) {
    const bench_plan *p = ud;
    if (p->n_gdn > 0) cli_mem_gdn(j, &p->set);
    j->gdn_blocks = p->n_gdn;
    j->run[0] = decode_bench_run_opts(&p->largest);
    j->run_gdn[0] = p->n_gdn;
}


static void print_point(const decode_bench_point *p) {
    printf("%8d %6d %10.1f %12.1f %10.1f %10.2f %14.3f %12.3f\n", p->context, p->batch, p->prefill_s * 1e3,
           p->prefill_tok_s, p->decode_tok_s, p->ms_per_step, (double)p->kv_bytes_per_seq / 1048576.0,
           (double)p->state_bytes_per_seq / 1048576.0);
    fflush(stdout);
}

int cmd_bench_decode(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_BENCH_DECODE, argc, argv, &done);
    if (rc || done) return rc;
    const common_opts co = r.co;
    const char *const *pos = r.pos;
    const int tokens = r.u.bench_decode.tokens, chunk = r.u.bench_decode.prefill_chunk;
    int ctxs[REQ_MAX_SIZES], batches[REQ_MAX_SIZES]; /* request_check parsed them */
    const int nc = request_sizes(r.u.bench_decode.contexts, ctxs, REQ_MAX_SIZES);
    const int nb = request_sizes(r.u.bench_decode.batches, batches, REQ_MAX_SIZES);
    if ((rc = cli_setup("bench-decode", &co))) return rc;
    bench_plan plan = {0};
    plan.largest = (decode_bench_opts){.tokens = tokens, .prefill_chunk = chunk};
    for (int i = 0; i < nc; i++)
        if (ctxs[i] > plan.largest.context) plan.largest.context = ctxs[i];
    for (int i = 0; i < nb; i++)
        if (batches[i] > plan.largest.batch) plan.largest.batch = batches[i];
    const bool is_student = student_folder_detect(pos[0]);
    if (is_student && student_folder_peek(pos[0], &plan.n_gdn, &plan.set) != 0) return cli_fail("bench-decode");
    cli_mem_plan(bench_fill, &plan, "lower --contexts or --batch");
    model teacher = {0};
    student st = {0};
    transformer view = {0};
    transformer *tf = &view;
    if (is_student) {
        if (cli_load_student("bench-decode", pos[0], &co, &st) != 0) return 1;
        tf = &st.tf;
    } else if (cli_load_model("bench-decode", pos[0], &co, &teacher) != 0) {
        return 1;
    } else if (tf_view(&view, &teacher, NULL, NULL, NULL) != 0) {
        model_free(&teacher);
        return cli_fail("bench-decode");
    }
    const model_config *c = &tf->cfg;
    const bool bf16 = be_act(tf->be) == GF_BF16;
    cJSON *points = cJSON_CreateArray();
    if (!co.json) {
        printf("%s: %s, %d layers (%d GDN), %s, %d decoded tokens per sequence\n", pos[0],
               is_student ? "student" : "teacher", c->n_layers, tf_n_gdn(tf), bf16 ? "bf16" : "f32", tokens);
        printf("%8s %6s %10s %12s %10s %10s %14s %12s\n", "context", "batch", "prefill ms", "prefill t/s",
               "decode t/s", "ms/step", "KV MiB/seq", "GDN MiB/seq");
    }
    for (int i = 0; i < nc && rc == 0; i++)
        for (int j = 0; j < nb && rc == 0; j++) {
            const decode_bench_opts o = {ctxs[i], batches[j], tokens, chunk, (uint64_t)co.seed, NULL};
            decode_bench_point p;
            if (decode_bench_run(tf, &o, &p) != 0) {
                rc = cli_fail("bench-decode");
                break;
            }
            if (co.json) cJSON_AddItemToArray(points, decode_bench_point_json(&p));
            else print_point(&p);
        }
    if (rc == 0 && co.json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", pos[0]);
        cJSON_AddStringToObject(o, "kind", is_student ? "student" : "teacher");
        cJSON_AddNumberToObject(o, "layers", c->n_layers);
        cJSON_AddNumberToObject(o, "gdn_layers", tf_n_gdn(tf));
        cJSON_AddStringToObject(o, "device", co.device ? co.device : "cpu");
        cJSON_AddStringToObject(o, "dtype", bf16 ? "bf16" : "f32");
        cJSON_AddNumberToObject(o, "kv_bytes_per_token", (double)tf_kv_bytes_per_token(tf));
        cJSON_AddItemToObject(o, "points", points);
        points = NULL;
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
    }
    cJSON_Delete(points);
    if (is_student) student_free(&st);
    else {
        tf_free(&view);
        model_free(&teacher);
    }
    return rc;
}
