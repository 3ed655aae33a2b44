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
#include "method/artifact.h"
#include "backend/comm.h"
#include "method/train_run.h"
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
    fflush(p->json ? stderr : stdout); /* a log redirected to a file shows each step as it ends */
}

static void print_eval(void *ud, long step, long tokens, double ppl) {
    const step_printer *p = ud;
    if (p->log_every > 0) fprintf(p->json ? stderr : stdout, "eval  step %ld  tokens %ld  held-out ppl %.4f\n", step, tokens, ppl);
    fflush(p->json ? stderr : stdout);
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
    /* before the outputs are claimed: a Ctrl-C while the teachers load then ends the run through
     * cli_die_if_stopped (below), which lets the claims go, where the default action left --ckpt's
     * lock file behind */
    cli_catch_stop_signals();
    if (cli_rank0() && ((ckpt && cli_out_claim("--ckpt", ckpt, OUT_CKPT, 1) != 0) ||
                        (out_dir && cli_out_claim("--out", out_dir, OUT_STUDENT, 1) != 0) ||
                        (tc.to.window_log && cli_out_claim("--log-windows", tc.to.window_log, OUT_LOG, 1) != 0)))
        return cli_fail("train");
    if (ckpt && cli_rank0()) { /* one claimant: the checkpoint belongs to one request (another's is refused) */
        char digest[ARTIFACT_DIGEST_HEX], note[1200];
        /* the run depends on the global batch, not on how ranks and micro-batches split it (as the
         * checkpoint's own options hash): one process resumes what two ranks of half the batch wrote */
        request rk = r;
        rk.u.train.tc.to.batch *= rk.u.train.tc.to.accum * comm_size(be_comm(be_default()));
        rk.u.train.tc.to.accum = 1;
        if (artifact_claim_record_file(&rk, ckpt, r.u.train.force, "choose another --ckpt, or pass --force", digest, note,
                                       sizeof note) != 0)
            return cli_fail("train");
        if (note[0] && cli_rank0() && !resume) fprintf(stderr, "graft train: %s\n", note); /* resuming is reusing */
    }
    /* --out: a folder this request may write (new, or made by this same request), else refused unless --force */
    char out_digest[ARTIFACT_DIGEST_HEX];
    cJSON *out_id = NULL;
    if (out_dir) {
        artifact_claim claim;
        if (artifact_identity(&r, &out_id, out_digest) != 0 ||
            artifact_claim_dir(out_dir, "config.json", out_digest, r.u.train.force,
                               "choose another --out, or pass --force to replace it", &claim) != 0) {
            cJSON_Delete(out_id);
            return cli_fail("train");
        }
    }
    /* --recall-dump: a bad path fails here, before the teacher loads and hours of training */
    if (cli_recall_dump_open(&tc, resume) != 0) {
        cJSON_Delete(out_id);
        return cli_fail("train");
    }
    train_cli_recall_run(&tc, 0, pos[0]); /* the dump's "run": the student */
    const char *folder_list[1] = {pos[0]};
    train_plan plan = {&tc, folder || strcmp(pos[0], tc.teacher) != 0 ? 2 : 1, folder_list, folder ? 1 : 0, false, NULL};
    cli_mem_plan(train_plan_fill, &plan, "lower --batch or --ctx");
    model teacher, src;
    if (cli_load_model("train", tc.teacher, &co, &teacher) != 0) {
        train_cli_recall_close(&tc);
        cJSON_Delete(out_id);
        return 1;
    }
    const bool same = folder || strcmp(pos[0], tc.teacher) == 0;
    if (!same && cli_load_model("train", pos[0], &co, &src) != 0) {
        train_cli_recall_close(&tc);
        model_free(&teacher);
        cJSON_Delete(out_id);
        return 1;
    }
    const model *sm = same ? &teacher : &src;
    train_outcome o;
    rc = 1;
    step_printer pr = {tc.log_every, co.json};
    tc.to.on_step = print_step;
    tc.to.on_eval = print_eval;
    tc.to.ud = &pr;
    cli_die_if_stopped(); /* stopped before the first step: nothing to keep */
    if (method_train_run(&r, &tc, &teacher, sm, folder, cli_stop_flag(), &o) != 0) goto out;
    const train_result *res = &o.res;
    if (res->stopped_by) {
        fprintf(stderr, "graft train: stopped by %s at step %ld of %ld; checkpoint %s written (run again with --resume)\n",
                res->stopped_by == SIGINT ? "SIGINT" : "SIGTERM", res->st.step, res->total_steps,
                ckpt ? ckpt : "(none: no --ckpt)");
        rc = 128 + res->stopped_by; /* main then ends by the signal itself */
        goto done;
    }
    if (out_dir && cli_rank0()) { /* one writer; the folder records the request that trained it */
        cJSON *extra = cJSON_CreateObject();
        cJSON_AddItemToObject(extra, ARTIFACT_KEY, artifact_record(&r, out_id, out_digest));
        const int saved = train_student_save(&o.st, o.handle, out_dir, extra);
        cJSON_Delete(extra);
        if (saved != 0) goto out;
    }
    const double teacher_nll = o.teacher_nll;
    const double final_loss = res->st.loss.n ? res->st.loss.xy[2 * res->st.loss.n - 1] : NAN;
    if (co.json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "phase", tc.to.phase == PHASE_KL ? "kl" : "align");
        cJSON_AddStringToObject(j, "init", o.init_name);
        if (out_dir) cJSON_AddStringToObject(j, "out", out_dir);
        cJSON_AddNumberToObject(j, "steps", (double)res->st.step);
        cJSON_AddNumberToObject(j, "tokens", (double)res->st.tokens);
        cJSON_AddNumberToObject(j, "resumed_from", (double)res->resumed_from);
        cJSON_AddItemToObject(j, "curve", curve_json(&res->st.loss));
        cJSON_AddItemToObject(j, "eval_curve", curve_json(&res->st.eval));
        if (tc.recall_every > 0) {
            cJSON_AddItemToObject(j, "recall_curve", curve_json(&res->measure));
            cJSON_AddItemToObject(j, "recall_cells", train_cli_recall_cells_json(&tc, 0));
        }
        cJSON_AddNumberToObject(j, "final_loss", final_loss);
        cJSON_AddNumberToObject(j, "final_eval_ppl", res->final_eval_ppl);
        cJSON_AddNumberToObject(j, "teacher_eval_ppl", exp(teacher_nll));
        cJSON_AddStringToObject(j, "data", o.data.sampled ? "teacher-sampled" : tc.data);
        cJSON_AddItemToObject(j, "memory", cli_mem_json());
        cli_print_json(j);
    } else {
        printf("done: %ld steps, %ld tokens, final loss %.6f, held-out ppl %.4f (teacher %.4f)%s\n", res->st.step,
               res->st.tokens, final_loss, res->final_eval_ppl, exp(teacher_nll),
               o.data.sampled ? " [data: teacher-sampled]" : "");
    }
done:
    if (rc == 1) rc = 0;
    goto cleanup;
out:
    rc = cli_fail("train");
cleanup:
    if (train_cli_recall_close(&tc) != 0 && rc == 0) rc = cli_fail("train");
    cJSON_Delete(out_id);
    train_outcome_free(&o);
    if (!same) model_free(&src);
    model_free(&teacher);
    return rc;
}
