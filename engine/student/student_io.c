#include "formats/model_load.h"
#include "student/student_io.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "core/path.h"
#include "formats/safetensors.h"
#include "formats/safetensors_write.h"
#include "formats/tensor_names.h"
#include "student/student_export.h"

#define STUDENT_FORMAT_VERSION 1

char *teacher_tokenizer_path(const char *teacher_path, int vocab, const char *override) {
    if (override) return gf_strdup(override);
    char cand[PATH_MAX + 32];
    if (path_is_dir(teacher_path)) {
        snprintf(cand, sizeof cand, "%s/tokenizer.json", teacher_path);
        if (path_is_file(cand)) return gf_strdup(cand);
        snprintf(cand, sizeof cand, "%s/tokenizer.bin", teacher_path);
        return path_is_file(cand) ? gf_strdup(cand) : NULL;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", teacher_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    snprintf(cand, sizeof cand, "%s/tokenizer.bin", dir);
    if (path_is_file(cand)) return gf_strdup(cand);
    snprintf(cand, sizeof cand, "%s/tok%d.bin", dir, vocab);
    return path_is_file(cand) ? gf_strdup(cand) : NULL;
}

/* ----------------------------------------------------------------- config */

static void add_int_array(cJSON *o, const char *name, const int *v, int n) {
    cJSON *a = cJSON_AddArrayToObject(o, name);
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
}

static cJSON *teacher_hf_config(const model_config *c) {
    cJSON *o = cJSON_CreateObject();
    const model_arch_desc *arch = &model_archs[c->arch];
    cJSON *a = cJSON_AddArrayToObject(o, "architectures");
    cJSON_AddItemToArray(a, cJSON_CreateString(arch->hf_class));
    cJSON_AddStringToObject(o, "model_type", arch->name);
    cJSON_AddStringToObject(o, "hidden_act", "silu");
    cJSON_AddNumberToObject(o, "hidden_size", c->dim);
    cJSON_AddNumberToObject(o, "intermediate_size", c->hidden_dim);
    cJSON_AddNumberToObject(o, "num_hidden_layers", c->n_layers);
    cJSON_AddNumberToObject(o, "num_attention_heads", c->n_heads);
    cJSON_AddNumberToObject(o, "num_key_value_heads", c->n_kv_heads);
    cJSON_AddNumberToObject(o, "head_dim", c->head_dim);
    cJSON_AddNumberToObject(o, "vocab_size", c->vocab_size);
    cJSON_AddNumberToObject(o, "max_position_embeddings", c->max_seq);
    cJSON_AddNumberToObject(o, "rms_norm_eps", c->norm_eps);
    cJSON_AddNumberToObject(o, "rope_theta", c->rope_theta);
    if (c->rope_scaling.type == ROPE_SCALING_NONE || c->rope_scaling.type == ROPE_SCALING_FACTORS) {
        /* FACTORS (GGUF rope_freqs.weight) travel as graft_student.rope_freq_factors */
        cJSON_AddNullToObject(o, "rope_scaling");
    } else {
        cJSON *rs = cJSON_AddObjectToObject(o, "rope_scaling");
        cJSON_AddStringToObject(rs, "rope_type", c->rope_scaling.type == ROPE_SCALING_LLAMA3 ? "llama3" : "linear");
        cJSON_AddNumberToObject(rs, "factor", c->rope_scaling.factor);
        if (c->rope_scaling.type == ROPE_SCALING_LLAMA3) {
            cJSON_AddNumberToObject(rs, "low_freq_factor", c->rope_scaling.low_freq_factor);
            cJSON_AddNumberToObject(rs, "high_freq_factor", c->rope_scaling.high_freq_factor);
            cJSON_AddNumberToObject(rs, "original_max_position_embeddings", c->rope_scaling.original_max_pos);
        }
    }
    cJSON_AddBoolToObject(o, "tie_word_embeddings", c->tied_embeddings);
    /* the architectures whose q/k/v biases follow attention_bias (hf_config.c reads it back) */
    if (!arch->bias_always) cJSON_AddBoolToObject(o, "attention_bias", c->qkv_bias);
    if (c->bos_id >= 0) cJSON_AddNumberToObject(o, "bos_token_id", c->bos_id);
    if (c->eos_id >= 0) cJSON_AddNumberToObject(o, "eos_token_id", c->eos_id);
    cJSON_AddStringToObject(o, "torch_dtype", "float32");
    return o;
}

cJSON *student_config_json(const student *s) {
    cJSON *o = teacher_hf_config(&s->m->cfg);
    cJSON *g = cJSON_AddObjectToObject(o, "graft_student");
    cJSON_AddNumberToObject(g, "format_version", STUDENT_FORMAT_VERSION);
    int *gl = gf_malloc((size_t)s->L * sizeof *gl), *al = gf_malloc((size_t)s->L * sizeof *al), ng = 0, na = 0;
    for (int l = 0; l < s->L; l++) {
        if (s->is_gdn[l]) gl[ng++] = l;
        else al[na++] = l;
    }
    add_int_array(g, "gdn_layers", gl, ng);
    add_int_array(g, "attention_layers", al, na);
    free(gl);
    free(al);
    const gdn_config *c = &s->gcfg;
    const student_settings *st = &s->set;
    cJSON *gd = cJSON_AddObjectToObject(g, "gdn");
    cJSON_AddNumberToObject(gd, "num_heads", c->H);
    cJSON_AddNumberToObject(gd, "head_k_dim", c->dk);
    cJSON_AddNumberToObject(gd, "head_v_dim", c->dv);
    cJSON_AddNumberToObject(gd, "expand_v", 1);
    cJSON_AddStringToObject(gd, "query_scale", gdn_scale_name(c->scale_mode));
    cJSON_AddNumberToObject(gd, "chunk_size", c->chunk);
    cJSON_AddBoolToObject(gd, "use_short_conv", c->conv);
    cJSON_AddNumberToObject(gd, "conv_size", GDN_CONV_K);
    cJSON_AddBoolToObject(gd, "qkv_bias", c->qkv_bias);
    cJSON_AddNumberToObject(gd, "norm_eps", c->norm_eps);
    cJSON_AddNumberToObject(gd, "qk_l2_eps", GDN_QK_L2_EPS);
    cJSON_AddBoolToObject(gd, "use_rope", 0);
    cJSON *in = cJSON_AddObjectToObject(g, "init");
    cJSON_AddStringToObject(in, "name", student_init_name(st->init));
    cJSON_AddStringToObject(in, "write_gate", write_gate_name(st->write_gate));
    cJSON_AddNumberToObject(in, "damping", st->damping);
    cJSON *s1 = cJSON_AddArrayToObject(in, "stage1"); /* the components applied, in order; [] without Stage 1 */
    for (int i = 0; i < 4; i++)
        if (student_stage1_parts(st) & (1u << i)) cJSON_AddItemToArray(s1, cJSON_CreateString(stage1_part_names[i]));
    cJSON_AddStringToObject(in, "decay_distance", decay_distance_name(st->distance));
    cJSON_AddStringToObject(in, "sigma_fit", sigma_fit_name(st->sigma_fit));
    if (st->half_life > 0) cJSON_AddNumberToObject(in, "half_life", st->half_life);
    else cJSON_AddNullToObject(in, "half_life");
    cJSON_AddNumberToObject(in, "seed", (double)st->seed);
    cJSON_AddStringToObject(in, "rng", "splitmix64 stream per layer (rng_seed2(seed, layer)); Box-Muller normals");
    cJSON *s2 = cJSON_AddObjectToObject(in, "stage2");
    cJSON_AddNumberToObject(s2, "steps", st->steps);
    cJSON_AddNumberToObject(s2, "lr_qkv", st->lr_qkv);
    cJSON_AddNumberToObject(s2, "lr_gates", st->lr_gates);
    cJSON_AddNumberToObject(s2, "weight_decay", st->weight_decay);
    cJSON_AddNumberToObject(s2, "clip", st->clip);
    cJSON_AddStringToObject(s2, "keep_best", st->keep_best == KEEP_BEST_HELDOUT ? "heldout" : "train");
    cJSON_AddStringToObject(g, "teacher", s->m->path ? s->m->path : "");
    cJSON_AddStringToObject(g, "teacher_rope", s->m->cfg.rope_pairing == ROPE_ADJACENT
                                                  ? "llama2.c adjacent pairs; q/k rows permuted to half-split"
                                                  : "half-split");
    return o;
}

/* ----------------------------------------------------------------- save */

/* llama2.c rotates (2i, 2i+1); HF rotates (i, i + hd/2). Row 2i of each head
 * goes to row i, row 2i+1 to row i + hd/2 (dot products are unchanged). */
static float *permute_rows_to_half(const float *w, int heads, int hd, int cols) {
    float *out = gf_malloc((size_t)heads * hd * cols * sizeof *out);
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < hd / 2; i++) {
            memcpy(out + ((size_t)h * hd + i) * cols, w + ((size_t)h * hd + 2 * i) * cols, (size_t)cols * sizeof *w);
            memcpy(out + ((size_t)h * hd + i + hd / 2) * cols, w + ((size_t)h * hd + 2 * i + 1) * cols,
                   (size_t)cols * sizeof *w);
        }
    return out;
}

typedef struct {
    float **v;
    int n, cap;
    int failed; /* a download failed (out of memory): nothing may be written */
} owned_list;

static const float *keep(owned_list *o, float *p) {
    if (o->n == o->cap) o->v = gf_realloc(o->v, (size_t)(o->cap = o->cap ? 2 * o->cap : 16) * sizeof *o->v);
    o->v[o->n++] = p;
    return p;
}

static void add2(st_writer *w, const char *name, const float *d, int64_t a, int64_t b) {
    int64_t sh[2] = {a, b};
    if (d) st_writer_add(w, name, d, b > 0 ? 2 : 1, sh);
}

/* A teacher tensor downloaded to the host (kept until the file is written). */
static const float *host(owned_list *own, const model *m, int l, tensor_kind k) {
    float *x = gf_try_malloc(model_tensor_elems(m, l, k) * sizeof *x, "a tensor of the student folder");
    if (!x || model_get(m, l, k, x) != 0) {
        free(x);
        own->failed = 1;
        return NULL; /* add2 skips it; student_save fails */
    }
    return keep(own, x);
}

static const float *half_split(owned_list *own, const float *w, int heads, int hd, int cols) {
    return w ? keep(own, permute_rows_to_half(w, heads, hd, cols)) : NULL;
}

/* The teacher's tensors under their Hugging Face names; a llama2.c
 * teacher's q/k rows (adjacent RoPE pairs) go to half-split order. */
static void add_teacher(st_writer *w, owned_list *own, const model *m) {
    const model_config *c = &m->cfg;
    const bool perm = c->rope_pairing == ROPE_ADJACENT;
    teacher_tensor *t;
    const size_t n = teacher_tensor_list(c, TNAMES_HF, &t);
    for (size_t i = 0; i < n; i++) {
        const float *x = host(own, m, t[i].layer, t[i].kind);
        if (perm && t[i].rope_heads)
            x = half_split(own, x, t[i].rope_heads, c->head_dim, t[i].cols ? (int)t[i].cols : 1);
        add2(w, t[i].name, x, t[i].rows, t[i].cols);
    }
    free(t);
}

/* Name, pointer, shape of every GDN tensor of layer l (fla naming), in the
 * file's order (gdn_param_descs' file_rank). */
typedef struct {
    char name[160];
    float *ptr;
    int ndim;
    int64_t shape[3];
} gdn_tensor_ref;

#define GDN_LAYER_PREFIX "model.layers.%d.linear_attn."

static int gdn_tensor_refs(const gdn_config *c, const gdn_params *p, int l, gdn_tensor_ref *out) {
    float *const views[GDN_P_COUNT] = {
#define VIEW_(a, b, d, field, ...) p->field,
        GDN_PARAM_LIST(VIEW_, _, _, _)
#undef VIEW_
    };
    int k = 0;
    for (int rank = 0; rank < GDN_P_COUNT; rank++)
        for (int i = 0; i < GDN_P_COUNT; i++) {
            const gdn_param_desc *d = &gdn_param_descs[i];
            if (d->file_rank != rank || !gdn_param_present(c, (gdn_param_id)i)) continue;
            gdn_tensor_ref *r = &out[k++];
            snprintf(r->name, sizeof r->name, GDN_LAYER_PREFIX "%s", l, d->name);
            r->ptr = views[i];
            r->shape[0] = (int64_t)gdn_dim_size(c, d->rows);
            r->shape[1] = d->cols == GDN_DIM_ONE && d->taps == GDN_DIM_ONE ? 0 : (int64_t)gdn_dim_size(c, d->cols);
            r->shape[2] = d->taps == GDN_DIM_ONE ? 0 : (int64_t)gdn_dim_size(c, d->taps);
            r->ndim = r->shape[2] ? 3 : r->shape[1] ? 2 : 1;
        }
    return k;
}

/* The student folder's files, each into its own atomic_file (unfinished
 * until every one is written). */
enum { F_CONFIG, F_MODEL, F_REPORT, F_TOKENIZER, N_FILES };

static int put_text(atomic_file *a, const char *text) {
    size_t n = strlen(text);
    return fwrite(text, 1, n, a->f) == n && fputc('\n', a->f) != EOF ? 0 : gf_fail("%s: write failed", a->path);
}

static int put_copy(atomic_file *a, const char *src) {
    mapped_file mf;
    if (mapped_file_open(&mf, src) != 0) return -1;
    int ok = mf.size == 0 || fwrite(mf.data, 1, mf.size, a->f) == mf.size;
    mapped_file_close(&mf);
    return ok ? 0 : gf_fail("%s: write failed", a->path);
}

/* A student with a NaN or an infinity in a parameter is not written: no
 * later load could tell it from a good one. */
static int all_finite(const st_writer *w, const char *dir) {
    for (size_t i = 0; i < w->n; i++)
        for (size_t j = 0; j < w->t[i].n; j++)
            if (!isfinite(w->t[i].data[j]))
                return gf_fail("%s: %s holds a non-finite value (%g at index %zu); the student was not written", dir,
                               w->t[i].name, (double)w->t[i].data[j], j);
    return 0;
}

int student_save(const student *s, const char *dir, const char *tokenizer_src, const cJSON *report) {
    return student_save_with(s, dir, tokenizer_src, report, NULL);
}

int student_save_with(const student *s, const char *dir, const char *tokenizer_src, const cJSON *report,
                      const cJSON *config_extra) {
    if (!path_is_dir(dir) && mkdir(dir, 0777) != 0) return gf_fail("%s: cannot create folder (%s)", dir, strerror(errno));
    char path[N_FILES][PATH_MAX];
    snprintf(path[F_CONFIG], PATH_MAX, "%s/config.json", dir);
    snprintf(path[F_MODEL], PATH_MAX, "%s/model.safetensors", dir);
    snprintf(path[F_REPORT], PATH_MAX, "%s/report.json", dir);
    path[F_TOKENIZER][0] = 0;
    /* a copy of the teacher's tokenizer file; other sources (GGUF metadata) get
     * a tokenizer.json written by the export below */
    if (tokenizer_src && (str_ends_with(tokenizer_src, ".bin") || str_ends_with(tokenizer_src, ".json")))
        snprintf(path[F_TOKENIZER], PATH_MAX, "%s/%s", dir,
                 str_ends_with(tokenizer_src, ".bin") ? "tokenizer.bin" : "tokenizer.json");
    const bool want[N_FILES] = {true, true, report != NULL,
                                path[F_TOKENIZER][0] && strcmp(tokenizer_src, path[F_TOKENIZER]) != 0};
    atomic_file af[N_FILES];
    memset(af, 0, sizeof af);
    /* 1. every file complete beside its destination, the export's too */
    student_export x;
    int rc = student_export_write_tmp(&x, s, dir, tokenizer_src);
    for (int i = 0; i < N_FILES && rc == 0; i++)
        if (want[i]) rc = atomic_file_open(&af[i], path[i]);
    if (rc == 0) {
        cJSON *cfg = student_config_json(s);
        student_export_config(cfg, s, &x);
        const char *tok_name = path[F_TOKENIZER][0] ? strrchr(path[F_TOKENIZER], '/') + 1 : x.tokenizer_json;
        if (tok_name) cJSON_AddStringToObject(cJSON_GetObjectItem(cfg, "graft_student"), "tokenizer", tok_name);
        for (const cJSON *e = config_extra ? config_extra->child : NULL; e; e = e->next)
            cJSON_AddItemToObject(cfg, e->string, cJSON_Duplicate(e, 1));
        char *cfg_text = cJSON_Print(cfg);
        cJSON_Delete(cfg);
        rc = put_text(&af[F_CONFIG], cfg_text);
        free(cfg_text);
    }
    if (rc == 0) {
        st_writer w;
        st_writer_init(&w);
        owned_list own = {0};
        add_teacher(&w, &own, s->m);
        if (own.failed) rc = -1;
        gdn_tensor_ref refs[GDN_P_COUNT];
        for (int l = 0; l < s->L && rc == 0; l++) {
            if (!s->is_gdn[l]) continue;
            gdn_params p;
            gdn_params_alloc(&p, &s->gcfg);
            keep(&own, p.block);
            if (student_get_layer(s, l, &p) != 0) {
                rc = -1;
                break;
            }
            int k = gdn_tensor_refs(&s->gcfg, &p, l, refs);
            for (int i = 0; i < k; i++) st_writer_add(&w, refs[i].name, refs[i].ptr, refs[i].ndim, refs[i].shape);
        }
        static const char *const md[] = {"format", "pt", "producer", "graft", NULL};
        if (rc == 0) rc = all_finite(&w, dir);
        if (rc == 0 && st_writer_write(&w, af[F_MODEL].f, md) != 0) rc = gf_fail("%s: write failed", path[F_MODEL]);
        st_writer_free(&w);
        for (int i = 0; i < own.n; i++) free(own.v[i]);
        free(own.v);
    }
    if (rc == 0 && want[F_REPORT]) {
        char *rt = cJSON_PrintUnformatted(report);
        rc = put_text(&af[F_REPORT], rt ? rt : "{}");
        free(rt);
    }
    if (rc == 0 && want[F_TOKENIZER]) rc = put_copy(&af[F_TOKENIZER], tokenizer_src);
    for (int i = 0; i < N_FILES && rc == 0; i++)
        if (want[i]) rc = atomic_file_finish(&af[i]);
    if (rc != 0) {
        for (int i = 0; i < N_FILES; i++) atomic_file_discard(&af[i]);
        student_export_abort(&x);
        student_export_free(&x);
        return -1;
    }
    /* 2. rename into place, the weights first */
    static const int order[N_FILES] = {F_MODEL, F_CONFIG, F_REPORT, F_TOKENIZER};
    for (int i = 0; i < N_FILES; i++) {
        int k = order[i];
        if (want[k] && rc == 0) rc = atomic_file_commit(&af[k]);
        else atomic_file_discard(&af[k]);
    }
    if (rc == 0) rc = student_export_commit(&x);
    else student_export_abort(&x);
    student_export_free(&x);
    return rc;
}

/* ----------------------------------------------------------------- load */

static cJSON *read_json(const char *path) {
    size_t len;
    char *text = read_text_file(path, &len);
    if (!text) return NULL;
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    if (!j) gf_fail("%s: not valid JSON", path);
    return j;
}

bool student_folder_detect(const char *path) {
    if (!path_is_dir(path)) return false;
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/config.json", path);
    if (!path_is_file(p)) return false;
    cJSON *j = read_json(p);
    bool yes = j && cJSON_IsObject(cJSON_GetObjectItem(j, "graft_student"));
    cJSON_Delete(j);
    gf_clear_error();
    return yes;
}

static int json_num(const cJSON *o, const char *k, double *out, const char *where) {
    const cJSON *v = cJSON_GetObjectItem(o, k);
    if (!cJSON_IsNumber(v) && !cJSON_IsBool(v)) return gf_fail("%s: graft_student: missing or non-numeric '%s'", where, k);
    *out = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0) : v->valuedouble;
    return 0;
}

/* A whole number in [lo, hi], so that the cast that follows is defined. */
static int json_whole(const cJSON *o, const char *k, double lo, double hi, double *out, const char *where) {
    if (json_num(o, k, out, where)) return -1;
    if (!(*out >= lo && *out <= hi) || *out != floor(*out))
        return gf_fail("%s: graft_student: '%s' = %g is not a whole number in [%.0f, %.0f]", where, k, *out, lo, hi);
    return 0;
}

static int json_str(const cJSON *o, const char *k, const char **out, const char *where) {
    const cJSON *v = cJSON_GetObjectItem(o, k);
    if (!cJSON_IsString(v)) return gf_fail("%s: graft_student: missing string '%s'", where, k);
    *out = v->valuestring;
    return 0;
}

static int parse_settings(const cJSON *g, student_settings *st, const char *where) {
    student_settings_default(st);
    double v;
    if (json_whole(g, "format_version", 1, 1e9, &v, where)) return -1;
    if (v != STUDENT_FORMAT_VERSION)
        return gf_fail("%s: graft_student.format_version is %g; this graft reads version %d (a folder from another "
                       "graft version?)", where, v, STUDENT_FORMAT_VERSION);
    const cJSON *gd = cJSON_GetObjectItem(g, "gdn"), *in = cJSON_GetObjectItem(g, "init");
    if (!cJSON_IsObject(gd) || !cJSON_IsObject(in)) return gf_fail("%s: graft_student needs 'gdn' and 'init' objects", where);
    const char *str = NULL;
    if (json_whole(gd, "chunk_size", 16, 64, &v, where)) return -1;
    if (v != 16 && v != 32 && v != 64) return gf_fail("%s: graft_student.gdn.chunk_size is %g, not 16, 32 or 64", where, v);
    st->chunk = (int)v;
    if (json_num(gd, "use_short_conv", &v, where)) return -1;
    st->conv = v != 0;
    if (json_num(gd, "qkv_bias", &v, where)) return -1;
    st->qkv_bias = v != 0;
    if (json_str(gd, "query_scale", &str, where)) return -1;
    if (strcmp(str, "dk^-1/2") == 0) st->scale = GDN_SCALE_INV_SQRT_DK;
    else if (strcmp(str, "none") == 0) st->scale = GDN_SCALE_NONE;
    else return gf_fail("%s: unknown query_scale '%s'", where, str);
    if (json_str(in, "name", &str, where) || student_init_parse(str, &st->init)) return -1;
    if (json_str(in, "write_gate", &str, where) || write_gate_parse(str, &st->write_gate)) return -1;
    if (json_num(in, "damping", &v, where)) return -1;
    if (!(isfinite(v) && v > 0)) return gf_fail("%s: graft_student.init.damping is %g, not a positive number", where, v);
    st->damping = v;
    if (json_whole(in, "seed", 0, 18446744073709549568.0 /* the largest double below 2^64 */, &v, where)) return -1;
    st->seed = (uint64_t)v;
    /* Stage 1 components, distance and half-life override (absent in folders
     * written before they existed: those applied every component) */
    const cJSON *s1 = cJSON_GetObjectItem(in, "stage1");
    if (s1) {
        if (!cJSON_IsArray(s1)) return gf_fail("%s: graft_student.init.stage1 must be a list of components", where);
        st->stage1 = STAGE1_NONE;
        const cJSON *it;
        cJSON_ArrayForEach(it, s1) {
            unsigned one;
            if (!cJSON_IsString(it) || strcmp(it->valuestring, "none") == 0 || strcmp(it->valuestring, "all") == 0 ||
                stage1_parts_parse(it->valuestring, &one) != 0 || (st->stage1 & one))
                return gf_fail("%s: graft_student.init.stage1 holds a bad or repeated component", where);
            st->stage1 |= one;
        }
    }
    const cJSON *dd = cJSON_GetObjectItem(in, "decay_distance");
    if (dd && (!cJSON_IsString(dd) || decay_distance_parse(dd->valuestring, &st->distance) != 0))
        return gf_fail("%s: graft_student.init.decay_distance must be \"all\" or \"no-sink\"", where);
    /* absent in folders written before the choice existed: those fitted with the scale */
    const cJSON *sf = cJSON_GetObjectItem(in, "sigma_fit");
    st->sigma_fit = SIGMA_FIT_SCALED;
    if (sf && (!cJSON_IsString(sf) || sigma_fit_parse(sf->valuestring, &st->sigma_fit) != 0))
        return gf_fail("%s: graft_student.init.sigma_fit must be \"reference\", \"scaled\" or \"gated\"", where);
    const cJSON *hl = cJSON_GetObjectItem(in, "half_life");
    if (hl && !cJSON_IsNull(hl)) {
        if (!cJSON_IsNumber(hl) || !(hl->valuedouble > 0) || !isfinite(hl->valuedouble))
            return gf_fail("%s: graft_student.init.half_life must be a positive number or null", where);
        st->half_life = hl->valuedouble;
    }
    return 0;
}

/* The graft_student fields that follow from the teacher and the settings:
 * they must be what this student's GDN config is (a folder whose config was
 * edited, or written by another graft, is refused field by field). */
static int check_gdn_section(const cJSON *gd, const gdn_config *c, const char *where) {
    const struct { const char *key; double want; } whole[] = {
        {"num_heads", c->H}, {"head_k_dim", c->dk}, {"head_v_dim", c->dv}, {"expand_v", 1}, {"conv_size", GDN_CONV_K}};
    double v;
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        if (json_num(gd, whole[i].key, &v, where)) return -1;
        if (v != whole[i].want)
            return gf_fail("%s: graft_student.gdn.%s is %g; the teacher and settings give %g", where, whole[i].key, v,
                           whole[i].want);
    }
    for (int i = 0; i < 2; i++) {
        const char *key = i ? "qk_l2_eps" : "norm_eps";
        if (json_num(gd, key, &v, where)) return -1;
        if (!(isfinite(v) && v > 0 && v < 1))
            return gf_fail("%s: graft_student.gdn.%s is %g, not a number in (0, 1)", where, key, v);
    }
    const cJSON *rope = cJSON_GetObjectItem(gd, "use_rope");
    if (rope && !cJSON_IsFalse(rope)) return gf_fail("%s: graft_student.gdn.use_rope must be false (GDN layers take no RoPE)", where);
    return 0;
}

/* gdn_layers and attention_layers: whole layer numbers of this model, none
 * twice, none in both, together every layer (attention_layers may be absent:
 * the layers gdn_layers leaves). Fills is_gdn[0..L). */
static int check_layer_lists(const cJSON *g, int L, bool *is_gdn, const char *where) {
    const char *keys[2] = {"gdn_layers", "attention_layers"};
    int *seen = gf_calloc((size_t)L, sizeof *seen); /* 0, or 1 + the list that named the layer */
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        const cJSON *list = cJSON_GetObjectItem(g, keys[k]), *it;
        if (!list && k == 1) break;
        if (!cJSON_IsArray(list)) {
            rc = gf_fail("%s: graft_student.%s is missing or not a list", where, keys[k]);
            break;
        }
        cJSON_ArrayForEach(it, list) {
            const double v = cJSON_IsNumber(it) ? it->valuedouble : -1;
            if (!(v >= 0 && v < L) || v != floor(v)) {
                rc = gf_fail("%s: graft_student.%s holds %g, not a layer of this %d-layer model", where, keys[k],
                             cJSON_IsNumber(it) ? v : NAN, L);
                break;
            }
            const int l = (int)v;
            if (seen[l]) {
                rc = gf_fail("%s: layer %d is listed twice (in %s and %s)", where, l, keys[seen[l] - 1], keys[k]);
                break;
            }
            seen[l] = k + 1;
            is_gdn[l] = k == 0;
        }
        if (rc == 0 && k == 1)
            for (int l = 0; l < L; l++)
                if (!seen[l]) {
                    rc = gf_fail("%s: layer %d is in neither gdn_layers nor attention_layers", where, l);
                    break;
                }
    }
    free(seen);
    return rc;
}

/* A GGUF teacher's per-frequency RoPE divisors (config.json's rope_scaling is null then). */
static int apply_rope_freq_factors(model_config *c, const cJSON *f, const char *where) {
    if (!f) return 0;
    const int half = c->head_dim / 2;
    if (!cJSON_IsArray(f) || cJSON_GetArraySize(f) != half || half > ROPE_MAX_FACTORS)
        return gf_fail("%s: graft_student.rope_freq_factors must hold head_dim/2 = %d numbers", where, half);
    if (c->rope_scaling.type != ROPE_SCALING_NONE)
        return gf_fail("%s: both rope_scaling and graft_student.rope_freq_factors are given", where);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, f) {
        if (!cJSON_IsNumber(e) || !(e->valuedouble > 0))
            return gf_fail("%s: graft_student.rope_freq_factors[%d] is not a positive number", where, i);
        c->rope_scaling.freq_factors[i++] = (float)e->valuedouble;
    }
    c->rope_scaling.type = ROPE_SCALING_FACTORS;
    return 0;
}

int student_folder_peek(const char *dir, int *n_gdn, student_settings *set) {
    char p_cfg[PATH_MAX];
    snprintf(p_cfg, sizeof p_cfg, "%s/config.json", dir);
    cJSON *cfg = read_json(p_cfg);
    if (!cfg) return -1;
    const cJSON *g = cJSON_GetObjectItem(cfg, "graft_student");
    int rc = -1;
    if (!cJSON_IsObject(g)) gf_fail("%s: config.json has no graft_student section (not a student folder)", dir);
    else if (parse_settings(g, set, p_cfg) == 0) {
        const cJSON *gl = cJSON_GetObjectItem(g, "gdn_layers");
        if (!cJSON_IsArray(gl)) gf_fail("%s: graft_student.gdn_layers is missing", p_cfg);
        else *n_gdn = cJSON_GetArraySize(gl), rc = 0;
    }
    cJSON_Delete(cfg);
    return rc;
}

int student_load(student *s, const char *dir, const char *tokenizer_override) {
    const model_load_opts o = {.tokenizer_path = tokenizer_override};
    return student_load_with(s, dir, &o, NULL);
}

int student_load_with(student *s, const char *dir, const model_load_opts *o, const model_load_hooks *hooks) {
    const char *tokenizer_override = o->tokenizer_path;
    memset(s, 0, sizeof *s);
    char p_cfg[PATH_MAX], p_tok[PATH_MAX];
    snprintf(p_cfg, sizeof p_cfg, "%s/config.json", dir);
    cJSON *cfg = read_json(p_cfg);
    if (!cfg) return -1;
    const cJSON *g = cJSON_GetObjectItem(cfg, "graft_student");
    student_settings st;
    int rc = -1;
    model *m = NULL;
    bool *mask = NULL;
    st_set set;
    bool set_open = false;
    if (!cJSON_IsObject(g)) {
        gf_fail("%s: config.json has no graft_student section (not a student folder)", dir);
        goto out;
    }
    if (parse_settings(g, &st, p_cfg) != 0) goto out;
    const char *tok = tokenizer_override;
    if (!tok) {
        const cJSON *t = cJSON_GetObjectItem(g, "tokenizer");
        if (cJSON_IsString(t) && str_ends_with(t->valuestring, ".bin")) {
            snprintf(p_tok, sizeof p_tok, "%s/%s", dir, t->valuestring);
            tok = p_tok;
        }
    }
    m = gf_calloc(1, sizeof *m);
    model_load_opts lo = *o;
    lo.tokenizer_path = tok;
    if (model_load_hooked(m, dir, &lo, hooks) != 0) {
        free(m);
        m = NULL;
        goto out;
    }
    if (apply_rope_freq_factors(&m->cfg, cJSON_GetObjectItem(g, "rope_freq_factors"), p_cfg) != 0) goto out;
    if (student_init_empty(s, m, &st) != 0) goto out;
    s->owns_model = true;
    m = NULL;
    mask = gf_calloc((size_t)s->L, sizeof *mask);
    if (check_gdn_section(cJSON_GetObjectItem(g, "gdn"), &s->gcfg, p_cfg) != 0 ||
        check_layer_lists(g, s->L, mask, p_cfg) != 0)
        goto out;
    if (st_set_open(&set, dir) != 0) goto out;
    set_open = true;
    gdn_tensor_ref refs[GDN_P_COUNT];
    for (int l = 0; l < s->L; l++) {
        char name[160];
        snprintf(name, sizeof name, GDN_LAYER_PREFIX "%s", l, gdn_param_descs[GDN_P_wq].name);
        if (!mask[l]) {
            if (st_set_find(&set, name)) {
                gf_fail("%s: config.json lists layer %d as attention but model.safetensors has GDN tensors for it", dir, l);
                goto out;
            }
            continue;
        }
        gdn_params pl_, *p = &pl_;
        gdn_params_alloc(p, &s->gcfg);
        layer_report_alloc(&s->rep[l], s->gcfg.H, l);
        s->have[l] = true;
        int k = gdn_tensor_refs(&s->gcfg, p, l, refs);
        for (int i = 0; i < k; i++) {
            const st_tensor *t = st_set_find(&set, refs[i].name);
            if (!t) {
                gf_fail("%s: config.json lists layer %d as GDN but model.safetensors lacks %s", dir, l, refs[i].name);
                gdn_params_free(p);
                goto out;
            }
            bool same = t->ndim == refs[i].ndim;
            for (int d = 0; same && d < t->ndim; d++) same = t->shape[d] == refs[i].shape[d];
            if (!same) {
                gf_fail("%s: %s has a shape that disagrees with config.json (expected %lld x %lld%s)", dir, refs[i].name,
                        (long long)refs[i].shape[0], (long long)(refs[i].ndim > 1 ? refs[i].shape[1] : 1),
                        refs[i].ndim > 2 ? " x 4" : "");
                gdn_params_free(p);
                goto out;
            }
            if (st_read_f32(t, refs[i].ptr, t->n_elems) != 0) {
                gdn_params_free(p);
                goto out;
            }
        }
        gdn_half_lives(&s->gcfg, p, s->rep[l].half_life);
        const int put = student_put_layer(s, l, p);
        gdn_params_free(p);
        if (put != 0) goto out;
    }
    if (student_set_gdn(s, mask) != 0) goto out;
    rc = 0;
out:
    if (set_open) st_set_close(&set);
    if (m) {
        model_free(m);
        free(m);
    }
    free(mask);
    cJSON_Delete(cfg);
    if (rc != 0 && s->L) student_free(s);
    return rc;
}
