// swift-tools-version: 6.1
//
// libFuzzer targets for every parser that takes data: CSV, profile JSON, schema JSON,
// snapshot JSON, engine configuration and factor model JSON. Its own package, depending on the library by path,
// because it is built with `-sanitize=fuzzer,address` (see scripts/fuzz), which no library
// user or `swift test` build should carry.
//
//   bash scripts/fuzz 60          # build, then run each target for 60 s on its seed corpus

import PackageDescription

let package = Package(
    name: "SwipeRankFuzz",
    dependencies: [
        // Named, so the identity does not depend on the folder the repository was cloned into.
        .package(name: "SwipeRank", path: "../.."),
    ],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "SwipeRank", package: "SwipeRank"),
                                                   .product(name: "SwipeRankColleges", package: "SwipeRank")]),
        .executableTarget(name: "FuzzCSV", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzProfile", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzSchema", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzSnapshot", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzConfiguration", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzFactors", dependencies: ["FuzzSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
