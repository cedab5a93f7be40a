import Benchmark
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SwipeRank
import SwipeRankNumerics

/// Session state targets of the hardening issue: bytes a live session holds, snapshot size,
/// restore latency.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock], maxDuration: .seconds(3))

    let engine = SwipeEngine(matcher: SchoolMatcher(schools: try! SchoolCatalog(schoolsPath: path("datasets/schools.csv"),
                                                                                majorsPath: path("datasets/school_majors.csv"))))

    // What the allocator holds for 200 live sessions after 20 swipes each, per session
    // (glibc's in-use bytes before and after; the shared engine is loaded before).
    let perSession = BenchmarkMetric.custom("bytes held per live session", polarity: .prefersSmaller, useScalingFactor: false)
    Benchmark("Live session memory, 20 swipes, schools", configuration: .init(metrics: [perSession], maxIterations: 3)) { benchmark in
        for _ in benchmark.scaledIterations {
            let before = inUseBytes()
            var sessions: [SwipeSession<SchoolMatcher>] = []
            for s in 0..<200 { sessions.append(swiped(engine, id: "m\(s)", swipes: 20, seed: UInt64(s))) }
            let after = inUseBytes()
            benchmark.measurement(perSession, (after - before) / sessions.count)
            blackHole(sessions)
        }
    }

    let snapshotBytes = BenchmarkMetric.custom("snapshot JSON bytes", polarity: .prefersSmaller, useScalingFactor: false)
    Benchmark("Snapshot JSON size, 40 swipes, schools", configuration: .init(metrics: [snapshotBytes], maxIterations: 3)) { benchmark in
        for _ in benchmark.scaledIterations {
            let data = try swiped(engine, id: "j", swipes: 40, seed: 4).snapshot().jsonData()
            benchmark.measurement(snapshotBytes, data.count)
        }
    }

    Benchmark("restore(snapshot) after 40 swipes, schools", configuration: .init(maxIterations: 2_000)) { benchmark, snapshot in
        for _ in benchmark.scaledIterations { blackHole(try engine.restore(snapshot)) }
    } setup: {
        swiped(engine, id: "r", swipes: 40, seed: 5).snapshot()
    }

    Benchmark("decode JSON + restore after 40 swipes, schools", configuration: .init(maxIterations: 2_000)) { benchmark, json in
        for _ in benchmark.scaledIterations {
            blackHole(try engine.restore(SessionSnapshot<StudentProfile>.decode(json: json, source: "bench")))
        }
    } setup: {
        try swiped(engine, id: "r", swipes: 40, seed: 5).snapshot().jsonData()
    }
}

func path(_ relative: String) -> String {
    // Benchmarks/Benchmarks/SessionBenchmarks/SessionBenchmarks.swift → the repository root.
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(relative).path
}

func inUseBytes() -> Int {
    #if canImport(Glibc)
    Int(mallinfo2().uordblks)
    #else
    0
    #endif
}

let profile = StudentProfile(
    home: try! GeoPoint(latitude: 42.3601, longitude: -71.0589), homeState: "MA", maxDistanceMiles: 250, annualBudget: 32000,
    sat: 1380, intendedMajors: ["Computer Science", "Business Administration"], sizePreference: .medium,
    settingPreference: .city, academicPriority: 0.7, earningsPriority: 0.6)

/// A session after `swipes` swipes in batches of 10, liking ids divisible by 3.
func swiped(_ engine: SwipeEngine<SchoolMatcher>, id: String, swipes: Int, seed: UInt64) -> SwipeSession<SchoolMatcher> {
    var session = try! engine.session(studentID: id, profile: profile, seed: seed)
    var done = 0
    while done < swipes {
        for card in session.recommendations(count: min(10, swipes - done)).recommendations {
            _ = try! session.recordSwipe(Swipe(swipeID: "\(id)-\(done)", cardID: card.school.id,
                                               action: Int(card.school.id)! % 3 == 0 ? .like : .dislike, timestamp: Int64(done)))
            done += 1
        }
    }
    return session
}
