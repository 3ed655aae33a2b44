/* graft stats MODEL --text FILE [--ctx N] [--seqs N]: per-head attention statistics. */
#include <math.h>
#include <stdio.h>

#include "core/error.h"
#include "cli/common.h"
#include "cli/ranks.h"
#include "method/mem_check.h"
#include "commands.h"
#include "data/text_tokens.h"
#include "cli/stats_report.h"
#include "stats/collect.h"

void attn_stats_print(const attn_stats *s) {
    const char *titles[5] = {"mean attention distance (tokens)", "entropy (nats)", "output RMS",
                             "mean attention distance without the first key (tokens)",
                             "attention share on the first key (sink)"};
    for (int k = 0; k < 5; k++) {
        printf("%s\n  layer", titles[k]);
        for (int h = 0; h < s->n_heads; h++) {
            char label[16];
            snprintf(label, sizeof label, "h%d", h);
            printf(" %9s", label);
        }
        printf("\n");
        for (int l = 0; l < s->n_layers; l++) {
            printf("  %5d", l);
            for (int h = 0; h < s->n_heads; h++) {
                double v = k == 0 ? attn_stats_mean_distance(s, l, h)
                         : k == 1 ? attn_stats_entropy(s, l, h)
                         : k == 2 ? attn_stats_output_rms(s, l, h)
                         : k == 3 ? attn_stats_mean_distance_nosink(s, l, h)
                                  : attn_stats_sink_share(s, l, h);
                printf(" %9.3f", v);
            }
            printf("\n");
        }
        printf("\n");
    }
}

/* collect_attn_stats: sequences in batches of up to 4096 rows */
typedef struct {
    int ctx, seqs;
} stats_plan;

static void stats_fill(mem_job *j, void *ud) {
    const stats_plan *p = ud;
    int B = 4096 / p->ctx;
    if (B < 1) B = 1;
    if (p->seqs > 0 && B > p->seqs) B = p->seqs;
    j->run[0] = (tf_run_opts){.B = B, .T = p->ctx, .stats = true, .logit_rows = 1};
}

int cmd_stats(int argc, char **argv) {
    request r;
    bool done;
    int rc = cli_request(&r, REQ_STATS, argc, argv, &done);
    if (rc || done) return rc;
    common_opts co = r.co;
    const char **pos = r.pos;
    const int n_ranks = r.n_ranks, n_gpus = r.n_gpus;
    const char *text = r.u.stats.text;
    const int ctx = r.u.stats.ctx, seqs = r.u.stats.seqs;
    if (cli_ranks_launch("stats", argc, argv, n_ranks, n_gpus, &co, &rc)) return rc;
    if ((rc = cli_setup("stats", &co))) return rc;
    cli_ctx_plan(ctx, &co);
    stats_plan plan = {ctx, seqs};
    cli_mem_plan(stats_fill, &plan, "lower --ctx or --seqs");
    model m;
    if (cli_load_model("stats", pos[0], &co, &m) != 0) return 1;
    if (!m.tok) {
        fprintf(stderr, "graft stats: %s has no tokenizer (pass --tokenizer PATH)\n", pos[0]);
        model_free(&m);
        return 1;
    }
    int_vec ids = {0}, cut = {0};
    int n_seqs = 0;
    attn_stats st;
    attn_stats_init(&st, m.cfg.n_layers, m.cfg.n_heads);
    if (text_file_tokens(m.tok, text, false, &ids) != 0 ||
        (cut_sequences(ids.data, ids.len, 0, tokenizer_bos(m.tok), ctx, seqs, &cut, &n_seqs) != 0 &&
         gf_fail_prefix(text)) ||
        collect_attn_stats(&m, cut.data, n_seqs, ctx, &st, NULL) != 0) {
        rc = cli_fail("stats");
    } else if (co.json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", pos[0]); /* the teacher, as graft tui --import matches it */
        cJSON_AddNumberToObject(o, "sequences", n_seqs);
        cJSON_AddNumberToObject(o, "ctx", ctx);
        cJSON_AddItemToObject(o, "layers", attn_stats_json(&st));
        cJSON_AddItemToObject(o, "memory", cli_mem_json());
        cli_print_json(o);
    } else {
        printf("%s: %d sequences x %d tokens\n\n", m.name, n_seqs, ctx);
        attn_stats_print(&st);
    }
    attn_stats_free(&st);
    int_vec_free(&ids);
    int_vec_free(&cut);
    model_free(&m);
    return rc;
}
