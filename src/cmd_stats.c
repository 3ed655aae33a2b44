/* graft stats MODEL --text FILE [--ctx N] [--seqs N]: per-head attention statistics. */
#include <math.h>
#include <stdio.h>

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
    common_opts co;
    common_opts_default(&co);
    int n_ranks = 1, n_gpus = 0;
    const char *text = NULL;
    int ctx = 256, seqs = 4;
    opt_spec specs[] = {
        {"text", OPT_STR, &text, "calibration text file"},
        {"ctx", OPT_INT, &ctx, "tokens per sequence, BOS included (default 256)"},
        {"seqs", OPT_INT, &seqs, "sequences (default 4; 0 = every complete one)"},
        RANKS_OPTS(n_ranks, n_gpus),
        CTX_OPTS(co),
        COMMON_OPTS(co),
    };
    const char *pos[1];
    int np, rc = cli_parse(argc, argv, specs, sizeof specs / sizeof *specs, pos, 1, 1, &np,
                           "graft stats MODEL --text FILE [--ctx N] [--seqs N] [--json]", &co);
    if (rc) return rc < 0 ? 0 : rc;
    if (cli_ranks_launch("stats", argc, argv, n_ranks, n_gpus, &co, &rc)) return rc;
    if ((rc = cli_setup("stats", &co))) return rc;
    cli_ctx_plan(ctx, &co);
    if (!text) {
        fprintf(stderr, "graft stats: --text FILE is required\n");
        return 2;
    }
    if (ctx < 2 || seqs < 0) {
        fprintf(stderr, "graft stats: --ctx must be >= 2 and --seqs >= 0\n");
        return 2;
    }
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
        cut_sequences(ids.data, ids.len, 0, tokenizer_bos(m.tok), ctx, seqs, &cut, &n_seqs) != 0 ||
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
