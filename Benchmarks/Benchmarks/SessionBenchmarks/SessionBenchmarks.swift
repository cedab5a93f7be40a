import Benchmark
import Foundation
import MallocInfo
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

/// Session state targets of the hardening issue: bytes a live session holds, snapshot size,
/// restore latency.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock], maxDuration: .seconds(3))

    let engine = SwipeEngine(matcher: SchoolMatcher(schools: try! SchoolCatalog(schoolsPath: path("datasets/schools.csv"),
                                                                                majorsPath: path("datasets/school_majors.csv"))))

    // What 500 live sessions after 20 swipes each hold, per session: the allocator's bytes in
    // use before and after building them (the shared engine is loaded before; transient
    // buffers are freed by then). The process's resident set cannot show it: pages freed by
    // the catalog load are reused, so it barely moves.
    let perSession = BenchmarkMetric.custom("heap bytes per live session", polarity: .prefersSmaller, useScalingFactor: false)
    Benchmark("Live session memory, 20 swipes, schools", configuration: .init(metrics: [perSession], maxIterations: 3)) { benchmark in
        for _ in benchmark.scaledIterations {
            _ = swiped(engine, id: "warm", swipes: 20, seed: 0)
            let before = Int(swiperank_heap_bytes_in_use())
            var sessions: [SwipeSession<SchoolMatcher>] = []
            for s in 0..<500 { sessions.append(swiped(engine, id: "m\(s)", swipes: 20, seed: UInt64(s))) }
            let after = Int(swiperank_heap_bytes_in_use())
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
            _ = try! session.recordSwipe(Swipe(swipeID: "\(id)-\(done)", cardID: card.item.id,
                                               action: Int(card.item.id)! % 3 == 0 ? .like : .dislike, timestamp: Int64(done)))
            done += 1
        }
    }
    return session
}
