"""PyTorch's bf16 matrix product (cuBLAS underneath) at 8192^3 on random data: the
roofline the other peers' MFU is read against, next to graft's own (bench_gemm)."""
from peer_common import emit, log, roofline_tflops, SMOKE

if __name__ == "__main__":
    tf = roofline_tflops()
    n = 8192
    emit("ceiling", "torch.matmul bf16 8192^3", ms=2 * n ** 3 / (tf * 1e12) * 1e3, tflops=round(tf, 1))
    log("peer_gemm: %.1f TFLOP/s%s" % (tf, " (smoke)" if SMOKE else ""))
