"""Side-by-side score + top-20: SwipeRank (Swift + OpenBLAS) vs numpy vs faiss-cpu IndexFlatIP.

Same data (seeded), same query, 1 and 2 threads, median of repeated single queries; prints the
latencies and the ratios SwipeRank / other. Run through Benchmarks/compare, which sets up the
virtualenv and builds the Swift side.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import faiss
import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

K = 20
SWIFT = sys.argv[1]
REPS = int(os.environ.get("REPS", "2000"))


def median_p99(fn, reps):
    for _ in range(20):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - t) / 1000)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, len(times) * 99 // 100)]


def numpy_top(x, w):
    s = x @ w
    idx = np.argpartition(-s, K)[:K]
    return idx[np.lexsort((idx, -s[idx]))]


def run(n, d, threads, workdir):
    rng = np.random.default_rng(n * 1000 + d)
    x = rng.uniform(-1.7, 1.7, size=(n, d)).astype(np.float32)
    w = rng.uniform(-1, 1, size=d).astype(np.float32)
    xpath, wpath = os.path.join(workdir, "x.f32"), os.path.join(workdir, "w.f32")
    x.tofile(xpath)
    w.tofile(wpath)
    reps = REPS if n <= 10_000 else max(200, REPS // 10)

    with threadpool_limits(limits=threads):
        np_med, np_p99 = median_p99(lambda: numpy_top(x, w), reps)
    faiss.omp_set_num_threads(threads)
    index = faiss.IndexFlatIP(d)
    index.add(x)
    q = w.reshape(1, d)
    fa_med, fa_p99 = median_p99(lambda: index.search(q, K), reps)
    out = subprocess.run([SWIFT, xpath, str(n), str(d), wpath, str(threads), str(reps)],
                         check=True, capture_output=True, text=True).stdout
    swift = json.loads(out)
    # Same answer: the Swift top-20 equals numpy's (ties are vanishingly unlikely in random data).
    agree = list(numpy_top(x, w)) == swift["top"]
    return {"n": n, "d": d, "threads": threads, "swift": swift["median_us"], "swift_p99": swift["p99_us"],
            "numpy": np_med, "numpy_p99": np_p99, "faiss": fa_med, "faiss_p99": fa_p99, "same_top20": agree}


def main():
    blas = [f"{i['internal_api']} {i.get('version')} ({i.get('architecture')})" for i in threadpool_info()]
    print(f"numpy {np.__version__}, faiss {faiss.__version__}; numpy BLAS: {', '.join(blas)}")
    print(f"{'workload':<22}{'thr':>4}{'SwipeRank µs':>14}{'numpy µs':>10}{'faiss µs':>10}{'SR/numpy':>10}{'SR/faiss':>10}  same top-20")
    with tempfile.TemporaryDirectory() as workdir:
        for n, d in [(2294, 64), (10_000, 64), (100_000, 64), (10_000, 128)]:
            for threads in (1, 2):
                r = run(n, d, threads, workdir)
                print(f"{f'{n} x {d}':<22}{threads:>4}{r['swift']:>14.1f}{r['numpy']:>10.1f}{r['faiss']:>10.1f}"
                      f"{r['swift'] / r['numpy']:>10.2f}{r['swift'] / r['faiss']:>10.2f}  {r['same_top20']}")


if __name__ == "__main__":
    main()
