/* graft generate MODEL|STUDENT [--prompt TEXT] [-n N] [--temp T]: a teacher,
 * or a student folder (attention layers through their KV cache, GDN layers
 * through their recurrent state and conv history). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "method/mem_check.h"
#include "commands.h"
#include "eval/generate.h"
#include "student/student_io.h"

static void print_text(void *ud, const char *text, int context, int generated) {
    (void)ud;
    (void)context;
    (void)generated;
    fputs(text, stdout);
    fflush(stdout);
}

/* generate_tf: a decode run holding prompt + n positions (at most the
 * model's context); the prompt has at most its bytes + BOS tokens */
typedef struct {
    long long prompt_bytes;
    int n, n_gdn;
    student_settings set;
} gen_plan;

static void gen_fill(mem_job *j, void *ud) {
    const gen_plan *p = ud;
    long long T = p->prompt_bytes + 1, S = T + p->n;
    if (j->cfg->max_seq > 0 && S > j->cfg->max_seq) S = j->cfg->max_seq;
    if (T > S) T = S;
    if (p->n_gdn > 0) cli_mem_gdn(j, &p->set);
    j->gdn_blocks = p->n_gdn;
    j->run[0] = (tf_run_opts){.B = 1, .T = (int)T, .S = (int)S, .decode = true, .logit_rows = 1};
    j->run_gdn[0] = p->n_gdn;
}

int cmd_generate(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_GENERATE, argc, argv, &done);
    if (rc || done) return rc;
    common_opts co = r.co;
    const char **pos = r.pos;
    const char *prompt = r.u.generate.prompt;
    const int n = r.u.generate.n;
    const double temp = r.u.generate.temp;
    const bool ignore_eos = r.u.generate.ignore_eos;
    if ((rc = cli_setup("generate", &co))) return rc;
    generated_text out = {0};
    /* a teacher, or a student folder: the same transformer either way */
    model teacher = {0}, *mp = &teacher;
    student st = {0};
    transformer tf = {0}, full = {0};
    const bool is_student = student_folder_detect(pos[0]);
    gen_plan plan = {(long long)strlen(prompt), n, 0, {0}};
    if (is_student && student_folder_peek(pos[0], &plan.n_gdn, &plan.set) != 0) return cli_fail("generate");
    cli_mem_plan(gen_fill, &plan, "lower -n or shorten the prompt");
    if (is_student) {
        if (cli_load_student("generate", pos[0], &co, &st) != 0) return 1;
        mp = st.m;
    } else if (cli_load_model("generate", pos[0], &co, &teacher) != 0) {
        return 1;
    }
    model m_ = *mp, *const m = &m_; /* read-only copy of the handles */
    if (!m->tok) {
        fprintf(stderr, "graft generate: %s has no tokenizer (pass --tokenizer PATH)\n", pos[0]);
        rc = 1;
        goto done;
    }
    if ((!is_student && tf_view(&tf, mp, NULL, NULL, NULL) != 0) || tf_view(&full, mp, NULL, NULL, NULL) != 0) {
        rc = cli_fail("generate");
        goto done;
    }
    transformer *run_tf = is_student ? &st.tf : &tf;
    /* KV-cache bytes per token: the teacher (every layer attention) vs this model */
    const size_t kv_teacher = tf_kv_bytes_per_token(&full), kv_model = tf_kv_bytes_per_token(run_tf);
    if (!*prompt && tokenizer_bos(m->tok) < 0) { /* nothing to condition on */
        fprintf(stderr, "graft generate: this tokenizer has no BOS token; give a --prompt\n");
        rc = 2;
        goto done;
    }
    /* the same call as the workbench's prompt box (src/workbench/generate_jobs.c) */
    generate_opts go = {n, temp, (uint64_t)co.seed, !ignore_eos, NULL, NULL, NULL};
    rc = generate_text(run_tf, m, prompt, &go, co.json ? NULL : print_text, NULL, &out);
    if (rc != 0) {
        rc = cli_fail("generate");
    } else if (co.json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "ids", cJSON_CreateIntArray(out.ids.data, (int)out.ids.len));
        /* decode with BOS in front so llama2.c drops the leading space as it does after BOS */
        int_vec dec = {0};
        if (out.bos) int_vec_push(&dec, tokenizer_bos(m->tok));
        for (size_t i = 0; i < out.ids.len; i++) int_vec_push(&dec, out.ids.data[i]);
        char *text = tokenizer_decode(m->tok, dec.data, dec.len, NULL);
        cJSON_AddStringToObject(o, "text", text);
        cJSON_AddNumberToObject(o, "prompt_tokens", out.prompt_tokens);
        cJSON_AddNumberToObject(o, "generated_tokens", out.generated);
        cJSON *kv = cJSON_AddObjectToObject(o, "kv_bytes_per_token");
        cJSON_AddNumberToObject(kv, "teacher", (double)kv_teacher);
        cJSON_AddNumberToObject(kv, "student", (double)kv_model);
        cJSON_AddNumberToObject(o, "gdn_state_bytes", (double)tf_state_bytes(run_tf));
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
        free(text);
        int_vec_free(&dec);
    } else {
        fputc('\n', stdout);
        if (is_student)
            printf("[kv cache: %zu bytes per token (%d of %d layers GDN, %zu bytes of GDN state whatever the length); "
                   "the teacher needs %zu]\n",
                   kv_model, tf_n_gdn(run_tf), m->cfg.n_layers, tf_state_bytes(run_tf), kv_teacher);
        else
            printf("[kv cache: %zu bytes per token]\n", kv_teacher);
    }
done:
    generated_text_free(&out);
    tf_free(&tf);
    tf_free(&full);
    if (is_student) student_free(&st);
    else model_free(&teacher);
    return rc;
}
