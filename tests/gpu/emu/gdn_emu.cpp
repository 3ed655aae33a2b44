/* The fiber scheduler behind gdn_emu.h. One block at a time; its threads are
 * ucontext fibers that run until they reach a barrier. A block barrier releases
 * when every thread of the block arrived, a warp barrier when the warp's 32
 * threads did. No runnable fiber while some wait: a deadlock (a barrier some
 * threads skip), reported and aborted. */
#include "tests/gpu/emu/gdn_emu.h"

#include <stdio.h>
#include <ucontext.h>

/* getcontext "returns twice" in general; here it only fills a context that
 * makecontext then retargets, so nothing is ever resumed inside gdn_emu_run. */
#pragma GCC diagnostic ignored "-Wclobbered"

#include <algorithm>
#include <random>
#include <vector>

namespace {

enum { RUN = 0, AT_BLOCK = 1, AT_WARP = 2, DONE = 3 };

struct Fiber {
    ucontext_t ctx;
    int state;
    unsigned gen; /* the barrier generation it waits to pass */
};

struct Emu {
    dim3 grid, block, bid;
    int n = 0, cur = 0;
    std::vector<Fiber> f;
    std::vector<std::vector<char>> stacks;
    ucontext_t sched;
    unsigned block_gen = 0;
    int block_count = 0;
    std::vector<unsigned> warp_gen;
    std::vector<int> warp_count;
    std::vector<uint32_t> xchg; /* per lane: 4 a + 2 b registers, or a shuffled value */
    std::vector<char> smem;
    const std::function<void()> *body = nullptr;
    std::mt19937 rng{12345};
    int order = 0; /* 0 forward, 1 reverse, 2 shuffle */
};

Emu E;
const size_t kStack = 256 * 1024;

void yield_to_sched() { swapcontext(&E.f[E.cur].ctx, &E.sched); }

void trampoline() {
    (*E.body)();
    E.f[E.cur].state = DONE;
    /* uc_link returns to the scheduler */
}

int warp_size_of(int w) {
    int left = E.n - w * 32;
    return left < 32 ? left : 32;
}

void warp_barrier() {
    int w = E.cur / 32;
    unsigned g = E.warp_gen[w];
    if (++E.warp_count[w] == warp_size_of(w)) {
        E.warp_count[w] = 0;
        E.warp_gen[w]++;
        E.f[E.cur].state = RUN;
    } else {
        E.f[E.cur].state = AT_WARP;
        E.f[E.cur].gen = g;
    }
    yield_to_sched();
}

float bf16_lo(uint32_t u) {
    uint32_t b = (u & 0xffffu) << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}
float bf16_hi(uint32_t u) {
    uint32_t b = u & 0xffff0000u;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

bool runnable(const Fiber &t, int i) {
    switch (t.state) {
    case RUN: return true;
    case AT_BLOCK: return E.block_gen != t.gen;
    case AT_WARP: return E.warp_gen[i / 32] != t.gen;
    default: return false;
    }
}

} // namespace

GdnEmuIdx gdn_emu_thread_idx() { return GdnEmuIdx{(unsigned)E.cur, 0, 0}; }
GdnEmuIdx gdn_emu_block_idx() { return GdnEmuIdx{E.bid.x, E.bid.y, E.bid.z}; }
GdnEmuIdx gdn_emu_block_dim() { return GdnEmuIdx{E.block.x, E.block.y, E.block.z}; }
GdnEmuIdx gdn_emu_grid_dim() { return GdnEmuIdx{E.grid.x, E.grid.y, E.grid.z}; }
char *gdn_emu_smem() { return E.smem.data(); }

void gdn_emu_sync_block() {
    unsigned g = E.block_gen;
    if (++E.block_count == E.n) {
        E.block_count = 0;
        E.block_gen++;
        E.f[E.cur].state = RUN;
    } else {
        E.f[E.cur].state = AT_BLOCK;
        E.f[E.cur].gen = g;
    }
    yield_to_sched();
}

void gdn_emu_sync_warp() { warp_barrier(); }

float gdn_emu_shfl_xor(float v, int mask) {
    int w = E.cur / 32, lane = E.cur % 32;
    uint32_t u;
    memcpy(&u, &v, 4);
    E.xchg[(size_t)(w * 32 + lane) * 6] = u;
    warp_barrier();
    int src = lane ^ mask;
    if (src >= warp_size_of(w)) {
        fprintf(stderr, "gdn_emu: shuffle from lane %d outside the warp\n", src);
        abort();
    }
    uint32_t r = E.xchg[(size_t)(w * 32 + src) * 6];
    warp_barrier();
    float out;
    memcpy(&out, &r, 4);
    return out;
}

/* mma.sync.m16n8k16.row.col f32 += bf16 bf16: fragments as the PTX ISA lays them out.
 * A (16x16): element (r, c) is in lane (r % 8) * 4 + (c % 8) / 2, register
 *   (r >= 8) + 2 (c >= 8), half c % 2 (the lower 16 bits hold the even column).
 * B (16x8): element (k, n) is in lane n * 4 + (k % 8) / 2, register (k >= 8), half k % 2.
 * D (16x8): lane 4 g + t holds (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1). */
void gdn_emu_mma_bf16_16816(float d[4], const uint32_t a[4], const uint32_t b[2]) {
    int w = E.cur / 32, lane = E.cur % 32;
    if (warp_size_of(w) != 32) {
        fprintf(stderr, "gdn_emu: mma in a partial warp\n");
        abort();
    }
    uint32_t *x = &E.xchg[(size_t)(w * 32 + lane) * 6];
    for (int i = 0; i < 4; i++) x[i] = a[i];
    x[4] = b[0];
    x[5] = b[1];
    warp_barrier();
    const uint32_t *base = &E.xchg[(size_t)w * 32 * 6];
    auto A = [&](int r, int c) {
        uint32_t u = base[(size_t)((r % 8) * 4 + (c % 8) / 2) * 6 + (r >= 8) + 2 * (c >= 8)];
        return c % 2 ? bf16_hi(u) : bf16_lo(u);
    };
    auto B = [&](int k, int n) {
        uint32_t u = base[(size_t)(n * 4 + (k % 8) / 2) * 6 + 4 + (k >= 8)];
        return k % 2 ? bf16_hi(u) : bf16_lo(u);
    };
    int g = lane / 4, t = lane % 4;
    float out[4];
    for (int e = 0; e < 4; e++) {
        int r = g + (e >> 1) * 8, n = 2 * t + (e & 1);
        double s = 0;
        for (int k = 0; k < 16; k++) s += (double)A(r, k) * (double)B(k, n);
        out[e] = (float)s;
    }
    warp_barrier();
    for (int e = 0; e < 4; e++) d[e] += out[e];
}

static bool in_smem(const void *p) {
    const char *c = (const char *)p;
    return c >= E.smem.data() && c < E.smem.data() + E.smem.size();
}

/* ldmatrix.sync.aligned.m8n8.x{2,4}[.trans].shared.b16, as the PTX ISA defines it:
 * lane 8 i + j gives the address of row j of matrix i (16 bytes, 16-aligned, in
 * shared memory); register i of lane 4 g + t receives matrix i's elements
 * (g, 2t) and (g, 2t + 1), or with trans (2t, g) and (2t + 1, g), the first in
 * the low half. Addresses go through the exchange area (two words a lane). */
void gdn_emu_ldmatrix(uint32_t *r, int n, const void *row, bool trans) {
    int w = E.cur / 32, lane = E.cur % 32;
    if (warp_size_of(w) != 32) {
        fprintf(stderr, "gdn_emu: ldmatrix in a partial warp\n");
        abort();
    }
    if (lane < 8 * n && (((uintptr_t)row & 15) != 0 || !in_smem(row) || !in_smem((const char *)row + 15))) {
        fprintf(stderr, "gdn_emu: ldmatrix row address %p of lane %d is not a 16-byte aligned shared row\n", row, lane);
        abort();
    }
    uint64_t u = (uint64_t)(uintptr_t)row;
    uint32_t *x = &E.xchg[(size_t)(w * 32 + lane) * 6];
    x[0] = (uint32_t)u;
    x[1] = (uint32_t)(u >> 32);
    warp_barrier();
    auto row_of = [&](int i, int j) {
        const uint32_t *y = &E.xchg[(size_t)(w * 32 + 8 * i + j) * 6];
        return (const uint16_t *)(uintptr_t)((uint64_t)y[0] | (uint64_t)y[1] << 32);
    };
    int g = lane / 4, t = lane % 4;
    uint32_t out[4];
    for (int i = 0; i < n; i++) {
        uint16_t lo, hi;
        if (trans) {
            lo = row_of(i, 2 * t)[g];
            hi = row_of(i, 2 * t + 1)[g];
        } else {
            lo = row_of(i, g)[2 * t];
            hi = row_of(i, g)[2 * t + 1];
        }
        out[i] = (uint32_t)lo | (uint32_t)hi << 16;
    }
    warp_barrier();
    for (int i = 0; i < n; i++) r[i] = out[i];
}

void gdn_emu_run(dim3 grid, dim3 block, size_t smem, const std::function<void()> &body) {
    if (block.y != 1 || block.z != 1 || block.x == 0 || block.x > 1024) {
        fprintf(stderr, "gdn_emu: only 1-D blocks of 1..1024 threads\n");
        abort();
    }
    if (smem > 232448) {
        fprintf(stderr, "gdn_emu: %zu bytes of shared memory (an H100/H200 block has 232448)\n", smem);
        abort();
    }
    const char *ord = getenv("GDN_EMU_ORDER");
    E.order = ord && !strcmp(ord, "reverse") ? 1 : ord && !strcmp(ord, "shuffle") ? 2 : 0;
    E.grid = grid;
    E.block = block;
    E.n = (int)block.x;
    E.body = &body;
    int nwarps = (E.n + 31) / 32;
    E.f.assign(E.n, Fiber());
    if ((int)E.stacks.size() < E.n) E.stacks.resize(E.n);
    for (auto &s : E.stacks)
        if (s.size() != kStack) s.assign(kStack, 0);
    E.warp_gen.assign(nwarps, 0);
    E.warp_count.assign(nwarps, 0);
    E.xchg.assign((size_t)nwarps * 32 * 6, 0);
    std::vector<int> order(E.n);
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                E.bid = dim3(bx, by, bz);
                E.smem.assign(smem + 16, (char)0xFF); /* garbage, as on a GPU: NaN in fp32 and bf16, so reading what was never written shows */
                E.block_gen = 0;
                E.block_count = 0;
                std::fill(E.warp_gen.begin(), E.warp_gen.end(), 0u);
                std::fill(E.warp_count.begin(), E.warp_count.end(), 0);
                for (int i = 0; i < E.n; i++) {
                    Fiber &t = E.f[i];
                    t.state = RUN;
                    t.gen = 0;
                    getcontext(&t.ctx);
                    t.ctx.uc_stack.ss_sp = E.stacks[i].data();
                    t.ctx.uc_stack.ss_size = kStack;
                    t.ctx.uc_link = &E.sched;
                    makecontext(&t.ctx, trampoline, 0);
                    order[i] = i;
                }
                for (;;) {
                    if (E.order == 1) std::reverse(order.begin(), order.end());
                    if (E.order == 2) std::shuffle(order.begin(), order.end(), E.rng);
                    bool ran = false, all_done = true;
                    for (int i : order) {
                        Fiber &t = E.f[i];
                        if (t.state == DONE) continue;
                        all_done = false;
                        if (!runnable(t, i)) continue;
                        t.state = RUN;
                        E.cur = i;
                        swapcontext(&E.sched, &t.ctx);
                        ran = true;
                    }
                    if (all_done) break;
                    if (!ran) {
                        fprintf(stderr, "gdn_emu: deadlock in block (%u, %u, %u): threads wait at barriers others skip\n",
                                bx, by, bz);
                        abort();
                    }
                }
                if (E.block_count || std::any_of(E.warp_count.begin(), E.warp_count.end(), [](int c) { return c; })) {
                    fprintf(stderr, "gdn_emu: block (%u, %u, %u) ended with threads at a barrier\n", bx, by, bz);
                    abort();
                }
            }
}
