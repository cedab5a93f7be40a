// swift-tools-version: 6.1
//
// SwipeRank: a matching and recommendation engine for swipe-based apps.
//
// Layering (each arrow is the only allowed direction of `import`):
//   swiperank (CLI) → SwipeRankEvaluation → SwipeRank (engine) → SwipeRankNumerics → CBLAS
//
// Benchmarks live in Benchmarks/ as their own package, so neither library users nor
// `swift test` build the benchmark harness.

import PackageDescription

// Invariant checkers (heap order, position maps) run after every mutation when this is set.
// The test scripts set SWIPERANK_INTERNAL_CHECKS=1; library users never pay for them.
let internalChecks: [SwiftSetting] =
    Context.environment["SWIPERANK_INTERNAL_CHECKS"] == "1"
    ? [.define("SWIPERANK_INTERNAL_CHECKS")] : []

let package = Package(
    name: "SwipeRank",
    products: [
        .library(name: "SwipeRank", targets: ["SwipeRank"]),
        .library(name: "SwipeRankEvaluation", targets: ["SwipeRankEvaluation"]),
        .library(name: "SwipeRankNumerics", targets: ["SwipeRankNumerics"]),
        .executable(name: "swiperank", targets: ["swiperank"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // MARK: Public API
        .target(
            name: "SwipeRank",
            dependencies: ["SwipeRankNumerics"],
            swiftSettings: internalChecks
        ),
        .target(
            name: "SwipeRankEvaluation",
            dependencies: ["SwipeRank"],
            swiftSettings: internalChecks
        ),
        .target(
            name: "SwipeRankNumerics",
            dependencies: ["CBLAS"],
            swiftSettings: internalChecks
        ),
        .executableTarget(
            name: "swiperank",
            dependencies: [
                "SwipeRankEvaluation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Implementation details
        .systemLibrary(
            name: "CBLAS",
            pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev", "liblapacke-dev"])]
        ),

        // MARK: Tests
        .testTarget(name: "SwipeRankNumericsTests", dependencies: ["SwipeRankNumerics"]),
        .testTarget(name: "SwipeRankTests", dependencies: ["SwipeRank"]),
        .testTarget(name: "SwipeRankEvaluationTests", dependencies: ["SwipeRankEvaluation"]),
        .testTarget(name: "SwipeRankCLITests", dependencies: ["swiperank"]),
    ],
    swiftLanguageModes: [.v6]
)
