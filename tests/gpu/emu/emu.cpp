/* The emulation's runtime (emu.h): a fiber per thread, block and warp
 * barriers, the warp-level exchanges, and the documented semantics of ldmatrix
 * (.trans) and mma.m16n8k16.row.col.f32.bf16.bf16.f32 (PTX ISA, "Matrix
 * fragments for mma.m16n8k16" and "ldmatrix").
 *
 * One block at a time; its threads run until they reach a barrier. A block
 * barrier releases when every live thread of the block arrived, a warp barrier
 * when every live lane of the warp did (a thread that returned no longer
 * counts). No runnable fiber while some wait: a deadlock (a barrier some
 * threads skip), reported and aborted, as is a block that ends with threads at
 * a barrier, lanes of a warp that meet at different collectives, an ldmatrix
 * or mma in a partial warp, a shuffle from a lane outside the warp, an
 * ldmatrix row that is not a 16-byte aligned row of dynamic shared memory, and
 * more dynamic shared memory than an H100 / H200 block has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "emu.h"

/* make sanitize builds this with ASan: tell it which stack each switch goes to */
#if defined(__SANITIZE_ADDRESS__)
#define EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_ASAN 1
#endif
#endif
#ifdef EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace {

struct barrier {
    int needed = 0, arrived = 0;
    unsigned gen = 0;
    const char *what = nullptr; /* warp barriers: the collective the lanes meet at */
};

/* a cp.async not yet complete: what it will write, read from global memory at issue */
struct pending_copy {
    unsigned char *dst;
    unsigned char data[16];
    int group; /* the thread's commit count at issue: committed once commits > group */
};

struct fiber {
    bool done = false, waiting = false;
    bool deferred = false; /* yielded at a bar.arrive: resumed only when no other thread can run */
    barrier *wait_on = nullptr;
    unsigned wait_gen = 0;
    emu_idx tid{0, 0, 0};
    int lane = 0, warp = 0;
    std::vector<pending_copy> copies; /* this thread's cp.async in flight */
    int commits = 0;
};

/* what the lanes of one warp exchange at a collective */
struct warp_buf {
    const void *ptr[32];
    float f[32];
    double d[32];
    uint32_t a[32][4], b[32][2];
};

enum order_kind { FORWARD, REVERSE, SHUFFLE };

/* __builtin_setjmp's buffer: frame and stack pointer and where to resume */
struct jump {
    void *b[5];
};

/* 256 KiB a fiber: enough for every kernel here, under ASan too (make sanitize) */
const size_t STACK = 256 * 1024;

/* What outlives a block: fiber i's stack (uninitialized: only the pages it
 * touches are mapped), where it is parked, whether it was ever entered, and
 * ASan's fake stack of it. */
struct home {
    std::unique_ptr<char[]> stack{new char[STACK]};
    jump parked{};
    bool started = false;
    void *fake_stack = nullptr;
};

struct state {
    std::vector<fiber> f;
    std::vector<home> homes;
    barrier blk;
    barrier named[16]; /* bar.sync 1..15 (0 is blk) */
    std::vector<barrier> wb;
    std::vector<int> warp_lanes; /* lanes of each warp (the last one may be partial) */
    std::vector<warp_buf> buf;
    std::vector<long> wgmma_calls; /* wgmma calls of each warp's lane 0 this block */
    std::vector<unsigned char> smem;
    size_t smem_asked = 0;
    emu_idx bid{0, 0, 0}, bdim{1, 1, 1}, gdim{1, 1, 1};
    const std::function<void()> *body = nullptr;
    jump sched; /* the scheduler (run_block), while a fiber runs */
    void *sched_fake = nullptr;
    const void *sched_bottom = nullptr;
    size_t sched_size = 0;
    int cur = -1;
    order_kind order = FORWARD;
    std::mt19937 rng{12345};
} S;

const size_t SMEM_MAX = 232448; /* an H100 / H200 block's opt-in limit */

fiber &me() { return S.f[S.cur]; }
void park();

[[noreturn]] void fail(const char *what) {
    fprintf(stderr, "emu: %s (block %u %u %u", what, S.bid.x, S.bid.y, S.bid.z);
    if (S.cur >= 0) fprintf(stderr, ", thread %d", S.cur);
    fprintf(stderr, ")\n");
    abort();
}

void release_if_full(barrier &b) {
    if (b.needed > 0 && b.arrived >= b.needed) {
        b.arrived = 0;
        b.gen++;
    }
}

/* Arrives at b; the last arriver goes on, the others wait for the release.
 * what: the warp collective (all lanes must meet at the same one). */
void arrive(barrier &b, const char *what = nullptr) {
    const unsigned g = b.gen;
    if (what) {
        if (b.arrived == 0) b.what = what;
        else if (strcmp(b.what, what) != 0) {
            fprintf(stderr, "emu: lanes of warp %d diverge: one at %s, another at %s\n", me().warp, b.what, what);
            fail("divergent warp collective");
        }
    }
    if (++b.arrived >= b.needed) {
        b.arrived = 0;
        b.gen++;
        return;
    }
    fiber &f = me();
    f.waiting = true;
    f.wait_on = &b;
    f.wait_gen = g;
    park();
}

void warp_arrive(const char *what) { arrive(S.wb[me().warp], what); }

/* the collectives that need all 32 lanes (ldmatrix, mma) */
void need_full_warp(const char *what) {
    if (S.warp_lanes[me().warp] != 32) fail(what);
}

/* Switching between the scheduler and the fibers.
 *
 * A fiber is entered once through makecontext / setcontext; every later switch
 * is __builtin_setjmp / __builtin_longjmp, which save and restore no more than
 * the stack and frame pointers (the compiler keeps everything else live across
 * the setjmp in memory) and make no system call. swapcontext, used before, asks
 * the kernel for the signal mask at every switch: perf put ~85 % of
 * cuda_gdn_emu's time there. A fiber outlives its block: when its thread's body
 * returns it parks, and the next block that has a thread i resumes fiber i for
 * that block's body, so no frame is ever abandoned by a jump.
 *
 * __builtin_longjmp may not be in the function that holds the matching
 * __builtin_setjmp, hence the noinline jump_to. ASan unpoisons the whole stack
 * before a call that does not return (a sigaltstack system call and a memset
 * of shadow, at every switch), which nothing here needs, since no frame is
 * abandoned: so jump_to is not instrumented, and the compiler cannot see it
 * as noreturn (the branch on a buffer never filled). */
__attribute__((noinline, no_sanitize_address)) void jump_to(jump &j) {
    if (j.b[0] || j.b[1] || j.b[2]) __builtin_longjmp(j.b, 1);
} /* returns only when j was never filled: the caller fails */

void asan_start(void **fake, const void *bottom, size_t size) {
#ifdef EMU_ASAN
    __sanitizer_start_switch_fiber(fake, bottom, size);
#else
    (void)fake, (void)bottom, (void)size;
#endif
}
void asan_finish(void *fake, const void **bottom, size_t *size) {
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, bottom, size);
#else
    (void)fake, (void)bottom, (void)size;
#endif
}

/* on fiber S.cur: back to the scheduler until it resumes this fiber */
void park() {
    const int i = S.cur; /* (by index: S.homes may have grown, and moved, before this fiber is resumed) */
    if (__builtin_setjmp(S.homes[i].parked.b)) {
        asan_finish(S.homes[i].fake_stack, nullptr, nullptr);
        return;
    }
    asan_start(&S.homes[i].fake_stack, S.sched_bottom, S.sched_size);
    jump_to(S.sched);
    fail("the scheduler's jump buffer was never filled");
}

/* a fiber's life: thread S.cur of one block after another */
void entry() {
    asan_finish(nullptr, &S.sched_bottom, &S.sched_size);
    for (;;) {
        (*S.body)();
        fiber &f = me();
        f.done = true;
        /* an exited thread no longer counts at barriers */
        S.blk.needed--;
        release_if_full(S.blk);
        barrier &w = S.wb[f.warp];
        w.needed--;
        release_if_full(w);
        park();
    }
}

/* on the scheduler: run fiber i until it parks */
void resume(int i) {
    S.cur = i;
    if (__builtin_setjmp(S.sched.b)) {
        asan_finish(S.sched_fake, nullptr, nullptr);
        return;
    }
    home &m = S.homes[i];
    asan_start(&S.sched_fake, m.stack.get(), STACK);
    if (m.started) {
        jump_to(m.parked);
        fail("a started fiber was never parked");
    }
    m.started = true;
    ucontext_t uc;
    getcontext(&uc);
    uc.uc_stack.ss_sp = m.stack.get();
    uc.uc_stack.ss_size = STACK;
    uc.uc_link = nullptr; /* entry never returns */
    makecontext(&uc, entry, 0);
    setcontext(&uc);
    fail("setcontext failed");
}

void run_block() {
    const int n = (int)(S.bdim.x * S.bdim.y * S.bdim.z), nw = (n + 31) / 32;
    S.f.assign(n, fiber());
    if ((int)S.homes.size() < n) S.homes.resize(n);
    S.wb.assign(nw, barrier());
    S.warp_lanes.assign(nw, 0);
    S.buf.resize(nw);
    S.wgmma_calls.assign(nw, 0);
    S.blk = barrier();
    S.blk.needed = n;
    for (barrier &b : S.named) b = barrier();
    std::vector<int> order(n);
    for (int i = 0; i < n; i++) {
        fiber &f = S.f[i];
        f.tid = {(unsigned)(i % S.bdim.x), (unsigned)(i / S.bdim.x % S.bdim.y), (unsigned)(i / (S.bdim.x * S.bdim.y))};
        f.lane = i & 31;
        f.warp = i >> 5;
        S.wb[f.warp].needed++;
        S.warp_lanes[f.warp]++;
        order[i] = S.order == REVERSE ? n - 1 - i : i;
    }
    /* shared memory starts as NaN (0xff bytes): a read of what no thread wrote shows */
    memset(S.smem.data(), 0xff, S.smem.size());
    for (;;) {
        if (S.order == SHUFFLE) std::shuffle(order.begin(), order.end(), S.rng);
        bool all_done = true, progress = false;
        for (int i : order) {
            fiber &f = S.f[i];
            if (f.done) continue;
            all_done = false;
            if (f.waiting) {
                if (f.wait_on->gen == f.wait_gen) continue;
                f.waiting = false;
            }
            if (f.deferred) continue;
            resume(i);
            progress = true;
        }
        /* the threads that yielded at a bar.arrive go on once every other one is blocked */
        if (!progress)
            for (int i : order) {
                fiber &f = S.f[i];
                if (f.done || !f.deferred) continue;
                f.deferred = false;
                resume(i);
                progress = true;
            }
        if (all_done) break;
        if (!progress) {
            S.cur = -1;
            fail("deadlock: threads wait at barriers that cannot fill");
        }
    }
    S.cur = -1;
    auto held = [](const barrier &b) { return b.arrived != 0; };
    if (S.blk.arrived || std::any_of(S.wb.begin(), S.wb.end(), held) || std::any_of(S.named, S.named + 16, held))
        fail("the block ended with threads at a barrier");
    /* a wgmma is an instruction of the whole warpgroup: its four warps issue the same ones */
    for (int w = 0; w + 3 < nw; w += 4)
        for (int i = 1; i < 4; i++)
            if (S.wgmma_calls[w + i] != S.wgmma_calls[w])
                fail("wgmma: the warps of a warpgroup issued different numbers of them (one in a branch not all took)");
}

uint16_t bits16(const void *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return h;
}
float bf16_bits(uint32_t h) {
    const uint32_t u = (h & 0xffffu) << 16;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

bool in_smem(const void *p, size_t n) {
    const unsigned char *c = (const unsigned char *)p, *s = S.smem.data();
    return c >= s && c + n <= s + S.smem_asked;
}

} // namespace

emu_idx emu_thread_idx() { return S.f[S.cur].tid; }
emu_idx emu_block_idx() { return S.bid; }
emu_idx emu_block_dim() { return S.bdim; }
emu_idx emu_grid_dim() { return S.gdim; }
void *emu_dynamic_smem() { return S.smem.data(); }

void emu_syncthreads() { arrive(S.blk); }

/* Threads that exit do not lower n (as on the GPU, where the count is fixed):
 * a group that waits for them deadlocks, and run_block says so. */
static barrier &named_barrier(int id, int n) {
    const int threads = (int)(S.bdim.x * S.bdim.y * S.bdim.z);
    if (id < 1 || id > 15) fail("bar.sync: a barrier id outside 1..15 (0 is __syncthreads's)");
    if (n <= 0 || n % 32 != 0 || n > threads) fail("bar.sync: a thread count that is not whole warps of the block");
    barrier &b = S.named[id];
    if (b.arrived == 0) b.needed = n;
    else if (b.needed != n) fail("bar.sync: threads meet at one barrier with different counts");
    return b;
}
void emu_bar_sync(int id, int n) { arrive(named_barrier(id, n)); }
void emu_bar_arrive(int id, int n) { /* counted, not held: the last arrival releases the waiters */
    barrier &b = named_barrier(id, n);
    b.arrived++;
    release_if_full(b);
    /* and the arriving thread yields until no other thread can run: on a GPU it may go on long after
     * the threads it released, so they run first here (a producer that hands a buffer over before its
     * copies landed then fails) */
    me().waiting = false;
    me().deferred = true;
    park();
}
void emu_syncwarp() { warp_arrive("syncwarp"); }

/* the lane a shuffle reads: one of this warp's */
static int source_lane(int src) {
    if (src < 0 || src >= S.warp_lanes[me().warp]) fail("shuffle from a lane outside the warp");
    return src;
}

/* a value from lane src of this warp, through the warp's buffer buf */
template <typename T> static T exchange(T (&buf)[32], T v, int src, const char *what) {
    buf[me().lane] = v;
    warp_arrive(what);
    const T r = buf[source_lane(src)];
    warp_arrive(what);
    return r;
}

float emu_shfl_xor(float v, int mask) { return exchange(S.buf[me().warp].f, v, me().lane ^ mask, "shfl_xor"); }
double emu_shfl_xor_d(double v, int mask) { return exchange(S.buf[me().warp].d, v, me().lane ^ mask, "shfl_xor"); }
float emu_shfl_idx(float v, int src) { return exchange(S.buf[me().warp].f, v, src & 31, "shfl"); }

bool emu_any(bool v) {
    warp_buf &b = S.buf[me().warp];
    b.f[me().lane] = v ? 1.0f : 0.0f;
    warp_arrive("any");
    bool r = false;
    for (int l = 0; l < S.warp_lanes[me().warp]; l++) r |= b.f[l] != 0.0f;
    warp_arrive("any");
    return r;
}

/* The copy lands at the wait that completes its group (emu_cp_wait); until then
 * its 16 bytes of shared memory hold 0xff (NaN in fp32 and bf16), so a read
 * before the wait and the barrier after it, or a copy issued over data another
 * warp still reads, shows as NaN in what the kernel computes. */
void emu_cp_async16(void *dst, const void *src, bool valid) {
    if (!in_smem(dst, 16) || ((uintptr_t)dst & 15) != 0) fail("cp.async: the destination is not 16 aligned bytes of dynamic shared memory");
    fiber &f = me();
    pending_copy c;
    c.dst = (unsigned char *)dst;
    c.group = f.commits;
    if (valid) memcpy(c.data, src, 16);
    else memset(c.data, 0, 16);
    memset(dst, 0xff, 16);
    f.copies.push_back(c);
}
void emu_cp_commit() { me().commits++; }
void emu_cp_wait(int n) {
    fiber &f = me();
    const int done_below = f.commits - n; /* groups 0 .. done_below - 1 must be complete */
    size_t kept = 0;
    for (const pending_copy &c : f.copies) {
        if (c.group < done_below) memcpy(c.dst, c.data, 16);
        else f.copies[kept++] = c;
    }
    f.copies.resize(kept);
}

/* ldmatrix.sync.aligned.m8n8.x{n}[.trans].shared.b16: lanes 8i .. 8i+7 give
 * the row addresses of matrix i (16 bytes each, 16-byte aligned, shared
 * memory); lane 4g + t receives in r[i] the elements (row g, columns 2t,
 * 2t + 1) of matrix i, or with .trans (rows 2t, 2t + 1, column g); the lower
 * column / row in the low half. */
void emu_ldmatrix(uint32_t *r, int n, const void *row, bool trans) {
    need_full_warp("ldmatrix in a partial warp");
    warp_buf &b = S.buf[me().warp];
    const int t = me().lane;
    if (t < 8 * n && (((uintptr_t)row & 15) != 0 || !in_smem(row, 16)))
        fail("ldmatrix: a row address is not a 16-byte aligned row of dynamic shared memory");
    b.ptr[t] = row;
    warp_arrive("ldmatrix");
    const int g = t / 4, c = t % 4;
    uint32_t out[4];
    for (int i = 0; i < n; i++) {
        uint16_t lo, hi;
        if (!trans) {
            const char *rw = (const char *)b.ptr[8 * i + g];
            lo = bits16(rw + 2 * (2 * c));
            hi = bits16(rw + 2 * (2 * c + 1));
        } else {
            lo = bits16((const char *)b.ptr[8 * i + 2 * c] + 2 * g);
            hi = bits16((const char *)b.ptr[8 * i + 2 * c + 1] + 2 * g);
        }
        out[i] = (uint32_t)lo | ((uint32_t)hi << 16);
    }
    warp_arrive("ldmatrix");
    for (int i = 0; i < n; i++) r[i] = out[i];
}

/* mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, lane = 4 gid + tig:
 *   A (16 x 16) a0 (gid, 2tig..) a1 (gid+8, 2tig..) a2 (gid, 8+2tig..) a3 (gid+8, 8+2tig..)
 *   B (16 x 8)  b0 (k 2tig.., n gid) b1 (k 8+2tig.., n gid)
 *   C, D        c0 c1 (gid, 2tig..) c2 c3 (gid+8, 2tig..)
 * The 16 products of each output are summed in double and added to it once. */
void emu_mma_bf16_16816(float *d, const uint32_t *a, uint32_t b0, uint32_t b1) {
    need_full_warp("mma in a partial warp");
    warp_buf &w = S.buf[me().warp];
    const int t = me().lane;
    for (int i = 0; i < 4; i++) w.a[t][i] = a[i];
    w.b[t][0] = b0, w.b[t][1] = b1;
    warp_arrive("mma");
    auto A = [&](int r, int k) {
        const uint32_t x = w.a[(r % 8) * 4 + (k % 8) / 2][(r >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0)];
        return (double)bf16_bits(k % 2 ? x >> 16 : x);
    };
    auto B = [&](int k, int n) {
        const uint32_t x = w.b[n * 4 + (k % 8) / 2][k >= 8 ? 1 : 0];
        return (double)bf16_bits(k % 2 ? x >> 16 : x);
    };
    const int gid = t / 4, tig = t % 4;
    float sum[4];
    for (int j = 0; j < 4; j++) {
        const int r = gid + (j >= 2 ? 8 : 0), n = 2 * tig + (j & 1);
        double s = 0;
        for (int k = 0; k < 16; k++) s += A(r, k) * B(k, n);
        sum[j] = (float)s;
    }
    warp_arrive("mma");
    for (int j = 0; j < 4; j++) d[j] += sum[j];
}

/* One bf16 element of a wgmma operand in shared memory: (mn, k) of a K-major operand (rows mn of k)
 * or of an MN-major one, through descriptor desc (cuda_wgmma.cuh: start, LBO, SBO in 16-byte units;
 * 128-byte swizzle: address bits 4-6 XOR bits 7-9). */
static double wgmma_elem(uint64_t desc, int mn, int k, bool mn_major) {
    const uint32_t start = (uint32_t)(desc & 0x3fff) << 4, lbo = (uint32_t)((desc >> 16) & 0x3fff) << 4,
                   sbo = (uint32_t)((desc >> 32) & 0x3fff) << 4;
    if ((desc >> 62) != 1) fail("wgmma: a descriptor without the 128-byte swizzle (the only layout emulated)");
    if (((desc >> 49) & 7) != 0) fail("wgmma: a descriptor with a base offset (not emulated)");
    uint32_t addr = mn_major ? start + (uint32_t)(mn / 64) * lbo + (uint32_t)(mn % 64) * 2 + (uint32_t)(k % 8) * 128 +
                                   (uint32_t)(k / 8) * sbo
                             : start + (uint32_t)(mn / 8) * sbo + (uint32_t)(mn % 8) * 128 + (uint32_t)k * 2;
    addr ^= ((addr >> 7) & 7) << 4;
    const unsigned char *p = S.smem.data() + addr;
    if (!in_smem(p, 2)) fail("wgmma: an operand outside the block's dynamic shared memory");
    return (double)bf16_bits(bits16((const char *)p));
}

/* wgmma m64nNk16, bf16 in, f32 accumulate (emu.h). Each output is summed in double over its 16
 * products and added once, as emu_mma_bf16_16816 does. */
void emu_wgmma_bf16(float *d, int N, const uint32_t *a, uint64_t da, uint64_t db, bool trans_a, bool trans_b, bool acc) {
    need_full_warp("wgmma in a partial warp");
    if (N != 64 && N != 128) fail("wgmma: N other than 64 or 128 (not emulated)");
    if (S.bdim.x * S.bdim.y * S.bdim.z % 128 != 0) fail("wgmma: a block that is not whole warpgroups");
    warp_buf &w = S.buf[me().warp];
    const int t = me().lane, wq = me().warp % 4; /* this warp's rows of the warpgroup's 64: 16 wq .. */
    if (t == 0) S.wgmma_calls[me().warp]++;
    if (a)
        for (int i = 0; i < 4; i++) w.a[t][i] = a[i];
    warp_arrive("wgmma");
    auto A = [&](int r, int k) { /* r: the warp's row 0..15 */
        if (!a) return wgmma_elem(da, 16 * wq + r, k, trans_a);
        const uint32_t x = w.a[(r % 8) * 4 + (k % 8) / 2][(r >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0)];
        return (double)bf16_bits(k % 2 ? x >> 16 : x);
    };
    const int gid = t / 4, tig = t % 4;
    float sum[64];
    for (int i = 0; i < N / 8; i++)
        for (int j = 0; j < 4; j++) {
            const int r = gid + (j >= 2 ? 8 : 0), n = 8 * i + 2 * tig + (j & 1);
            double s = 0;
            for (int k = 0; k < 16; k++) s += A(r, k) * (trans_b ? wgmma_elem(db, n, k, true) : wgmma_elem(db, n, k, false));
            sum[4 * i + j] = (float)s;
        }
    warp_arrive("wgmma");
    for (int i = 0; i < N / 2; i++) d[i] = acc ? d[i] + sum[i] : sum[i];
}

void emu_run(dim3 grid, dim3 block, size_t smem, const std::function<void()> &body) {
    if (block.x == 0 || block.y == 0 || block.z == 0 || block.x * block.y * block.z > 1024) fail("a block of 1..1024 threads");
    if (smem > SMEM_MAX) {
        fprintf(stderr, "emu: %zu bytes of dynamic shared memory (a block has at most %zu)\n", smem, SMEM_MAX);
        abort();
    }
    const char *order = getenv("GRAFT_EMU_ORDER");
    S.order = order && strcmp(order, "reverse") == 0 ? REVERSE : order && strcmp(order, "shuffle") == 0 ? SHUFFLE : FORWARD;
    S.body = &body;
    S.bdim = {block.x, block.y, block.z};
    S.gdim = {grid.x, grid.y, grid.z};
    S.smem_asked = smem;
    S.smem.assign(smem + 16, 0);
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                S.bid = {x, y, z};
                run_block();
            }
}
