/* The prompt box's generation (7 Results, g): what the box asks for (the
 * model: a Results row's student folder or the teacher; the prompt; the
 * length; greedy or sampled) and what the last "generate" job sent back (the
 * decoded prompt, then the continuation as it streams in, its speed, and the
 * KV-cache bytes per token of the model and of its teacher). One per teacher
 * (teacher_state.gen); the UI edits the request, the job's events fill the
 * rest. Not saved with the session: it is a look at a model, not a result. */
#ifndef GRAFT_WORKBENCH_GENERATION_H
#define GRAFT_WORKBENCH_GENERATION_H

#include <stdbool.h>
#include <stddef.h>

#define GEN_PROMPT_MAX 512    /* bytes, NUL included (the entry's size) */
#define GEN_DEFAULT_NEW 64    /* graft generate's default -n */
#define GEN_MAX_NEW 1024
#define GEN_DEFAULT_TEMP 8    /* tenths: the temperature a first switch to sampled uses */
#define GEN_MAX_TEMP 20       /* tenths */

typedef struct {
    char prompt[GEN_PROMPT_MAX];
    char student[256];        /* the student folder; "" = the teacher itself */
    char digest[11];          /* the request that made the folder (its Results row's), "" unknown */
    char label[192];          /* what it generates from: "student uniform 60% t-calib", "teacher" */
    int max_new;              /* tokens */
    bool sampled;             /* false: greedy (argmax) */
    int temp_tenths;          /* the sampling temperature x 10 (tenths: stepping never drifts) */
    long seed;                /* the sampling seed (graft generate's --seed; 1 as its default) */
} gen_request;

typedef struct {
    gen_request req;          /* what Enter runs next (the box edits it) */
    gen_request ran;          /* what the last job ran */
    char model_arg[1024];     /* MODEL of its command when ran.student is "" */
    char device[16];          /* where it ran: "cpu", "cuda:0" (the workbench's backend) */
    int job_id;               /* the last generate job, 0 none */
    char *text;               /* the decoded prompt, then the continuation (owned; NUL-terminated) */
    size_t len, cap;
    size_t prompt_len;        /* bytes of text that are the prompt */
    int context_tokens;       /* tokens in the model's context now (BOS and prompt included) */
    int generated;
    double seconds;           /* since the job began generating (prefill included) */
    bool have_memory;         /* the numbers below are known */
    long long kv_model, kv_teacher; /* KV-cache bytes per token of this model and of its teacher */
    long long state_bytes;    /* the GDN layers' recurrent state and conv history, whatever the length */
    int n_layers, n_gdn;
    int max_context;          /* the model's context (tokens), 0 unknown */
    bool finished;            /* the job ended without an error or a cancel */
    /* after the generation, both models decoded again at its context (engine/eval/bench_decode.h) */
    bool have_measured;
    int measured_context;     /* tokens prefilled */
    double tok_s_model, tok_s_teacher;   /* decode tokens/s (teacher: 0 when the model is the teacher) */
    long long mem_model, mem_teacher;    /* bytes per sequence the decode run allocated (KV cache + GDN state) */
} gen_state;

void gen_state_init(gen_state *g);
void gen_state_free(gen_state *g);
/* A job started on device ("" : cpu): ran = req, the output cleared. */
void gen_begin(gen_state *g, int job_id, const char *model_arg, const char *device);
/* Appends n bytes of text (prompt when the continuation is still empty). */
void gen_append(gen_state *g, const char *text, size_t n, bool is_prompt);

/* "0.8", "1", "1.5": tenths as the command line reads them. */
void gen_temp_text(int tenths, char *buf, size_t n);
/* s in single quotes for a POSIX shell ('it'\''s'); "" when it does not fit n. */
void gen_shell_quote(const char *s, char *buf, size_t n);
/* The command that repeats r: graft generate 'DIR' --prompt 'P' -n N --temp T --seed S
 * (model_arg for a teacher request), and --device D unless device is "" or cpu. */
void gen_command(const gen_request *r, const char *model_arg, const char *device, char *buf, size_t n);
/* "greedy · 64 tokens · seed 1" / "sampled at temperature 0.8 · 64 tokens · seed 3" (dot: the separator glyph). */
void gen_settings_line(const gen_request *r, const char *dot, char *buf, size_t n);
/* "48 of 64 tokens in 0.05 s, 960 tokens/s (prefill included)", and once finished short of
 * the count, why ("; end of text", "; context full (512)"); the parenthesis goes when that is
 * wider than w columns; "" before the first token. */
void gen_rate_line(const gen_state *g, int w, char *buf, size_t n);
/* "KV cache per token: student 768 B vs teacher 1.25 KB (3 of 5 layers attention)"; the
 * teacher itself: "KV cache per token: 1.25 KB (every layer attention)"; shorter words when
 * that is wider than w columns; "" until known. */
void gen_kv_line(const gen_state *g, int w, char *buf, size_t n);
/* "at 70 tokens: student 52.5 KB + 4.50 KB GDN state (fixed), teacher 87.5 KB" (the tokens in
 * the context now); the teacher itself: "at 70 tokens: 87.5 KB"; shorter words when that is
 * wider than w columns; "" until known. */
void gen_total_line(const gen_state *g, int w, char *buf, size_t n);
/* "measured at 70 tokens: student 812 tok/s, 60.0 KB; teacher 640 tok/s, 95.0 KB" (decode speed and the
 * memory per sequence the decode runs allocated); the teacher itself: "measured at 70 tokens: 640 tok/s,
 * 95.0 KB"; shorter words when that is wider than w columns; "" until measured. */
void gen_measured_line(const gen_state *g, int w, char *buf, size_t n);

#endif
