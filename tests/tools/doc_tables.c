/* Prints graft's descriptor tables as markdown, for scripts/docs-tables.sh,
 * which checks (or writes) the `<!-- table: NAME -->` blocks of README.md
 * and docs/ against them. Not part of graft.
 *
 *   doc_tables inits | archs | tensors | gdn */
#include <stdio.h>
#include <string.h>

#include "formats/tensor_names.h"
#include "gdn/gdn.h"
#include "model/config.h"
#include "student/student.h"

static void inits(void) {
    printf("| init | Stage 1 parts | Stage 2 | what it does |\n|---|---|---|---|\n");
    for (int i = 0; i < INIT_COUNT; i++) {
        const student_init_desc *d = &student_inits[i];
        char parts[64] = "none";
        size_t n = 0;
        for (int k = 0; k < 4; k++)
            if (d->stage1 & (1u << k))
                n += (size_t)snprintf(parts + n, sizeof parts - n, "%s%s", n ? ", " : "", stage1_part_names[k]);
        printf("| `%s` | %s | %s | %s |\n", d->name, parts, d->stage2 ? "yes" : "no", d->description);
    }
}

static void archs(void) {
    printf("| family | `model_type` / GGUF architecture | HF class | q/k/v biases | q/k norm | HF defaults "
           "(head_dim, max_position_embeddings) | GGUF q/k rows |\n|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < ARCH_COUNT; i++) {
        const model_arch_desc *a = &model_archs[i];
        char hd[32];
        if (a->head_dim_default) snprintf(hd, sizeof hd, "%d", a->head_dim_default);
        else snprintf(hd, sizeof hd, "hidden / heads");
        printf("| %s | `%s` | `%s` | %s | %s | %s, %d | %s |\n", a->family, a->name, a->hf_class,
               a->bias_always ? "always" : "when `attention_bias`", a->qk_norm ? "yes" : "no", hd, a->max_pos_default,
               a->gguf_permuted_qk ? "permuted (un-permuted on load)" : "as HF");
    }
}

static const char *const tdim[] = {[TDIM_NONE] = "", [TDIM_D] = "D", [TDIM_F] = "F", [TDIM_V] = "V",
                                   [TDIM_HD] = "hd", [TDIM_QD] = "H*hd", [TDIM_KVD] = "KV*hd"};
static const char *const twhen[] = {[TWHEN_ALWAYS] = "always", [TWHEN_QKV_BIAS] = "q/k/v biases",
                                    [TWHEN_QK_NORM] = "q/k norm", [TWHEN_UNTIED] = "untied embeddings"};

static void tensors(void) {
    printf("| role | Hugging Face | GGUF | llama2.c | shape | present |\n|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < tensor_names_count; i++) {
        const tensor_name_desc *t = &tensor_names[i];
        const char *hp = t->per_layer ? HF_LAYER_PREFIX "N." : "", *gp = t->per_layer ? GGUF_LAYER_PREFIX "N." : "";
        char shape[32];
        if (t->cols != TDIM_NONE) snprintf(shape, sizeof shape, "[%s, %s]", tdim[t->rows], tdim[t->cols]);
        else snprintf(shape, sizeof shape, "[%s]", tdim[t->rows]);
        char l2c[32] = "-";
        if (t->llama2c) snprintf(l2c, sizeof l2c, "`%s`", t->llama2c);
        printf("| `%s` | `%s%s` | `%s%s` | %s | %s | %s |\n", tensor_kind_name(t->kind), hp, t->hf, gp, t->gguf,
               l2c, shape, twhen[t->when]);
    }
}

static const char *const gdim[] = {[GDN_DIM_D] = "D",   [GDN_DIM_H] = "H",   [GDN_DIM_HK] = "H*dk", [GDN_DIM_HV] = "H*dv",
                                   [GDN_DIM_DV] = "dv", [GDN_DIM_CONV_K] = "4", [GDN_DIM_ONE] = "1"};
static const char *const gwhen[] = {[GDN_WHEN_ALWAYS] = "always", [GDN_WHEN_BIAS] = "`--qkv-bias`",
                                    [GDN_WHEN_CONV] = "`--conv`"};
static const char *const glr[] = {[GDN_LR_QKV] = "lr_qkv", [GDN_LR_GATES] = "lr_gates", [GDN_LR_FROZEN] = "frozen"};

static void gdn(void) {
    printf("| name | shape | present | Stage 2 | meaning |\n|---|---|---|---|---|\n");
    for (int rank = 0; rank < GDN_P_COUNT; rank++)
        for (int i = 0; i < GDN_P_COUNT; i++) {
            const gdn_param_desc *d = &gdn_param_descs[i];
            if (d->file_rank != rank) continue;
            char shape[48];
            if (d->taps != GDN_DIM_ONE)
                snprintf(shape, sizeof shape, "[%s, %s, %s]", gdim[d->rows], gdim[d->cols], gdim[d->taps]);
            else if (d->cols != GDN_DIM_ONE) snprintf(shape, sizeof shape, "[%s, %s]", gdim[d->rows], gdim[d->cols]);
            else snprintf(shape, sizeof shape, "[%s]", gdim[d->rows]);
            printf("| `%s` | %s | %s | %s | %s |\n", d->name, shape, gwhen[d->when], glr[gdn_group_lr(d->group)], d->doc);
        }
}

int main(int argc, char **argv) {
    const char *what = argc == 2 ? argv[1] : "";
    if (!strcmp(what, "inits")) inits();
    else if (!strcmp(what, "archs")) archs();
    else if (!strcmp(what, "tensors")) tensors();
    else if (!strcmp(what, "gdn")) gdn();
    else {
        fprintf(stderr, "usage: doc_tables inits|archs|tensors|gdn\n");
        return 2;
    }
    return 0;
}
