// swift-tools-version: 6.1
//
// SwipeRank's benchmark suite: its own package, depending on the library by path, so neither
// library users nor `swift test` build the benchmark harness (its first build takes minutes).
//
//   cd Benchmarks && swift package benchmark                       # every suite
//   cd Benchmarks && swift package benchmark --target CardPoolBenchmarks

import PackageDescription

let package = Package(
    name: "SwipeRankBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // Named, so the identity does not depend on the folder the repository was cloned into.
        .package(name: "SwipeRank", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .executableTarget(
            name: "CardPoolBenchmarks",
            dependencies: [
                .product(name: "SwipeRank", package: "SwipeRank"),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            path: "Benchmarks/CardPoolBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "RankingBenchmarks",
            dependencies: [
                .product(name: "SwipeRank", package: "SwipeRank"),
                .product(name: "SwipeRankColleges", package: "SwipeRank"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/RankingBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "SessionBenchmarks",
            dependencies: [
                "MallocInfo",
                .product(name: "SwipeRank", package: "SwipeRank"),
                .product(name: "SwipeRankColleges", package: "SwipeRank"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/SessionBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Wall-clock timing and percentiles shared by the plain benchmark executables.
        .target(name: "Timing", path: "Timing"),
        // glibc's heap statistics (malloc.h is not in Swift's Glibc module).
        .target(name: "MallocInfo", path: "MallocInfo"),
        // The Swift side of `Benchmarks/compare` (numpy / faiss side by side): a plain executable.
        .executableTarget(
            name: "swiperank-compare",
            dependencies: [.product(name: "SwipeRankNumerics", package: "SwipeRank")],
            path: "Compare"
        ),
        // Pool vs Heap, one fixed workload, for callgrind.
        .executableTarget(
            name: "swiperank-poolprofile",
            dependencies: [.product(name: "SwipeRank", package: "SwipeRank"), .product(name: "HeapModule", package: "swift-collections")],
            path: "PoolProfile"
        ),
        // Issue #30's scale run: 10⁴…10⁶ (10⁷) generated items — startup, memory per session,
        // deck p50/p99 — written to Benchmarks/results/scale.json.
        .executableTarget(
            name: "swiperank-scale",
            dependencies: ["MallocInfo", "Timing", .product(name: "SwipeRank", package: "SwipeRank"),
                           .product(name: "SwipeRankEvaluation", package: "SwipeRank")],
            path: "Scale"
        ),
        // Deck latency, candidate index vs full scan, on generated catalogs (same decks checked).
        .executableTarget(
            name: "swiperank-retrieval",
            dependencies: ["Timing", .product(name: "SwipeRank", package: "SwipeRank"),
                           .product(name: "SwipeRankEvaluation", package: "SwipeRank")],
            path: "Retrieval"
        ),
        // A fixed workload to run under a profiler.
        .executableTarget(
            name: "swiperank-profile",
            dependencies: [.product(name: "SwipeRank", package: "SwipeRank"), .product(name: "SwipeRankColleges", package: "SwipeRank"),
                           .product(name: "SwipeRankNumerics", package: "SwipeRank")],
            path: "Profile"
        ),
    ]
)
