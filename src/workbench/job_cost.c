#include "workbench/job_cost.h"

#include <sys/stat.h>

#include "model/model.h"

#define FLOPS 2e10      /* nominal multiply-adds x2 per second (a 2-core machine) */
#define TOKENIZE_BPS 2e6 /* bytes per second through the BPE tokenizer */

/* Multiply-adds per token in the linear layers, without the embedding and the LM head. */
static double body_macs(const model *m) {
    const model_config *c = &m->cfg;
    const double D = c->dim, F = c->hidden_dim, hd = c->head_dim;
    const double attn = D * hd * (c->n_heads * 2.0 + c->n_kv_heads * 2.0);
    return (double)c->n_layers * (attn + 3.0 * D * F);
}

double cost_tokenize(const model *m, const char *path) {
    (void)m;
    struct stat sb;
    double bytes = path && stat(path, &sb) == 0 ? (double)sb.st_size : 1e5;
    return bytes / TOKENIZE_BPS;
}

double cost_forward(const model *m, double tokens, int ctx) {
    const model_config *c = &m->cfg;
    /* attention scores and values: about ctx/2 keys per query, per head */
    double attn = (double)c->n_layers * c->n_heads * c->head_dim * 2.0 * (ctx / 2.0);
    return tokens * 2.0 * (body_macs(m) + attn) / FLOPS;
}

double cost_eval(const model *m, double tokens, int ctx) {
    return cost_forward(m, tokens, ctx) + tokens * 2.0 * (double)m->cfg.dim * m->cfg.vocab_size / FLOPS;
}

double cost_stage1_layer(const model *m) {
    const double D = m->cfg.dim;
    return 2.0 * D * D * 1024 / FLOPS; /* a few passes of the captured activations */
}

double cost_stage2_layer(const model *m, int steps, int seqs, int ctx) {
    const model_config *c = &m->cfg;
    const double D = c->dim, HD = (double)c->n_heads * c->head_dim;
    /* projections in and out (q, k, v, gates, o) and the recurrent state, forward + backward (x3) */
    const double per_token = 2.0 * (4.0 * D * HD + 2.0 * HD * c->head_dim) * 3.0;
    return (double)steps * seqs * ctx * per_token / FLOPS;
}

double cost_train_step(const model *m, int batch, int ctx) {
    /* student forward + backward (x3) and the teacher's forward with logits */
    return 4.0 * cost_eval(m, (double)batch * ctx, ctx);
}
