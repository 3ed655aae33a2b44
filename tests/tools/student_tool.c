/* Test helper for the Hugging Face export checks (tests/integration/export_*.sh,
 * tests/ref/student_hf_check.py). Not part of graft.
 *
 *   student_tool make TEACHER OUT --gdn 0,2 [--conv] [--qkv-bias] [--no-query-scale]
 *                     [--chunk N] [--seed S] [--tokenizer PATH]
 *       a student with the default init on the listed layers, then every GDN
 *       parameter perturbed (seeded) so that each option changes the output:
 *       wider gates, random o_norm weights, random conv taps and biases
 *   student_tool logits STUDENT|TEACHER IDS.json OUT.json [--greedy N]
 *       graft's float32 logits [seq][t][vocab] for {"ids": [[...], ...]}, and
 *       with --greedy the N greedy tokens after the first sequence (KV cache and
 *       GDN state carried from token to token)
 *   student_tool tokenize TOKENIZER TEXT OUT.json [--vocab N]
 *       graft's ids for the bytes of TEXT, without and with BOS
 *   student_tool export-tokenizer TOKENIZER OUT_DIR [--vocab N]
 *       the tokenizer.json + tokenizer_config.json a student would get */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mapped_file.h"
#include "core/rng.h"
#include "formats/model_load.h"
#include "formats/tokenizer_load.h"
#include "model/transformer.h"
#include "convert/build.h"
#include "student/student_io.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_export.h"

static int die(const char *what) {
    fprintf(stderr, "student_tool %s: %s\n", what, gf_last_error());
    return 1;
}

static int write_json(const char *path, cJSON *j) {
    char *text = cJSON_PrintUnformatted(j);
    FILE *f = fopen(path, "w");
    int ok = f && text && fputs(text, f) >= 0;
    if (f && fclose(f) != 0) ok = 0;
    free(text);
    cJSON_Delete(j);
    return ok ? 0 : gf_fail("%s: cannot write", path);
}

static void perturb(const gdn_config *c, gdn_params *p, uint64_t seed, int layer) {
    rng64 r;
    rng_seed2(&r, seed, 1000 + (uint64_t)layer);
    const size_t D = (size_t)c->D, H = (size_t)c->H;
    for (size_t i = 0; i < H * D; i++) p->wa[i] *= 25.0f, p->wb[i] *= 25.0f;
    for (size_t i = 0; i < H * c->dv * D; i++) p->wg[i] *= 25.0f;
    for (int j = 0; j < c->dv; j++) p->w_norm[j] = (float)(0.5 + rng_uniform(&r));
    const size_t qkv = (size_t)H * (2 * c->dk + c->dv);
    if (p->bq)
        for (size_t i = 0; i < qkv; i++) p->bq[i] += (float)(0.1 * rng_normal(&r));
    if (p->conv_q)
        for (size_t i = 0; i < qkv * GDN_CONV_K; i++) p->conv_q[i] += (float)(0.3 * rng_normal(&r));
}

static int cmd_make(int argc, char **argv) {
    if (argc < 2) return gf_fail("usage: make TEACHER OUT --gdn LIST [options]");
    const char *teacher = argv[0], *out = argv[1], *gdn = NULL, *tok_override = NULL;
    student_settings set;
    student_settings_default(&set);
    set.init = INIT_RANDOM;
    uint64_t seed = 7;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--gdn") && i + 1 < argc) gdn = argv[++i];
        else if (!strcmp(argv[i], "--conv")) set.conv = 1;
        else if (!strcmp(argv[i], "--qkv-bias")) set.qkv_bias = 1;
        else if (!strcmp(argv[i], "--no-query-scale")) set.scale = GDN_SCALE_NONE;
        else if (!strcmp(argv[i], "--chunk") && i + 1 < argc) set.chunk = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--tokenizer") && i + 1 < argc) tok_override = argv[++i];
        else return gf_fail("unknown option %s", argv[i]);
    }
    set.seed = seed;
    if (!gdn) return gf_fail("--gdn LIST is required");
    model m = {0};
    model_load_opts lo = {tok_override, NULL};
    if (model_load(&m, teacher, &lo) != 0) return -1;
    student s = {0};
    int rc = student_init_empty(&s, &m, &set);
    bool *mask = gf_calloc((size_t)m.cfg.n_layers, sizeof *mask);
    for (const char *p = gdn; rc == 0 && *p;) {
        char *end;
        long l = strtol(p, &end, 10);
        if (end == p || l < 0 || l >= m.cfg.n_layers) rc = gf_fail("--gdn: bad layer list %s", gdn);
        else mask[l] = true;
        p = *end == ',' ? end + 1 : end;
        if (rc == 0 && end == p && *p) rc = gf_fail("--gdn: bad layer list %s", gdn);
    }
    if (rc == 0) rc = student_build_layers(&s, mask, NULL, NULL, NULL);
    for (int l = 0; rc == 0 && l < s.L; l++)
        if (mask[l]) { /* host copy, perturbed, back into the student's block */
            gdn_params p;
            gdn_params_alloc(&p, &s.gcfg);
            rc = student_get_layer(&s, l, &p);
            perturb(&s.gcfg, &p, seed, l);
            if (rc == 0) rc = student_put_layer(&s, l, &p);
            gdn_params_free(&p);
        }
    if (rc == 0) rc = student_set_gdn(&s, mask);
    char *tok = rc == 0 ? teacher_tokenizer_path(teacher, m.cfg.vocab_size, tok_override) : NULL;
    if (rc == 0) rc = student_save(&s, out, tok, NULL);
    free(tok);
    free(mask);
    student_free(&s);
    model_free(&m);
    return rc;
}

/* ids [n_seq][T] from {"ids": [[...], ...]} */
static int read_ids(const char *path, int ***ids, int **lens, int *n) {
    size_t len;
    char *text = read_text_file(path, &len);
    if (!text) return -1;
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *a = cJSON_GetObjectItem(j, "ids");
    if (!cJSON_IsArray(a)) {
        cJSON_Delete(j);
        return gf_fail("%s: no \"ids\" array", path);
    }
    *n = cJSON_GetArraySize(a);
    *ids = gf_calloc((size_t)*n, sizeof **ids);
    *lens = gf_calloc((size_t)*n, sizeof **lens);
    int k = 0;
    const cJSON *seq;
    cJSON_ArrayForEach(seq, a) {
        int T = cJSON_GetArraySize(seq), t = 0;
        (*ids)[k] = gf_malloc((size_t)(T ? T : 1) * sizeof(int));
        (*lens)[k] = T;
        const cJSON *e;
        cJSON_ArrayForEach(e, seq)(*ids)[k][t++] = e->valueint;
        k++;
    }
    cJSON_Delete(j);
    return 0;
}

static cJSON *logits_json(const float *lg, int T, int V) {
    cJSON *rows = cJSON_CreateArray();
    for (int t = 0; t < T; t++) {
        cJSON *row = cJSON_CreateArray();
        for (int v = 0; v < V; v++) cJSON_AddItemToArray(row, cJSON_CreateNumber(lg[(size_t)t * V + v]));
        cJSON_AddItemToArray(rows, row);
    }
    return rows;
}

static int argmax(const float *x, int n) {
    int b = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[b]) b = i;
    return b;
}

static int cmd_logits(int argc, char **argv) {
    if (argc < 3) return gf_fail("usage: logits STUDENT IDS.json OUT.json [--greedy N]");
    int greedy = argc >= 5 && !strcmp(argv[3], "--greedy") ? atoi(argv[4]) : 0;
    student s = {0};
    model teacher = {0};
    transformer tview = {0};
    const bool is_student = student_folder_detect(argv[0]);
    if (is_student ? student_load(&s, argv[0], NULL) != 0 : model_load(&teacher, argv[0], NULL) != 0) return -1;
    const model *m = is_student ? s.m : &teacher;
    transformer *tf = is_student ? &s.tf : &tview;
    int **ids = NULL, *lens = NULL, n = 0, rc = read_ids(argv[1], &ids, &lens, &n);
    if (rc == 0 && !is_student) rc = tf_view(&tview, &teacher, NULL, NULL, NULL); /* the teacher itself */
    const int V = m->cfg.vocab_size;
    int max_T = 1;
    for (int i = 0; i < n; i++) max_T = lens[i] > max_T ? lens[i] : max_T;
    tf_run *run = NULL;
    const tf_run_opts ro = {.B = 1, .T = max_T, .S = max_T + greedy, .decode = true, .logit_rows = max_T};
    if (rc == 0) rc = tf_run_open(&run, tf, &ro);
    cJSON *out = cJSON_CreateObject(), *all = cJSON_AddArrayToObject(out, "logits");
    float *lg = gf_malloc((size_t)(max_T + 1) * V * sizeof *lg);
    gf_buf lbuf = run ? tf_run_logits(run, NULL) : gf_none();
    for (int i = 0; rc == 0 && i < n; i++) {
        rc = tf_forward(run, ids[i], 1, lens[i], 0, NULL);
        if (rc != 0) break;
        tf_logits(run, 0, lens[i], lbuf);
        if ((rc = be_download(m->be, lg, GF_F32, lbuf, (size_t)lens[i] * V)) != 0) break;
        cJSON_AddItemToArray(all, logits_json(lg, lens[i], V));
    }
    if (rc == 0 && greedy > 0 && n > 0) { /* continue the first sequence token by token */
        rc = tf_forward(run, ids[0], 1, lens[0], 0, NULL);
        cJSON *g = cJSON_AddArrayToObject(out, "greedy");
        if (rc == 0) {
            tf_logits(run, lens[0] - 1, 1, lbuf);
            rc = be_download(m->be, lg, GF_F32, lbuf, (size_t)V);
        }
        for (int k = 0; rc == 0 && k < greedy; k++) {
            int next = argmax(lg, V);
            cJSON_AddItemToArray(g, cJSON_CreateNumber(next));
            if (k + 1 < greedy && (rc = tf_forward(run, &next, 1, 1, lens[0] + k, NULL)) == 0) {
                tf_logits(run, 0, 1, lbuf);
                rc = be_download(m->be, lg, GF_F32, lbuf, (size_t)V);
            }
        }
    }
    free(lg);
    if (rc == 0) rc = write_json(argv[2], out);
    else cJSON_Delete(out);
    for (int i = 0; i < n; i++) free(ids[i]);
    free(ids);
    free(lens);
    tf_run_close(run);
    tf_free(&tview);
    if (is_student) student_free(&s);
    else model_free(&teacher);
    return rc;
}

static cJSON *ids_json(const int_vec *v) {
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < v->len; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v->data[i]));
    return a;
}

static int cmd_tokenize(int argc, char **argv) {
    if (argc < 3) return gf_fail("usage: tokenize TOKENIZER TEXT OUT.json [--vocab N]");
    int vocab = argc >= 5 && !strcmp(argv[3], "--vocab") ? atoi(argv[4]) : 0;
    tokenizer *t;
    if (tokenizer_load_path(&t, argv[0], vocab) != 0) return -1;
    size_t len;
    char *text = read_text_file(argv[1], &len);
    if (!text) {
        tokenizer_free(t);
        return -1;
    }
    int_vec a = {0}, b = {0};
    tokenizer_encode(t, text, len, false, &a);
    tokenizer_encode(t, text, len, true, &b);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "ids", ids_json(&a));
    cJSON_AddItemToObject(o, "ids_bos", ids_json(&b));
    cJSON_AddNumberToObject(o, "bos", tokenizer_bos(t));
    int_vec_free(&a);
    int_vec_free(&b);
    free(text);
    tokenizer_free(t);
    return write_json(argv[2], o);
}

/* The tokenizer.json / tokenizer_config.json student_save writes, for any tokenizer file. */
static int cmd_export_tokenizer(int argc, char **argv) {
    if (argc < 2) return gf_fail("usage: export-tokenizer TOKENIZER OUT_DIR [--vocab N]");
    int vocab = argc >= 4 && !strcmp(argv[2], "--vocab") ? atoi(argv[3]) : 0;
    tokenizer *t;
    if (tokenizer_load_path(&t, argv[0], vocab) != 0) return -1;
    cJSON *j = tokenizer_export_json(t);
    int rc = j ? 0 : -1;
    char p[4096];
    snprintf(p, sizeof p, "%s/tokenizer.json", argv[1]);
    if (rc == 0) rc = write_json(p, j);
    snprintf(p, sizeof p, "%s/tokenizer_config.json", argv[1]);
    if (rc == 0) rc = write_json(p, tokenizer_export_config(t, 0));
    tokenizer_free(t);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: student_tool make|logits|tokenize ...\n");
        return 2;
    }
    int rc = !strcmp(argv[1], "make")       ? cmd_make(argc - 2, argv + 2)
             : !strcmp(argv[1], "logits")   ? cmd_logits(argc - 2, argv + 2)
             : !strcmp(argv[1], "tokenize") ? cmd_tokenize(argc - 2, argv + 2)
             : !strcmp(argv[1], "export-tokenizer") ? cmd_export_tokenizer(argc - 2, argv + 2)
                                            : gf_fail("unknown command %s", argv[1]);
    return rc == 0 ? 0 : die(argv[1]);
}
