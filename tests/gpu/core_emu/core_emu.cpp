/* The emulation's runtime (core_emu.h): fibers for threads, barriers, the
 * warp-level exchanges, and the documented semantics of ldmatrix.x4 (.trans)
 * and mma.m16n8k16.row.col.f32.bf16.bf16.f32 (PTX ISA, "Matrix fragments for
 * mma.m16n8k16" and "ldmatrix"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <vector>

#include "core_emu.h"

namespace {

struct barrier {
    int needed = 0, arrived = 0;
    unsigned gen = 0;
    const char *what = nullptr; /* warp barriers: the collective the lanes meet at */
};

struct fiber {
    ucontext_t ctx;
    bool done = false, waiting = false;
    barrier *wait_on = nullptr;
    unsigned wait_gen = 0;
    emu_idx tid{0, 0, 0};
    int lane = 0, warp = 0;
};

struct warp_buf {
    const void *ptr[32];
    float f[32];
    double d[32];
    uint32_t a[32][4], b[32][2];
    float c[32][4];
};

struct state {
    std::vector<fiber> f;
    std::vector<std::vector<char>> stacks;
    barrier blk;
    std::vector<barrier> wb;
    std::vector<warp_buf> buf;
    std::vector<unsigned char> smem;
    emu_idx bid{0, 0, 0}, bdim{1, 1, 1}, gdim{1, 1, 1};
    const std::function<void()> *body = nullptr;
    ucontext_t sched;
    int cur = -1;
    bool reverse = false;
} S;

const size_t STACK = 512 * 1024;

fiber &me() { return S.f[S.cur]; }

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
        else if (b.what != what) {
            fprintf(stderr, "core_emu: lanes of warp %d diverge: one at %s, another at %s (block %u %u %u)\n",
                    me().warp, b.what, what, S.bid.x, S.bid.y, S.bid.z);
            abort();
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
    swapcontext(&f.ctx, &S.sched);
}

void warp_arrive(const char *what) { arrive(S.wb[me().warp], what); }

void entry() {
    const int i = S.cur;
    (*S.body)();
    fiber &f = S.f[i];
    f.done = true;
    /* an exited thread no longer counts at barriers */
    S.blk.needed--;
    release_if_full(S.blk);
    barrier &w = S.wb[f.warp];
    w.needed--;
    release_if_full(w);
    setcontext(&S.sched);
}

void run_block() {
    const int n = (int)(S.bdim.x * S.bdim.y * S.bdim.z), nw = (n + 31) / 32;
    S.f.assign(n, fiber());
    if ((int)S.stacks.size() < n) S.stacks.resize(n);
    S.wb.assign(nw, barrier());
    S.buf.resize(nw);
    S.blk = barrier();
    S.blk.needed = n;
    for (int i = 0; i < n; i++) {
        fiber &f = S.f[i];
        f.tid = {(unsigned)(i % S.bdim.x), (unsigned)(i / S.bdim.x % S.bdim.y), (unsigned)(i / (S.bdim.x * S.bdim.y))};
        f.lane = i & 31;
        f.warp = i >> 5;
        S.wb[f.warp].needed++;
        if (S.stacks[i].size() < STACK) S.stacks[i].resize(STACK);
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = S.stacks[i].data();
        f.ctx.uc_stack.ss_size = STACK;
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, entry, 0);
    }
    /* shared memory starts as NaN (0xff bytes): a read of what no thread wrote shows */
    memset(S.smem.data(), 0xff, S.smem.size());
    for (;;) {
        bool all_done = true, progress = false;
        for (int k = 0; k < n; k++) {
            const int i = S.reverse ? n - 1 - k : k;
            fiber &f = S.f[i];
            if (f.done) continue;
            all_done = false;
            if (f.waiting) {
                if (f.wait_on->gen == f.wait_gen) continue;
                f.waiting = false;
            }
            S.cur = i;
            swapcontext(&S.sched, &f.ctx);
            progress = true;
        }
        if (all_done) break;
        if (!progress) {
            fprintf(stderr, "core_emu: deadlock in block (%u, %u, %u): threads wait at barriers that cannot fill\n",
                    S.bid.x, S.bid.y, S.bid.z);
            abort();
        }
    }
    S.cur = -1;
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

} // namespace

emu_idx emu_thread_idx() { return S.f[S.cur].tid; }
emu_idx emu_block_idx() { return S.bid; }
emu_idx emu_block_dim() { return S.bdim; }
emu_idx emu_grid_dim() { return S.gdim; }
void *emu_dynamic_smem() { return S.smem.data(); }

void emu_syncthreads() { arrive(S.blk); }
void emu_syncwarp() { warp_arrive("syncwarp"); }

float emu_shfl_xor(float v, int mask) {
    warp_buf &b = S.buf[me().warp];
    const int lane = me().lane;
    b.f[lane] = v;
    warp_arrive("shfl_xor");
    const float r = b.f[(lane ^ mask) & 31];
    warp_arrive("shfl_xor");
    return r;
}

double emu_shfl_xor_d(double v, int mask) {
    warp_buf &b = S.buf[me().warp];
    const int lane = me().lane;
    b.d[lane] = v;
    warp_arrive("shfl_xor");
    const double r = b.d[(lane ^ mask) & 31];
    warp_arrive("shfl_xor");
    return r;
}

bool emu_any(bool v) {
    warp_buf &b = S.buf[me().warp];
    b.f[me().lane] = v ? 1.0f : 0.0f;
    warp_arrive("any");
    bool r = false;
    for (int l = 0; l < 32; l++) r |= b.f[l] != 0.0f;
    warp_arrive("any");
    return r;
}

float emu_shfl_idx(float v, int src) {
    warp_buf &b = S.buf[me().warp];
    b.f[me().lane] = v;
    warp_arrive("shfl");
    const float r = b.f[src & 31];
    warp_arrive("shfl");
    return r;
}

void emu_cp_async16(void *dst, const void *src, bool valid) {
    if (valid) memcpy(dst, src, 16);
    else memset(dst, 0, 16);
}

/* ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: lanes 8i .. 8i+7 give the
 * row addresses of matrix i; lane t receives in r[i] the elements (row t/4,
 * columns 2(t%4), 2(t%4)+1) of matrix i, or with .trans (rows 2(t%4),
 * 2(t%4)+1, column t/4); the lower column / row in the low half. */
void emu_ldmatrix_x4(uint32_t (&r)[4], const void *p, bool trans) {
    warp_buf &b = S.buf[me().warp];
    const int t = me().lane;
    b.ptr[t] = p;
    warp_arrive("ldmatrix");
    for (int i = 0; i < 4; i++) {
        uint16_t lo, hi;
        if (!trans) {
            const char *row = (const char *)b.ptr[8 * i + t / 4];
            lo = bits16(row + 2 * (2 * (t % 4)));
            hi = bits16(row + 2 * (2 * (t % 4) + 1));
        } else {
            lo = bits16((const char *)b.ptr[8 * i + 2 * (t % 4)] + 2 * (t / 4));
            hi = bits16((const char *)b.ptr[8 * i + 2 * (t % 4) + 1] + 2 * (t / 4));
        }
        r[i] = (uint32_t)lo | ((uint32_t)hi << 16);
    }
    warp_arrive("ldmatrix");
}

/* mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, lane = 4 gid + tig:
 *   A (16 x 16) a0 (gid, 2tig..) a1 (gid+8, 2tig..) a2 (gid, 8+2tig..) a3 (gid+8, 8+2tig..)
 *   B (16 x 8)  b0 (k 2tig.., n gid) b1 (k 8+2tig.., n gid)
 *   C, D        c0 c1 (gid, 2tig..) c2 c3 (gid+8, 2tig..) */
void emu_mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    warp_buf &w = S.buf[me().warp];
    const int t = me().lane;
    for (int i = 0; i < 4; i++) w.a[t][i] = a[i], w.c[t][i] = d[i];
    w.b[t][0] = b0, w.b[t][1] = b1;
    warp_arrive("mma");
    auto A = [&](int r, int k) {
        const uint32_t x = w.a[(r % 8) * 4 + (k % 8) / 2][(r >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0)];
        return bf16_bits(k % 2 ? x >> 16 : x);
    };
    auto B = [&](int k, int n) {
        const uint32_t x = w.b[n * 4 + (k % 8) / 2][k >= 8 ? 1 : 0];
        return bf16_bits(k % 2 ? x >> 16 : x);
    };
    const int gid = t / 4, tig = t % 4;
    for (int j = 0; j < 4; j++) {
        const int r = gid + (j >= 2 ? 8 : 0), n = 2 * tig + (j & 1);
        float acc = w.c[t][j];
        for (int k = 0; k < 16; k++) acc += A(r, k) * B(k, n);
        d[j] = acc;
    }
    warp_arrive("mma");
}

void emu_run(dim3 grid, dim3 block, size_t smem, const std::function<void()> &body) {
    const char *order = getenv("GRAFT_EMU_ORDER");
    S.reverse = order && strcmp(order, "reverse") == 0;
    S.body = &body;
    S.bdim = {block.x, block.y, block.z};
    S.gdim = {grid.x, grid.y, grid.z};
    S.smem.assign(smem ? smem : 16, 0);
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                S.bid = {x, y, z};
                run_block();
            }
}
