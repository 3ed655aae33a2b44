#include "workbench/generation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "method/request.h"
#include "select/kv_cost.h"

void gen_state_init(gen_state *g) {
    memset(g, 0, sizeof *g);
    g->req.max_new = GEN_DEFAULT_NEW;
    g->req.temp_tenths = GEN_DEFAULT_TEMP;
    g->req.seed = 1;
    snprintf(g->req.label, sizeof g->req.label, "teacher");
}

void gen_state_free(gen_state *g) {
    free(g->text);
    memset(g, 0, sizeof *g);
}

void gen_begin(gen_state *g, int job_id, const char *model_arg, const char *device) {
    g->ran = g->req;
    snprintf(g->model_arg, sizeof g->model_arg, "%s", model_arg ? model_arg : "");
    snprintf(g->device, sizeof g->device, "%s", device && device[0] ? device : "cpu");
    g->job_id = job_id;
    g->len = g->prompt_len = 0;
    if (g->text) g->text[0] = 0;
    g->context_tokens = g->generated = 0;
    g->seconds = 0;
    g->have_memory = false;
    g->kv_model = g->kv_teacher = g->state_bytes = 0;
    g->n_layers = g->n_gdn = g->max_context = 0;
    g->finished = false;
    g->have_measured = false;
    g->measured_context = 0;
    g->tok_s_model = g->tok_s_teacher = 0;
    g->mem_model = g->mem_teacher = 0;
}

void gen_append(gen_state *g, const char *text, size_t n, bool is_prompt) {
    if (g->len + n + 1 > g->cap) {
        size_t cap = g->cap ? g->cap : 256;
        while (cap < g->len + n + 1) cap *= 2;
        g->text = gf_realloc(g->text, cap);
        g->cap = cap;
    }
    memcpy(g->text + g->len, text, n);
    g->len += n;
    g->text[g->len] = 0;
    if (is_prompt) g->prompt_len = g->len; /* the prompt comes first */
}

void gen_temp_text(int tenths, char *buf, size_t n) {
    if (tenths % 10 == 0) snprintf(buf, n, "%d", tenths / 10);
    else snprintf(buf, n, "%d.%d", tenths / 10, tenths % 10);
}

void gen_shell_quote(const char *s, char *buf, size_t n) {
    size_t o = 0;
    if (n < 3) goto too_long;
    buf[o++] = '\'';
    for (; *s; s++) {
        const char *piece = *s == '\'' ? "'\\''" : NULL; /* close, an escaped quote, reopen */
        size_t k = piece ? 4 : 1;
        if (o + k + 2 > n) goto too_long;
        if (piece) memcpy(buf + o, piece, k);
        else buf[o] = *s;
        o += k;
    }
    buf[o++] = '\'';
    buf[o] = 0;
    return;
too_long:
    if (n) buf[0] = 0;
}

void gen_command(const gen_request *r, const char *model_arg, const char *device, char *buf, size_t n) {
    request q; /* graft generate's request, printed by the method: the options away from their defaults */
    request_init(&q, REQ_GENERATE);
    q.pos[0] = r->student[0] ? r->student : model_arg;
    q.n_pos = 1;
    q.u.generate.prompt = r->prompt;
    q.u.generate.n = r->max_new;
    q.u.generate.temp = r->sampled ? r->temp_tenths / 10.0 : 0;
    q.co.seed = r->seed;
    if (device && device[0]) q.co.device = device;
    if (request_command(&q, buf, n) != 0 && n) buf[0] = 0; /* too long for buf: none rather than a cut one */
}

void gen_settings_line(const gen_request *r, const char *dot, char *buf, size_t n) {
    char temp[16];
    gen_temp_text(r->temp_tenths, temp, sizeof temp);
    if (r->sampled)
        snprintf(buf, n, "sampled at temperature %s %s %d tokens %s seed %ld", temp, dot, r->max_new, dot, r->seed);
    else snprintf(buf, n, "greedy %s %d tokens %s seed %ld", dot, r->max_new, dot, r->seed);
}

void gen_rate_line(const gen_state *g, int w, char *buf, size_t n) {
    buf[0] = 0;
    if (g->generated <= 0) return;
    char why[48] = "";
    if (g->finished && g->generated < g->ran.max_new) {
        if (g->max_context > 0 && g->context_tokens >= g->max_context)
            snprintf(why, sizeof why, "; context full (%d)", g->max_context);
        else
            snprintf(why, sizeof why, "; end of text");
    }
    if (!(g->seconds > 0)) {
        snprintf(buf, n, "%d of %d tokens%s", g->generated, g->ran.max_new, why);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        snprintf(buf, n, "%d of %d tokens in %.2f s, %.0f tokens/s%s%s", g->generated, g->ran.max_new, g->seconds,
                 g->generated / g->seconds, pass ? "" : " (prefill included)", why);
        if ((int)strlen(buf) <= w) break;
    }
}

void gen_kv_line(const gen_state *g, int w, char *buf, size_t n) {
    buf[0] = 0;
    if (!g->have_memory) return;
    char pm[24], pt[24];
    kv_format_bytes(pm, sizeof pm, (double)g->kv_model);
    kv_format_bytes(pt, sizeof pt, (double)g->kv_teacher);
    const int attn = g->n_layers - g->n_gdn;
    if (g->n_gdn == 0) {
        snprintf(buf, n, "KV cache per token: %s (every layer attention)", pt);
        return;
    }
    snprintf(buf, n, "KV cache per token: student %s vs teacher %s (%d of %d layers attention)", pm, pt, attn,
             g->n_layers);
    if ((int)strlen(buf) > w)
        snprintf(buf, n, "KV per token: student %s, teacher %s (%d/%d attention)", pm, pt, attn, g->n_layers);
}

void gen_total_line(const gen_state *g, int w, char *buf, size_t n) {
    buf[0] = 0;
    if (!g->have_memory) return;
    char tm[24], tt[24], st[24];
    kv_format_bytes(tm, sizeof tm, (double)g->kv_model * g->context_tokens);
    kv_format_bytes(tt, sizeof tt, (double)g->kv_teacher * g->context_tokens);
    kv_format_bytes(st, sizeof st, (double)g->state_bytes);
    if (g->n_gdn == 0) {
        snprintf(buf, n, "at %d tokens: %s", g->context_tokens, tt);
        return;
    }
    snprintf(buf, n, "at %d tokens: student %s + %s GDN state (fixed), teacher %s", g->context_tokens, tm, st, tt);
    if ((int)strlen(buf) > w)
        snprintf(buf, n, "at %d tokens: student %s + %s state, teacher %s", g->context_tokens, tm, st, tt);
}

void gen_measured_line(const gen_state *g, int w, char *buf, size_t n) {
    buf[0] = 0;
    if (!g->have_measured) return;
    char mm[24], mt[24];
    kv_format_bytes(mm, sizeof mm, (double)g->mem_model);
    kv_format_bytes(mt, sizeof mt, (double)g->mem_teacher);
    if (!(g->tok_s_teacher > 0)) {
        snprintf(buf, n, "measured at %d tokens: %.0f tok/s, %s", g->measured_context, g->tok_s_model, mm);
        return;
    }
    snprintf(buf, n, "measured at %d tokens: student %.0f tok/s, %s; teacher %.0f tok/s, %s", g->measured_context,
             g->tok_s_model, mm, g->tok_s_teacher, mt);
    if ((int)strlen(buf) > w)
        snprintf(buf, n, "at %d: student %.0f tok/s %s, teacher %.0f tok/s %s", g->measured_context, g->tok_s_model,
                 mm, g->tok_s_teacher, mt);
}
