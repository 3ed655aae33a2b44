/* graft train STUDENT --teacher MODEL [--data PATH] [--tokens N] ... : recovery training. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/common.h"
#include "cli/ranks.h"
#include "method/mem_check.h"
#include "cli/out_place.h"
#include "method/train_cli.h"
#include "method/train_student.h"
#include "cli/signals.h"
#include "commands.h"
#include "core/error.h"

typedef struct {
    int log_every;
    bool json;
} step_printer;

static void print_step(void *ud, long step, long total, long tokens, double loss, double lr, double gnorm) {
    const step_printer *p = ud;
    if (p->log_every > 0 && (step % p->log_every == 0 || step == total || step == 1))
        fprintf(p->json ? stderr : stdout, "step %ld/%ld  tokens %ld  loss %.6f  lr %.3g  |g| %.4g\n", step, total,
                tokens, loss, lr, gnorm);
}

static void print_eval(void *ud, long step, long tokens, double ppl) {
    const step_printer *p = ud;
    if (p->log_every > 0) fprintf(p->json ? stderr : stdout, "eval  step %ld  tokens %ld  held-out ppl %.4f\n", step, tokens, ppl);
}

int cmd_train(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_TRAIN, argc, argv, &done);
    if (rc || done) return rc;
    common_opts co = r.co;
    const char **pos = r.pos;
    const int n_ranks = r.n_ranks, n_gpus = r.n_gpus;
    train_cli tc = r.u.train.tc;
    const char *ckpt = r.u.train.ckpt, *out_dir = r.u.train.out;
    const bool resume = r.u.train.resume;
    if (cli_ranks_launch("train", argc, argv, n_ranks, n_gpus, &co, &rc)) return rc;
    if ((rc = cli_setup("train", &co)) || (rc = train_cli_finish(&tc, "train"))) return rc;
    cli_ctx_plan(tc.to.ctx, &co);
    tc.to.seed = (uint64_t)co.seed;
    tc.to.ckpt_path = ckpt;
    tc.to.resume = resume;

    const bool folder = train_student_is_folder(pos[0]);
    if (out_dir && !folder) {
        fprintf(stderr, "graft train: --out writes student folders; %s is not one (make it with graft convert)\n", pos[0]);
        return 2;
    }
    if (cli_rank0() && ((ckpt && cli_out_claim("--ckpt", ckpt, OUT_CKPT, 1) != 0) ||
                        (out_dir && cli_out_claim("--out", out_dir, OUT_STUDENT, 1) != 0) ||
                        (tc.to.window_log && cli_out_claim("--log-windows", tc.to.window_log, OUT_LOG, 1) != 0)))
        return cli_fail("train");
    const char *folder_list[1] = {pos[0]};
    train_plan plan = {&tc, folder || strcmp(pos[0], tc.teacher) != 0 ? 2 : 1, folder_list, folder ? 1 : 0, false, NULL};
    cli_mem_plan(train_plan_fill, &plan, "lower --batch or --ctx");
    model teacher, src;
    if (cli_load_model("train", tc.teacher, &co, &teacher) != 0) return 1;
    const bool same = folder || strcmp(pos[0], tc.teacher) == 0;
    if (!same && cli_load_model("train", pos[0], &co, &src) != 0) {
        model_free(&teacher);
        return 1;
    }
    const model *sm = same ? &teacher : &src;
    train_student *handle = NULL;
    const char *init_name = "copy";
    transformer tt = {0};
    train_data data = {0};
    cli_student st = {0};
    train_result res = {0};
    bool have_st = false, have_res = false;
    rc = 1;
    if (folder) {
        if (train_cli_converts(&tc) || tc.noise > 0) {
            gf_fail("--keep, --strategy and --noise build students from the teacher; %s is already a student", pos[0]);
            goto out;
        }
        if (train_student_load(&st, &handle, pos[0], co.tokenizer, tc.to.ctx, &init_name) != 0) goto out;
        have_st = true;
    }
    const model_config *scfg = folder ? &st.tm.cfg : &sm->cfg;
    if (scfg->dim != teacher.cfg.dim || scfg->n_layers != teacher.cfg.n_layers ||
        scfg->vocab_size != teacher.cfg.vocab_size) {
        gf_fail("student %s and teacher %s have different shapes", pos[0], tc.teacher);
        goto out;
    }
    if (tf_view(&tt, &teacher, NULL, NULL, NULL) != 0) goto out;
    if (train_cli_recall(&tc, &teacher) != 0) goto out;
    if (cli_train_data(&data, &teacher, &tc) != 0) goto out;
    if (!folder) {
        init_name = train_cli_converts(&tc) ? "random" : "copy";
        if (cli_student_build(&st, sm, &tc, init_name, tc.to.seed) != 0) goto out;
        have_st = true;
    }
    step_printer pr = {tc.log_every, co.json};
    tc.to.on_step = print_step;
    tc.to.on_eval = print_eval;
    tc.to.ud = &pr;
    cli_catch_stop_signals();
    if (train_run(&tc.to, &st.tm, &tt, &data, cli_stop_flag(), &res) != 0) {
        have_res = true;
        goto out;
    }
    have_res = true;
    if (res.stopped_by) {
        fprintf(stderr, "graft train: stopped by %s at step %ld of %ld; checkpoint %s written (run again with --resume)\n",
                res.stopped_by == SIGINT ? "SIGINT" : "SIGTERM", res.st.step, res.total_steps,
                ckpt ? ckpt : "(none: no --ckpt)");
        rc = 128 + res.stopped_by; /* main then ends by the signal itself */
        goto done;
    }
    if (out_dir && cli_rank0() && train_student_save(&st, handle, out_dir) != 0) goto out; /* one writer */
    double teacher_nll = NAN;
    if (train_eval_nll(&tt, &data, tc.to.eval_seqs, tc.to.batch, &teacher_nll) != 0) goto out;
    const double final_loss = res.st.loss.n ? res.st.loss.xy[2 * res.st.loss.n - 1] : NAN;
    if (co.json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "phase", tc.to.phase == PHASE_KL ? "kl" : "align");
        cJSON_AddStringToObject(o, "init", init_name);
        if (out_dir) cJSON_AddStringToObject(o, "out", out_dir);
        cJSON_AddNumberToObject(o, "steps", (double)res.st.step);
        cJSON_AddNumberToObject(o, "tokens", (double)res.st.tokens);
        cJSON_AddNumberToObject(o, "resumed_from", (double)res.resumed_from);
        cJSON_AddItemToObject(o, "curve", curve_json(&res.st.loss));
        cJSON_AddItemToObject(o, "eval_curve", curve_json(&res.st.eval));
        if (tc.recall_every > 0) cJSON_AddItemToObject(o, "recall_curve", curve_json(&res.measure));
        cJSON_AddNumberToObject(o, "final_loss", final_loss);
        cJSON_AddNumberToObject(o, "final_eval_ppl", res.final_eval_ppl);
        cJSON_AddNumberToObject(o, "teacher_eval_ppl", exp(teacher_nll));
        cJSON_AddStringToObject(o, "data", data.sampled ? "teacher-sampled" : tc.data);
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
    } else {
        printf("done: %ld steps, %ld tokens, final loss %.6f, held-out ppl %.4f (teacher %.4f)%s\n", res.st.step,
               res.st.tokens, final_loss, res.final_eval_ppl, exp(teacher_nll),
               data.sampled ? " [data: teacher-sampled]" : "");
    }
done:
    if (rc == 1) rc = 0;
    goto cleanup;
out:
    rc = cli_fail("train");
cleanup:
    if (have_res) train_result_free(&res);
    if (have_st) cli_student_free(&st);
    train_student_close(handle);
    train_data_free(&data);
    tf_free(&tt);
    if (!same) model_free(&src);
    model_free(&teacher);
    return rc;
}
