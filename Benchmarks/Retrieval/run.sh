#!/usr/bin/env bash
# Builds the library in release (the SwipeRank target only: this harness needs no server) and
# the harness against it with swiftc, then runs it: deck latency, candidate index vs full scan.
#
#   bash Benchmarks/Retrieval/run.sh 5 6        # exponents (10⁵ and 10⁶ items)
#   SESSIONS=100 bash Benchmarks/Retrieval/run.sh 6
set -euo pipefail
cd "$(dirname "$0")/../.."
scratch=${SCRATCH:-.build}
swift build -c release --scratch-path "$scratch" --target SwipeRank
release="$scratch/release"
swiftc -O -wmo -module-name RetrievalBenchmark \
  -I "$release/Modules" -I "$release" \
  -Xcc -fmodule-map-file="$release/CSwipeRankKernels.build/module.modulemap" -Xcc -ISources/CSwipeRankKernels/include \
  -Xcc -fmodule-map-file=Sources/CBLAS/module.modulemap -I/usr/include/x86_64-linux-gnu/openblas-pthread \
  Benchmarks/Retrieval/main.swift "$release"/SwipeRank.build/*.o "$release"/SwipeRankNumerics.build/*.o \
  "$release"/CSwipeRankKernels.build/*.o -lopenblas -o "$scratch/retrieval-benchmark"
"$scratch/retrieval-benchmark" "$@"
