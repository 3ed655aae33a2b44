/* The seam between the engine and the hardware (DESIGN.md "one model, several
 * backends"): a small function table over device buffers, in the llm.c spirit
 * (each op a free function, output first, shapes next to every tensor), not a
 * graph library.
 *
 * backend/cpu (OpenBLAS + OpenMP, float32: the reference) and backend/cuda
 * (cuBLAS + hand-written kernels, bf16 or float32 storage, float32
 * accumulation) implement it. An op's signature is written here and in the
 * op list of backend_impl.h, which the tables of both backends are expanded
 * from (backend.c checks the two agree); docs/architecture.md lists the ops.
 *
 * Rules
 * - Only code under engine/backend/ dereferences a gf_buf. Everything else
 *   moves values between host and device with be_upload / be_download.
 * - Three element types. ACT is the backend's compute type (float32 on CPU;
 *   bf16 on CUDA, or float32 in its checking mode): activations and the
 *   compute copy of parameters. F32: master parameters, gradients, optimizer
 *   moments, decays and write strengths, log-sum-exps. F64: accumulators of
 *   statistics and losses (a few numbers). I32: token ids.
 * - Ops are asynchronous on devices that are; errors (a failed launch, a
 *   device fault, scratch that could not be allocated) are sticky and
 *   reported by the next be_sync / be_check, which return -1 with one line in
 *   gf_last_error(). Allocation failures are reported at once (-1), never abort.
 * - Parameter gradients are ACCUMULATED (+=), input gradients overwritten
 *   unless the op says otherwise. A NULL (gf_none()) output skips that work.
 * - Rows: N = B*T tokens, token-major ([B, T, ...]).
 * - Determinism: with a fixed thread count every op gives the same bits
 *   (reductions in a fixed order; no atomics, no critical sections).
 */
#ifndef GRAFT_BACKEND_BACKEND_H
#define GRAFT_BACKEND_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GF_F32 = 0, GF_BF16 = 1, GF_F64 = 2, GF_I32 = 3 } gf_dtype;

size_t gf_dtype_size(gf_dtype t);
const char *gf_dtype_name(gf_dtype t);

/* A span of device memory (host memory on the CPU backend) and its element
 * type. Views are made with gf_at; nobody outside engine/backend reads ptr. */
typedef struct {
    void *ptr;
    gf_dtype dtype;
} gf_buf;

static inline gf_buf gf_none(void) { gf_buf b = {0, GF_F32}; return b; }
static inline bool gf_is_none(gf_buf b) { return b.ptr == 0; }
/* The same buffer (identity, not contents). */
static inline bool gf_same(gf_buf a, gf_buf b) { return a.ptr == b.ptr; }
static inline gf_buf gf_at(gf_buf b, size_t elems) {
    if (b.ptr) b.ptr = (char *)b.ptr + elems * gf_dtype_size(b.dtype);
    return b;
}
/* A view of type t starting `bytes` into b (carving one arena into typed
 * buffers; keep offsets multiples of 64). */
static inline gf_buf gf_bytes(gf_buf b, size_t bytes, gf_dtype t) {
    gf_buf v = {b.ptr ? (char *)b.ptr + bytes : 0, t};
    return v;
}

typedef struct gf_backend gf_backend;

typedef struct {
    const char *device; /* "cpu", "cuda", "cuda:N" */
    int threads;        /* CPU: worker threads (0: the default) */
    bool fp32;          /* CUDA: float32 storage instead of bf16 (for checking) */
} gf_backend_opts;

/* -1 with one line: unknown device, "graft was built without the CUDA
 * backend", no such GPU, driver too old. */
int be_open(gf_backend **out, const gf_backend_opts *o);
/* GPUs the CUDA backend could open (cuda:0 .. cuda:count-1): 0 and *count,
 * which is 0 when there is no driver or no GPU; -1 with "graft was built
 * without the CUDA backend". Opens nothing. */
int be_cuda_device_count(int *count);
/* Whether be_open would take the name ("cpu", "cuda", "cuda:N" with N <= 1023),
 * whatever this build and machine have: requests check it before anything runs. */
bool be_device_name_ok(const char *dev);
void be_close(gf_backend *be);
const char *be_name(const gf_backend *be);   /* "cpu (2 threads)", "cuda:0 NVIDIA H200 (bf16)" */
gf_dtype be_act(const gf_backend *be);       /* the compute type */
bool be_is_host(const gf_backend *be);       /* buffers are host memory (CPU backend) */
int be_threads(const gf_backend *be);        /* CPU worker threads; 1 on devices */
/* CPU: the worker threads of later ops (0: every core); devices: nothing.
 * Never while ops of this backend run (the workbench sets it between jobs). */
void be_set_threads(gf_backend *be, int threads);
/* Device memory free / total in bytes (host: available / physical memory). */
int be_mem_info(gf_backend *be, size_t *free_bytes, size_t *total_bytes);

/* The backend used where a caller names none (model_load without one, tests):
 * the one installed with be_set_default, else a CPU backend with the default
 * thread count, opened once. Never NULL. */
gf_backend *be_default(void);
/* Installs be as the process default (not owned; NULL restores the CPU one). */
void be_set_default(gf_backend *be);

/* The communicator between the ranks of a data-parallel job (backend/comm.h)
 * that be's ranks use; NULL at world size 1 (the default). Not owned.
 * Engine code that can share work between ranks (training, statistics,
 * Stage 2) asks the backend it computes on. Tasks of be_run_tasks must not
 * use it. */
typedef struct gf_comm gf_comm;
gf_comm *be_comm(const gf_backend *be);
void be_set_comm(gf_backend *be, gf_comm *c);

/* ------------------------------------------------------------- memory */

/* n elements of dtype t, uninitialized. -1: "out of device memory: 12.0 GiB
 * asked, 3.1 GiB free on cuda:0" (or host memory on the CPU backend). */
int be_alloc(gf_backend *be, gf_buf *out, size_t n, gf_dtype t);
void be_free(gf_backend *be, gf_buf *b); /* sets b to gf_none() */
void be_zero(gf_backend *be, gf_buf b, size_t n);
/* dst[n] <- src[n] with conversion (f32 <-> bf16, same type: copy). */
void be_copy(gf_backend *be, gf_buf dst, gf_buf src, size_t n);
/* Host <-> device with conversion; src_t / dst_t is the host array's type.
 * Download waits for earlier ops. */
int be_upload(gf_backend *be, gf_buf dst, const void *src, gf_dtype src_t, size_t n);
int be_download(gf_backend *be, void *dst, gf_dtype dst_t, gf_buf src, size_t n);
/* Waits for every queued op; -1 with the first error seen since the last check. */
int be_sync(gf_backend *be);
/* Like be_sync without waiting: -1 if an error is already known. */
int be_check(gf_backend *be);

/* Independent tasks (Stage 2's layers): fn(ud, i, sub) for i in [0, n), where
 * `sub` is a backend to issue that task's ops on. CPU: tasks run in parallel
 * threads, each sub single-threaded. CUDA: be_tasks_at_once host threads
 * (GF_DEVICE_TASKS unless GRAFT_CUDA_TASKS=1..GF_DEVICE_TASKS_MAX says
 * otherwise at open), each with a sub-backend on a stream of its own. fn must
 * be safe to call from several threads at once. Returns -1 when any task
 * returned -1 (the lowest task's message wins). */
#define GF_DEVICE_TASKS 4
#define GF_DEVICE_TASKS_MAX 16
int be_run_tasks(gf_backend *be, int n, int (*fn)(void *ud, int i, gf_backend *sub), void *ud);
/* How many tasks of be_run_tasks run at once (each holds its own buffers):
 * the host's threads, or the device's task streams. */
int be_tasks_at_once(const gf_backend *be);

/* ------------------------------------------------------------- the block */

/* x[N, D] <- E[tokens[n], :]; tokens I32 [N] (checked by the caller). */
void be_embedding(gf_backend *be, gf_buf x, gf_buf E, gf_buf tokens, int N, int D);
/* dE[V, D] (F32) += dx[N, D] scattered by tokens. */
void be_embedding_backward(gf_backend *be, gf_buf dE, gf_buf dx, gf_buf tokens, int N, int D);

/* y[N, out] = x[N, in] W[out, in]^T (+ b[out]); += into y when accumulate. */
void be_linear(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int N, int in, int out, bool accumulate);
/* y[N, out] = x W^T (+ b) + add[N, out] (none: nothing added; it may be y): a residual added in
 * the product's epilogue, without a pass of its own over y. */
void be_linear_add(gf_backend *be, gf_buf y, gf_buf x, gf_buf W, gf_buf b, int N, int in, int out, gf_buf add);
/* dx[N, in] = dy[N, out] W (+= when accumulate_dx); dW[out, in] (F32) = dy^T x
 * and db[out] (F32) = sum_n dy (both += when accumulate_dW). Written, not
 * added, dW is neither read nor zeroed first: the training step's first
 * gradient of a weight saves both passes over its F32 block (tf_zero_grads). */
void be_linear_backward(gf_backend *be, gf_buf dx, gf_buf dW, gf_buf db, gf_buf dy, gf_buf x, gf_buf W, int N,
                        int in, int out, bool accumulate_dx, bool accumulate_dW);

/* y[rows, n] = x / sqrt(mean(x^2) + eps) * w[n]; y may alias x; rstd[rows]
 * (F32, optional) keeps 1/sqrt(...) for the backward. Per-head norms (Qwen3
 * q_norm / k_norm) are rows = N*heads, n = head_dim. */
void be_rmsnorm(gf_backend *be, gf_buf y, gf_buf rstd, gf_buf x, gf_buf w, int rows, int n, float eps);
/* dx (+= when accumulate_dx; may alias dy when not accumulating), dw (F32) +=
 * from dy, x, w and rstd (gf_none: recomputed from x with eps). */
void be_rmsnorm_backward(gf_backend *be, gf_buf dx, gf_buf dw, gf_buf dy, gf_buf x, gf_buf w, gf_buf rstd, int rows,
                         int n, float eps, bool accumulate_dx);

/* Which dimensions RoPE rotates together (a model's config names it).
 * HALF: (i, i + head_dim/2), Hugging Face weights.
 * ADJACENT: (2i, 2i + 1), llama2.c checkpoints. */
typedef enum { ROPE_HALF = 0, ROPE_ADJACENT = 1 } rope_pairing;

/* RoPE in place on x[B, T, nh, hd] at absolute positions pos0 + t. table:
 * F32 [n_pos, hd/2, 2] (cos, sin) computed on the host in double from the
 * config (theta, llama3 / linear / per-frequency scaling). inverse: rotate
 * back (the backward). */
void be_rope(gf_backend *be, gf_buf x, gf_buf table, int B, int T, int nh, int hd, int pos0, rope_pairing pairing,
             bool inverse);

/* out[n] = silu(gate[n]) * up[n]; out may alias gate. */
void be_swiglu(gf_backend *be, gf_buf out, gf_buf gate, gf_buf up, size_t n);
/* dgate, dup from dout (dgate may alias dout). */
void be_swiglu_backward(gf_backend *be, gf_buf dgate, gf_buf dup, gf_buf dout, gf_buf gate, gf_buf up, size_t n);

/* y[n] += x[n] */
void be_add(gf_backend *be, gf_buf y, gf_buf x, size_t n);
/* x[n] *= s */
void be_scale(gf_backend *be, gf_buf x, size_t n, float s);

/* ------------------------------------------------------------- attention */

typedef struct {
    int B, T;        /* sequences, new query rows per sequence */
    int H, KV, hd;   /* query heads, key/value heads (H % KV == 0), head dim */
    int pos0;        /* absolute position of query row 0 (the KV cache holds 0..pos0-1) */
    int S;           /* key/value rows per sequence in k, v (>= pos0 + T): the cache capacity */
} gf_attn_shape;

/* Per-head statistic sums accumulated by be_attention (METHOD.md section 4),
 * over query rows i (absolute position) with probabilities A[i, j]: */
enum {
    GF_STAT_DISTANCE = 0,    /* sum_j A[i,j] max(i-j, 0.5) */
    GF_STAT_ENTROPY = 1,     /* -sum_j A[i,j] log(max(A[i,j], 1e-10)) */
    GF_STAT_OUT_RMS = 2,     /* sqrt(mean_d out[i,d]^2) */
    GF_STAT_DIST_NOSINK = 3, /* sum_{j>=1} A[i,j] max(i-j, 0.5) / sum_{j>=1} A[i,j]: the distance
                                without the first key (attention sink); 0.5 for i = 0; a row
                                whose other keys underflow next to the sink is recomputed
                                with scores re-shifted by the max over j >= 1 */
    GF_STAT_SINK = 4,        /* A[i,0]: the share of attention on the first key (stats/attn_stats.h) */
    GF_STAT_COUNT = 5
};

/* Causal GQA softmax attention, scale hd^-1/2, no T x T matrix:
 *   q [B, T, H, hd] (rotated), k, v [B, S, KV, hd] (keys 0 .. pos0+T-1 valid),
 *   out [B, T, H, hd]; query t attends keys 0 .. pos0 + t.
 * lse [B, H, T] (F32, optional): log-sum-exp of each row's scaled scores, for the backward.
 * stats (F64 [H, GF_STAT_COUNT], optional): += the sums above over the B*T rows. */
void be_attention(gf_backend *be, gf_buf out, gf_buf lse, gf_buf stats, gf_buf q, gf_buf k, gf_buf v,
                  const gf_attn_shape *s);
/* Flash-style backward (probabilities recomputed blockwise from lse; O(T)
 * extra memory): dq [B, T, H, hd], dk, dv [B, S, KV, hd] (overwritten; pos0 = 0, S = T). */
void be_attention_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dout, gf_buf out, gf_buf lse,
                           gf_buf q, gf_buf k, gf_buf v, const gf_attn_shape *s);

/* ------------------------------------------------------------- Gated DeltaNet */

typedef struct {
    int B, T, H, dk, dv;
    int chunk;      /* 16, 32 or 64 */
    float scale;    /* query scale (dk^-1/2 or 1) */
    bool recurrent; /* token by token instead of chunks (same result) */
    bool keep_wy;   /* ckpt also holds every chunk's WY products (gf_gdn_ckpt_floats): the forward
                       writes them, the backward reads them instead of computing them again.
                       Only where be_gdn_keeps_wy; the same value in both calls */
} gf_gdn_shape;

/* F32 elements of the checkpoint of shape s on a backend of compute type act:
 * the states [B, H, NC, dv, dk] (NC = ceil(T / chunk)) in ACT (in bf16 mode every
 * kernel that reads them rounds them to bf16 anyway: half the bytes; the buffer
 * is F32 and holds them packed, rounded up to whole floats), then with keep_wy every
 * chunk's WY products, each array over (b, h, c) in that order: gam [.., C]
 * (F32), W [.., C, dk], V' [.., C, dv], A [.., C, C] (ACT): at C 64, dk = dv =
 * 128 in bf16, 41.2 kB a chunk after the states' 32.8 kB. */
size_t gf_gdn_ckpt_floats(const gf_gdn_shape *s, gf_dtype act);
/* Whether be's GDN backward starts from kept WY products: the CUDA backend's
 * chunked backward does (it saves the WY kernel and half of the V' one); the
 * CPU's walks each chunk token by token and has no use for them. */
bool be_gdn_keeps_wy(const gf_backend *be);

/* The gated delta rule (METHOD.md section 3, engine/gdn/gdn.h):
 *   q, k [B, T, H, dk] (L2-normalized), v [B, T, H, dv] (ACT); g, beta [B, T, H] (F32)
 *   o [B, T, H, dv] (ACT)
 *   ckpt [B, H, ceil(T/chunk), dv, dk] (F32, optional): state entering each chunk
 *     (gf_gdn_ckpt_floats elements, the states in ACT: with s->keep_wy the WY products follow)
 *   state [B, H, dv, dk] (F32, optional): initial state in, final state out
 *     (gf_none: zero start, final state dropped). Decode calls this with T = 1. */
void be_gdn_core(gf_backend *be, gf_buf o, gf_buf ckpt, gf_buf state, gf_buf q, gf_buf k, gf_buf v, gf_buf g,
                 gf_buf beta, const gf_gdn_shape *s);
/* From d_o: dq, dk, dv (ACT), dg, dbeta (F32), overwritten; zero initial state. */
void be_gdn_core_backward(gf_backend *be, gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf d_o,
                          gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta, gf_buf ckpt, const gf_gdn_shape *s);

/* The GDN layer's element-wise work around the core (engine/gdn/gdn.h for the
 * column layout of proj = x W_in^T: [q | k | v | g | a | b]).
 *   prep: proj [N, in_width] gets bqkv [qkv] (optional) added to its q|k|v
 *         columns in place; qkv_pre [N, qkv] = those columns after the
 *         optional causal conv (conv_w [qkv, K]); q, k = l2norm(silu(.)) per
 *         head, v = silu(.), g = -exp(A_log) softplus(a + dt_bias),
 *         beta = sigmoid(b). conv_tail [B, K-1, qkv] (optional): earlier
 *         tokens' q|k|v projections (bias included) in, updated out (decode).
 *   gated_norm: z [N, H*dv] = RMSNorm_h(o) * w_norm * silu(proj g columns); rstd [N, H] F32. */
#define GDN_CONV_K 4          /* short-conv kernel size (fla's conv_size default) */
#define GDN_QK_L2_EPS 1e-6    /* q, k L2-norm epsilon: x / sqrt(sum x^2 + eps) */

typedef struct {
    int B, T, D, H, dk, dv;
    bool conv;       /* short causal conv of width GDN_CONV_K on q, k, v */
    float norm_eps;
} gf_gdn_dims;

void be_gdn_prep(gf_backend *be, gf_buf qkv_pre, gf_buf q, gf_buf k, gf_buf v, gf_buf g, gf_buf beta,
                 gf_buf conv_tail, gf_buf proj, gf_buf bqkv, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,
                 const gf_gdn_dims *d);
/* dproj [N, in_width] (overwritten: q k v a b columns; g columns come from
 * gated_norm_backward) and F32 grads += for bqkv, conv_w, a_log, dt_bias
 * (each optional). Zero initial conv history (training). */
void be_gdn_prep_backward(gf_backend *be, gf_buf dproj, gf_buf dbqkv, gf_buf dconv_w, gf_buf da_log, gf_buf ddt_bias,
                          gf_buf dq, gf_buf dk, gf_buf dv, gf_buf dg, gf_buf dbeta, gf_buf proj, gf_buf qkv_pre,
                          gf_buf q, gf_buf k, gf_buf g, gf_buf beta, gf_buf conv_w, gf_buf a_log, gf_buf dt_bias,
                          const gf_gdn_dims *d);
void be_gdn_gated_norm(gf_backend *be, gf_buf z, gf_buf rstd, gf_buf o, gf_buf proj, gf_buf w_norm,
                       const gf_gdn_dims *d);
/* d_o [N, H*dv] (overwritten; may alias dz), the g columns of dproj
 * (overwritten), dw_norm (F32) += (optional). */
void be_gdn_gated_norm_backward(gf_backend *be, gf_buf d_o, gf_buf dproj, gf_buf dw_norm, gf_buf dz, gf_buf o,
                                gf_buf rstd, gf_buf proj, gf_buf w_norm, const gf_gdn_dims *d);

/* ------------------------------------------------------------- losses */

/* Each adds the loss SUMMED over rows to loss (F64 [1]) and writes the
 * gradient multiplied by grad_scale (gf_none: no gradient). dlogits may alias
 * logits (the gradient replaces them). */
/* -log softmax(logits[n])[targets[n]]; targets I32 [N], < 0 skips the row
 * (no loss, zero gradient). */
void be_cross_entropy(gf_backend *be, gf_buf loss, gf_buf dlogits, gf_buf logits, gf_buf targets, int N, int V,
                      float grad_scale);
/* tau^2 KL(softmax(t/tau) || softmax(s/tau)); ds = grad_scale tau (p_s - p_t). */
void be_kl_div(gf_backend *be, gf_buf loss, gf_buf dstudent, gf_buf student, gf_buf teacher, int N, int V,
               float tau, float grad_scale);
/* sum (y - t)^2; dy = grad_scale 2 (y - t) (Stage 2's MSE with grad_scale 1/n). */
void be_mse(gf_backend *be, gf_buf loss, gf_buf dy, gf_buf y, gf_buf target, size_t n, float grad_scale);
/* sum over rows of ||t - s||_2 / sqrt(D); ds += grad_scale (s - t) / (||t - s|| sqrt(D)). */
void be_row_l2(gf_backend *be, gf_buf loss, gf_buf ds, gf_buf s, gf_buf t, int N, int D, float grad_scale);

/* ------------------------------------------------------------- optimizer */

/* acc (F64 [1]) += sum x[i]^2 over x (F32 [n]): global gradient norm. */
void be_sumsq(gf_backend *be, gf_buf acc, gf_buf x, size_t n);

typedef struct {
    float lr, beta1, beta2, eps, weight_decay;
    int step;          /* 1, 2, ... (bias corrections) */
    float grad_scale;  /* gradients are multiplied by this first (clipping) */
} gf_adamw;

/* PyTorch's AdamW on master p (F32 [n]) with grads g and moments m, v (F32);
 * p_act (optional, ACT [n]) receives the updated parameters in the compute type. */
void be_adamw(gf_backend *be, gf_buf p, gf_buf p_act, gf_buf g, gf_buf m, gf_buf v, size_t n, const gf_adamw *h);

#ifdef __cplusplus
}
#endif

#endif
