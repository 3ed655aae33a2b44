/* The emulation's own runtime (emu.cpp) checked on tiny kernels written here:
 * what a correct kernel computes through barriers and warp exchanges in every
 * fiber order, with the block size changing between launches (fibers outlive
 * blocks), and that each fault the runtime promises to catch (emu.h) stops the
 * program with its message. Every fault runs in a child process: the runtime
 * aborts on the first one. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

static int passed, failed;

static void check(bool ok, const char *what) {
    printf("%s    %s\n", ok ? "PASS" : "FAIL", what);
    ok ? passed++ : failed++;
}

static unsigned tid() {
    const emu_idx t = threadIdx, d = blockDim;
    return t.x + d.x * (t.y + d.y * t.z);
}

/* Each thread writes its id into shared memory; after the barrier it reads its
 * neighbour's, adds the sum of its warp (a shuffle tree), and stores the result.
 * Threads at or past `live` return at once (they no longer count at barriers). */
static void neighbour_kernel(int *out, unsigned live) {
    const unsigned n = blockDim.x * blockDim.y * blockDim.z, t = tid();
    if (t >= live) return;
    int *s = (int *)emu_dynamic_smem();
    s[t] = (int)(t + 1000 * blockIdx.x);
    __syncthreads();
    const int next = s[(t + 1) % live];
    __syncthreads();
    float w = (float)t;
    if (live % 32 == 0)
        for (int m = 16; m > 0; m >>= 1) w += __shfl_xor_sync(0xffffffffu, w, m);
    out[blockIdx.x * n + t] = next + (int)w;
}

static bool run_neighbours(unsigned threads, unsigned live, unsigned blocks) {
    std::vector<int> out(threads * blocks, -1);
    int *o = out.data();
    emu_launch(dim3(blocks), dim3(threads), threads * sizeof(int), [=] { neighbour_kernel(o, live); });
    for (unsigned b = 0; b < blocks; b++)
        for (unsigned t = 0; t < threads; t++) {
            int want = -1;
            if (t < live) {
                const unsigned lane0 = t & ~31u;
                const int warp_sum = live % 32 == 0 ? (int)(32 * lane0 + 496) : (int)t;
                want = (int)((t + 1) % live + 1000 * b) + warp_sum;
            }
            if (out[b * threads + t] != want) {
                printf("       block %u thread %u: %d, want %d\n", b, t, out[b * threads + t], want);
                return false;
            }
        }
    return true;
}

/* cp.async groups, one thread's view: three 16-byte copies in two committed
 * groups and one left open; what shared memory holds after each wait (NaN bits,
 * 0xffffffff, until a copy's group completes). Returns the 16 words each stage saw. */
static bool run_cp_groups() {
    static const uint32_t src[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    std::vector<uint32_t> seen(4 * 12, 0);
    uint32_t *o = seen.data();
    emu_launch(dim3(1), dim3(32), 64, [=] {
        uint32_t *s = (uint32_t *)emu_dynamic_smem();
        if (tid() == 0) {
            emu_cp_async16(s, src, true); /* group 0 */
            emu_cp_commit();
            emu_cp_async16(s + 4, src + 4, true); /* group 1 */
            emu_cp_commit();
            emu_cp_async16(s + 8, src + 8, false); /* uncommitted: zeros once complete */
            memcpy(o, s, 48);
            emu_cp_wait(1); /* group 0 lands */
            memcpy(o + 12, s, 48);
            emu_cp_wait(0); /* group 1 lands, the uncommitted copy does not */
            memcpy(o + 24, s, 48);
            emu_cp_commit();
            emu_cp_wait(0);
            memcpy(o + 36, s, 48);
        }
    });
    const uint32_t P = 0xffffffffu;
    const uint32_t want[4][12] = {{P, P, P, P, P, P, P, P, P, P, P, P},
                                  {1, 2, 3, 4, P, P, P, P, P, P, P, P},
                                  {1, 2, 3, 4, 5, 6, 7, 8, P, P, P, P},
                                  {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0}};
    for (int st = 0; st < 4; st++)
        for (int i = 0; i < 12; i++)
            if (seen[st * 12 + i] != want[st][i]) {
                printf("       stage %d word %d: %#x, want %#x\n", st, i, seen[st * 12 + i], want[st][i]);
                return false;
            }
    return true;
}

/* Runs fault in a child; true when it died of SIGABRT with `want` on stderr. */
template <typename F> static bool aborts_with(const char *want, F fault) {
    int fd[2];
    if (pipe(fd) != 0) return false;
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        fault();
        _exit(0);
    }
    close(fd[1]);
    std::string err;
    char buf[4096];
    ssize_t k;
    while ((k = read(fd[0], buf, sizeof buf)) > 0) err.append(buf, (size_t)k);
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    const bool ok = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && err.find(want) != std::string::npos;
    if (!ok) printf("       child: %s, stderr: %s\n", WIFSIGNALED(st) ? "signalled" : "exited", err.c_str());
    return ok;
}

/* bar.arrive: two groups of 64 threads take turns writing one shared buffer, each waiting (bar.sync)
 * at its own barrier for the other's arrival (bar.arrive, 128 counted), the whole block meeting at
 * __syncthreads between rounds (the turn-taking of flash-attention-3's ping-pong, which session 17's
 * attention forward cfg 27 used and a producer warp would too):
 * group 0 writes round r, lets group 1 read it and write, and so on. A reader sees the writer's round
 * only when the turns hold; an arrive that waited, or one that did not count, deadlocks instead. */
static bool run_ping_pong(int rounds) {
    std::vector<int> buf(64, -1), wrong(128, 0);
    emu_launch(dim3(1), dim3(128), 0, [&] {
        const int t = tid(), g = t / 64, i = t % 64;
        if (g == 1) emu_bar_arrive(1, 128); /* group 0's first turn */
        __syncthreads(); /* the whole block meets between rounds (an arrive that waited deadlocks here) */
        for (int r = 0; r < rounds; r++) {
            emu_bar_sync(1 + g, 128); /* my turn */
            const int want = g == 0 ? (r == 0 ? -1 : 2 * r - 1) : 2 * r;
            wrong[t] += buf[(i + 7) % 64] != (want < 0 ? -1 : 1000 * want + (want % 2 ? 64 : 0) + (i + 7) % 64);
            emu_bar_sync(3 + g, 64); /* the group read before it writes */
            buf[i] = 1000 * (2 * r + g) + t;
            emu_bar_sync(3 + g, 64);
            if (g == 0 || r + 1 < rounds) emu_bar_arrive(2 - g, 128); /* the other's turn; none left dangling */
            __syncthreads();
        }
    });
    int bad = 0;
    for (int w : wrong) bad += w;
    return bad == 0;
}

/* bar.arrive lets the threads it released run before the arriving one goes on (emu.h): warp 1 writes
 * 1, arrives at barrier 1 and then writes 2; warp 0, released there, must read the 1 in every order,
 * so a producer that hands a buffer over before it finished writing it shows as a wrong read. */
static bool run_arrive_defers() {
    int seen[32];
    emu_launch(dim3(1), dim3(64), 0, [&] {
        static int v;
        const int t = tid();
        if (t >= 32) {
            v = 1;
            emu_bar_arrive(1, 64);
            v = 2;
        } else {
            emu_bar_sync(1, 64);
            seen[t] = v;
        }
    });
    for (int x : seen)
        if (x != 1) return false;
    return true;
}

int main() {
    static const char *orders[] = {"forward", "reverse", "shuffle"};
    for (const char *order : orders) {
        setenv("GRAFT_EMU_ORDER", order, 1);
        bool ok = true;
        /* the block grows, shrinks and grows again: parked fibers are reused */
        ok = ok && run_neighbours(128, 128, 3);
        ok = ok && run_neighbours(64, 64, 2);
        ok = ok && run_neighbours(256, 256, 2);
        ok = ok && run_neighbours(96, 70, 2); /* 26 threads return before the barriers */
        std::string what = std::string("barriers, shuffles, early exits, blocks of 128 / 64 / 256 / 96 threads (") + order + ")";
        check(ok, what.c_str());
        what = std::string("bar.arrive: two groups taking turns at each other's barriers, 5 rounds (") + order + ")";
        check(run_ping_pong(5), what.c_str());
        what = std::string("bar.arrive: the released threads run before the arriving one goes on (") + order + ")";
        check(run_arrive_defers(), what.c_str());
    }
    setenv("GRAFT_EMU_ORDER", "shuffle", 1);

    check(aborts_with("deadlock", [] {
              emu_launch(dim3(1), dim3(64), 0, [] {
                  /* thread 5 waits at a named barrier for 64, the others at __syncthreads for 64 */
                  if (tid() == 5) emu_bar_sync(1, 64);
                  else __syncthreads();
              });
          }),
          "a barrier one thread skips for another: deadlock");
    check(aborts_with("diverge", [] {
              emu_launch(dim3(1), dim3(32), 0, [] {
                  if (tid() < 16) __syncwarp();
                  else (void)__shfl_xor_sync(0xffffffffu, 1.0f, 1);
              });
          }),
          "lanes of a warp at different collectives");
    check(aborts_with("partial warp", [] {
              emu_launch(dim3(1), dim3(48), 0, [] {
                  float d[4] = {0, 0, 0, 0};
                  uint32_t a[4] = {0, 0, 0, 0};
                  emu_mma_bf16_16816(d, a, 0, 0);
              });
          }),
          "an mma in a partial warp");
    check(aborts_with("outside the warp", [] {
              emu_launch(dim3(1), dim3(40), 0, [] { (void)__shfl_sync(0xffffffffu, 1.0f, 20); });
          }),
          "a shuffle from a lane the warp does not have");
    check(aborts_with("shared memory", [] { emu_launch(dim3(1), dim3(32), 300000, [] {}); }),
          "more dynamic shared memory than a block has");
    check(run_cp_groups(), "cp.async: a copy lands at the wait that completes its group (NaN before), an open group at none");
    check(aborts_with("cp.async", [] {
              emu_launch(dim3(1), dim3(32), 64, [] {
                  static uint32_t not_shared[4];
                  static const uint32_t src[4] = {1, 2, 3, 4};
                  emu_cp_async16(not_shared, src, true);
              });
          }),
          "a cp.async to memory that is not dynamic shared memory");
    check(aborts_with("bar.sync", [] {
              emu_launch(dim3(1), dim3(64), 0, [] { emu_bar_sync(1, 48); });
          }),
          "bar.sync with a count that is not whole warps");
    check(aborts_with("at a barrier", [] {
              emu_launch(dim3(1), dim3(128), 0, [] {
                  if (tid() < 64) emu_bar_arrive(5, 128); /* half the count, and nobody waits */
              });
          }),
          "a bar.arrive no thread completes: the block ends with it held");

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
