// swift-tools-version: 6.1
//
// SwipeRank: a matching and recommendation engine for swipe-based apps.
//
// Layering (each arrow is the only allowed direction of `import`):
//   swiperank (CLI) → SwipeRankEvaluation → SwipeRankColleges → SwipeRank (engine) →
//                                                 SwipeRankNumerics → CBLAS, CSwipeRankKernels
//   swiperank (CLI) → SwipeRankServer (HTTP) → SwipeRankStore (SQLite) → SwipeRank (engine)
//                     SwipeRankServer → SwipeRankColleges (the college catalog it can serve)
//   swiperank (CLI) → SwipeRankPostgres (PostgreSQL) → SwipeRankStore (the protocols)
// The engine knows nothing of HTTP or SQL; the server talks to storage only through the
// store protocol.
//
// Benchmarks live in Benchmarks/ as their own package, so neither library users nor
// `swift test` build the benchmark harness.

import PackageDescription

// Invariant checkers (heap order, position maps) run after every mutation when this is set.
// The test scripts set SWIPERANK_INTERNAL_CHECKS=1; library users never pay for them.
//
// The test scripts' debug build also optimizes this package's own modules (`-O`, testability
// kept; dependencies stay unoptimized, their debug build being the slow part of a cold build):
// the whole suite ran 430–520 s with them at -Onone, about 95 s optimized. Only under the
// variable, so the package as a dependency carries no unsafe flags (CONTRIBUTING.md).
let testing = Context.environment["SWIPERANK_INTERNAL_CHECKS"] == "1"
let internalChecks: [SwiftSetting] =
    testing ? [.define("SWIPERANK_INTERNAL_CHECKS"), .unsafeFlags(["-O"], .when(configuration: .debug))] : []
/// The same for the C kernels and the command-line tool. (Not for the test targets: optimized,
/// their task groups of tuples from typed-throws children crashed in two full runs of three,
/// never at -Onone — a miscompile of test-only code as far as we can tell — and they need no
/// speed.)
let optimizedKernels: [CSetting] = testing ? [.unsafeFlags(["-O2"], .when(configuration: .debug))] : []
let optimizedTool: [SwiftSetting] = testing ? [.unsafeFlags(["-O"], .when(configuration: .debug))] : []

let package = Package(
    name: "SwipeRank",
    products: [
        .library(name: "SwipeRank", targets: ["SwipeRank"]),
        .library(name: "SwipeRankColleges", targets: ["SwipeRankColleges"]),
        .library(name: "SwipeRankEvaluation", targets: ["SwipeRankEvaluation"]),
        .library(name: "SwipeRankNumerics", targets: ["SwipeRankNumerics"]),
        .library(name: "SwipeRankStore", targets: ["SwipeRankStore"]),
        .library(name: "SwipeRankServer", targets: ["SwipeRankServer"]),
        .library(name: "SwipeRankPostgres", targets: ["SwipeRankPostgres"]),
        .executable(name: "swiperank", targets: ["swiperank"]),
        // A typed HTTP client of the service, generated from its OpenAPI description.
        .library(name: "SwipeRankClient", targets: ["SwipeRankClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-crypto", "4.1.0"..<"6.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        // `swift package generate-documentation` (scripts/docs). A command plugin: it and its
        // SymbolKit build only when invoked, never into `swift build` or `swift test`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: Public API
        .target(
            name: "SwipeRank",
            dependencies: ["SwipeRankNumerics"],
            swiftSettings: internalChecks
        ),
        // The college domain (profiles, majors, cold start, explanations, feedback questions):
        // one `Matcher` on top of an engine that knows items, not schools — where a new
        // catalog domain goes.
        .target(
            name: "SwipeRankColleges",
            dependencies: ["SwipeRank", "SwipeRankNumerics"],
            swiftSettings: internalChecks
        ),
        .target(
            name: "SwipeRankEvaluation",
            dependencies: ["SwipeRank", "SwipeRankColleges"],
            swiftSettings: internalChecks
        ),
        .target(
            name: "SwipeRankNumerics",
            dependencies: ["CBLAS", "CSwipeRankKernels"],
            swiftSettings: internalChecks
        ),
        .target(
            name: "SwipeRankStore",
            dependencies: [
                "SwipeRank",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: internalChecks
        ),
        .target(
            name: "SwipeRankServer",
            dependencies: [
                "SwipeRank",
                "SwipeRankColleges",
                "SwipeRankStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            exclude: ["openapi.yaml", "Web", "Docs"],
            swiftSettings: internalChecks
        ),
        // Its own module, so users of the SQLite store never build postgres-nio's dependencies
        // into their code paths, and the server stays free of SQL.
        .target(
            name: "SwipeRankPostgres",
            dependencies: [
                "SwipeRankStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: internalChecks
        ),
        .executableTarget(
            name: "swiperank",
            dependencies: [
                "SwipeRankEvaluation",
                "SwipeRankServer",
                "SwipeRankPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `bare-route` only: the load script's HTTP ceiling (the server already builds it).
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: optimizedTool
        ),

        // The service's HTTP client: code generated from openapi.yaml (committed, regenerated by
        // scripts/generate-client, so builds need no generator) and a thin layer over it. It
        // knows nothing of the server or the engine: apps depend on it alone.
        .target(
            name: "SwipeRankClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            exclude: ["Generated/openapi.sha256"]
        ),

        // MARK: Implementation details
        // C only for what Swift cannot say: a function compiled for AVX, called after a CPU
        // check (see kernels.c). No flags of its own (the test scripts' -O2 is under
        // SWIPERANK_INTERNAL_CHECKS only), so the package stays usable as a dependency.
        .target(name: "CSwipeRankKernels", cSettings: optimizedKernels),
        .systemLibrary(
            name: "CBLAS",
            pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev", "liblapacke-dev"])]
        ),

        // MARK: Tests
        .testTarget(name: "SwipeRankNumericsTests", dependencies: ["SwipeRankNumerics"]),
        // Fixtures/ holds files the tests read by path (a numpy-written factor model).
        // SwipeRankEvaluation for its generated catalogs (`SyntheticCatalog`) only.
        .testTarget(name: "SwipeRankTests", dependencies: ["SwipeRank", "SwipeRankColleges", "SwipeRankEvaluation"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "SwipeRankEvaluationTests", dependencies: ["SwipeRankEvaluation"]),
        .testTarget(name: "SwipeRankCLITests", dependencies: ["swiperank"]),
        .testTarget(name: "SwipeRankStoreTests", dependencies: [
            "SwipeRankStore", "SwipeRankPostgres", .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(
            name: "SwipeRankServerTests",
            dependencies: [
                "SwipeRankServer",
                "SwipeRankNumerics",
                "SwipeRankEvaluation",  // the scheduled refit's tests fit with FactorFit
                "SwipeRankPostgres",  // and share a PostgreSQL database between two instances
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ],
            exclude: ["Golden"]
        ),
        // Drives the real service, started in-process, through SwipeRankClient over URLSession.
        .testTarget(
            name: "SwipeRankClientTests",
            dependencies: [
                "SwipeRankClient",
                "SwipeRankServer",
                "SwipeRankStore",
                "SwipeRank",
                "SwipeRankColleges",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
