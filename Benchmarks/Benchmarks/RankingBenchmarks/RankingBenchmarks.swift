// Ranking latency, batch throughput, learning updates and catalog load.
//
// BLAS threads: per-request benchmarks pin OpenBLAS to 1 thread (the library's serving
// policy); batch benchmarks run with 1 and with 2.

import Benchmark
import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 10, maxDuration: .seconds(2), maxIterations: 10_000)

    // MARK: Score + top-k only (one sgemv + a size-k heap), zero allocations in steady state.

    Benchmark("Score+top20 schools 2294x54+4 terms") { (benchmark: Benchmark, input: (MatchStudent, PreferenceWeights)) in
        BLASThreads.count = 1
        let (student, weights) = input
        var workspace = ScoringWorkspace()
        Fixtures.schools.catalog.topItems(k: 20, weights: weights, terms: student.terms, workspace: &workspace)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            Fixtures.schools.catalog.topItems(k: 20, weights: weights, terms: student.terms, workspace: &workspace)
            blackHole(workspace.top)
        }
    } setup: {
        let student = try! Fixtures.engine.matcher.student(Fixtures.bostonStudent)
        return (student, Fixtures.engine.matcher.coldStartWeights(for: student))
    }

    for n in [10_000, 100_000] {
        for d in [32, 64, 128] {
            Benchmark("Score+top20 \(n / 1000)k x \(d)") { (benchmark: Benchmark, input: (Matrix, [Float])) in
                BLASThreads.count = 1
                // Feature-major (d × N), the layout Catalog scores with.
                let (x, w) = input
                var scores = [Float](repeating: 0, count: n)
                var selector = TopKSelector()
                var top: [Int] = []
                x.multiplyTransposed(w, into: &scores)
                selector.select(k: 20, from: scores, into: &top)
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    x.multiplyTransposed(w, into: &scores)
                    selector.select(k: 20, from: scores, into: &top)
                    blackHole(top)
                }
            } setup: {
                let (x, w) = Fixtures.synthetic(rows: n, columns: d)
                return (x.transposed, w)
            }
        }
    }

    // The bound for 100k items: one streaming read of the same bytes (a SIMD sum).
    for d in [32, 64, 128] {
        Benchmark("Stream read 100k x \(d) (bound)") { (benchmark: Benchmark, x: Matrix) in
            for _ in benchmark.scaledIterations {
                let sum = x.withUnsafeBufferPointer { buffer -> Float in
                    // Four independent accumulators, 64 floats per step: as fast as this core reads.
                    var a0 = SIMD16<Float>(), a1 = SIMD16<Float>(), a2 = SIMD16<Float>(), a3 = SIMD16<Float>()
                    let raw = UnsafeRawPointer(buffer.baseAddress!)
                    var offset = 0
                    let end = (buffer.count / 64) * 64 * 4
                    while offset < end {
                        a0 += raw.loadUnaligned(fromByteOffset: offset, as: SIMD16<Float>.self)
                        a1 += raw.loadUnaligned(fromByteOffset: offset + 64, as: SIMD16<Float>.self)
                        a2 += raw.loadUnaligned(fromByteOffset: offset + 128, as: SIMD16<Float>.self)
                        a3 += raw.loadUnaligned(fromByteOffset: offset + 192, as: SIMD16<Float>.self)
                        offset += 256
                    }
                    return (a0 + a1 + a2 + a3).sum()
                }
                blackHole(sum)
            }
        } setup: { Fixtures.synthetic(rows: 100_000, columns: d).0 }
    }

    // MARK: Batch: 256 students, sgemm + top-k per student vs plain sgemm.

    for threads in [1, 2] {
        Benchmark("Batch 256 x 10k x 64 sgemm+top20 (\(threads) thr)") { (benchmark: Benchmark, input: (Matrix, Matrix)) in
            // Blocked: 16 students per sgemm, then top-k of their rows while still in cache.
            let (w, x) = input
            BLASThreads.count = threads
            var selector = TopKSelector()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(selector.topK(k: 20, weights: w, items: x))
            }
            benchmark.stopMeasurement()
            BLASThreads.count = 1
        } setup: { (Fixtures.synthetic(rows: 256, columns: 64, seed: 5).0, Fixtures.synthetic(rows: 10_000, columns: 64).0.transposed) }

        Benchmark("Batch 256 x 10k x 64 plain sgemm (\(threads) thr)") { (benchmark: Benchmark, input: (Matrix, Matrix)) in
            let (w, x) = input
            BLASThreads.count = threads
            var scores = Matrix(rows: 256, columns: x.columns)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                w.multiply(x, into: &scores)
                blackHole(scores[0, 0])
            }
            benchmark.stopMeasurement()
            BLASThreads.count = 1
        } setup: { (Fixtures.synthetic(rows: 256, columns: 64, seed: 5).0, Fixtures.synthetic(rows: 10_000, columns: 64).0.transposed) }
    }

    // Where the batch's time goes: the same 64-student sgemm blocks without the selection, and
    // one full sgemm followed by a selection per row.
    Benchmark("Batch 256 x 10k x 64 blocked sgemm only (1 thr)") { (benchmark: Benchmark, input: (Matrix, Matrix)) in
        let (w, x) = input
        BLASThreads.count = 1
        var block = Matrix(rows: 64, columns: x.columns)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            for start in stride(from: 0, to: 256, by: 64) {
                let slice = Matrix(rows: 64, columns: w.columns, elements: w.elements[(start * w.columns)..<((start + 64) * w.columns)])
                slice.multiply(x, into: &block)
                blackHole(block[0, 0])
            }
        }
        benchmark.stopMeasurement()
    } setup: { (Fixtures.synthetic(rows: 256, columns: 64, seed: 5).0, Fixtures.synthetic(rows: 10_000, columns: 64).0.transposed) }

    Benchmark("Batch 256 x 10k x 64 full sgemm then top20 per row (1 thr)") { (benchmark: Benchmark, input: (Matrix, Matrix)) in
        let (w, x) = input
        BLASThreads.count = 1
        var scores = Matrix(rows: 256, columns: x.columns)
        var selector = TopKSelector()
        var top: [Int] = []
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            w.multiply(x, into: &scores)
            scores.withUnsafeBufferPointer { all in
                for r in 0..<256 {
                    selector.select(k: 20, from: UnsafeBufferPointer(rebasing: all[(r * x.columns)..<((r + 1) * x.columns)]), into: &top)
                    blackHole(top.count)
                }
            }
        }
        benchmark.stopMeasurement()
    } setup: { (Fixtures.synthetic(rows: 256, columns: 64, seed: 5).0, Fixtures.synthetic(rows: 10_000, columns: 64).0.transposed) }

    // MARK: End to end: a session's recommendations (re-score after a swipe, bands, probe, cards).
    //
    // One session per benchmark serves batch after batch; each sample first records a swipe
    // (not measured) so the measured call re-scores every unseen card, as in real use.

    // "factors f=32": the shipped schools with a collaborative model (one more sgemv per deck).
    for (label, makeEngine) in [("schools 2294", { Fixtures.engine }), ("schools 2294, factors f=32", { Fixtures.factorEngine }),
                                ("synthetic 10k", { SwipeEngine(matcher: SchoolMatcher(schools: Fixtures.syntheticSchools(rows: 10_000))) }),
                                ("synthetic 100k", { SwipeEngine(matcher: SchoolMatcher(schools: Fixtures.syntheticSchools(rows: 100_000))) })] {
        for count in [10, 20] {
            Benchmark("recommendations(\(count)) after a swipe, \(label)",
                      configuration: .init(warmupIterations: 2, maxDuration: .seconds(3), maxIterations: 100)) { (benchmark: Benchmark, box: Box<SwipeSession<SchoolMatcher>>) in
                BLASThreads.count = 1
                let last = box.value.served.last!
                _ = try box.value.recordSwipe(Swipe(swipeID: "\(last.position)", cardID: last.cardID, action: .like,
                                                    timestamp: Int64(last.position)))
                benchmark.startMeasurement()
                blackHole(box.value.recommendations(count: count))
                benchmark.stopMeasurement()
            } setup: {
                let engine = makeEngine()
                // Synthetic catalogs have no programs file, so the student names no majors there.
                var profile = Fixtures.bostonStudent
                if engine.matcher.schools.majors.offerings.isEmpty { profile.intendedMajors = [] }
                let box = Box(try! engine.session(studentID: "b", profile: profile, seed: 1))
                _ = box.value.recommendations(count: 1)
                return box
            }
        }
    }

    // MARK: Learning updates.

    Benchmark("recordSwipe schools D=58, swipes 1-30 (rank-1)", configuration: .init(warmupIterations: 0, maxIterations: 30)) { (benchmark: Benchmark, box: Box<SwipeSession<SchoolMatcher>>) in
        BLASThreads.count = 1
        let card = box.value.recommendations(count: 1).recommendations[0]
        benchmark.startMeasurement()
        blackHole(try box.value.recordSwipe(Swipe(swipeID: card.item.id, cardID: card.item.id, action: .dislike, timestamp: 1)))
        benchmark.stopMeasurement()
    } setup: { Box(try! Fixtures.engine.session(studentID: "r", profile: Fixtures.bostonStudent, seed: 2)) }

    // The stable phase, without and with a collaborative model of f = 32 factors (one more
    // O(f²) rank-1 update per swipe), side by side.
    for (label, engine) in [("", { Fixtures.engine }), (", factors f=32", { Fixtures.factorEngine })] {
        Benchmark("recordSwipe schools D=58, stable (forgetting, refactor)\(label)", configuration: .init(maxIterations: 500)) { (benchmark: Benchmark, box: Box<SwipeSession<SchoolMatcher>>) in
            BLASThreads.count = 1
            let card = box.value.recommendations(count: 1).recommendations[0]
            benchmark.startMeasurement()
            blackHole(try box.value.recordSwipe(Swipe(swipeID: card.item.id, cardID: card.item.id, action: .dislike, timestamp: 1)))
            benchmark.stopMeasurement()
        } setup: {
            let box = Box(try! engine().session(studentID: "r", profile: Fixtures.bostonStudent, seed: 3))
            for card in box.value.recommendations(count: 31).recommendations {
                _ = try! box.value.recordSwipe(Swipe(swipeID: card.item.id, cardID: card.item.id, action: .like, timestamp: 0))
            }
            return box
        }
    }

    for d in [32, 64, 128] {
        for (label, forgetting) in [("rank-1", 1.0), ("forgetting", 0.97)] {
            Benchmark("PreferenceModel.observe D=\(d) \(label)", configuration: .init(maxIterations: 5_000)) { (benchmark: Benchmark, input: (Box<PreferenceModel>, [Double])) in
                BLASThreads.count = 1
                let (box, z) = input
                benchmark.startMeasurement()
                try box.value.observe(z, liked: true, forgetting: forgetting)
                benchmark.stopMeasurement()
                blackHole(box.value.mean[0])
            } setup: {
                var rng = SplitMix64(seed: UInt64(d))
                var model = PreferenceModel(priorMean: (0..<d).map { _ in Float.random(in: -1...1, using: &rng) },
                                            priorPrecision: 3, calibration: .default)
                for _ in 0..<20 { try! model.observe((0..<d).map { _ in Double.random(in: -1...1, using: &rng) }, liked: Bool.random(using: &rng)) }
                return (Box(model), (0..<d).map { _ in Double.random(in: -0.3...0.3, using: &rng) })
            }
        }
    }

    // MARK: Catalog load.

    Benchmark("Load schools.csv + school_majors.csv", configuration: .init(maxDuration: .seconds(5), maxIterations: 50)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try SchoolCatalog(schoolsPath: Fixtures.schoolsPath, majorsPath: Fixtures.majorsPath))
        }
    }
}

/// Mutable state that persists across samples, mutated in place (no copy-on-write inside a
/// measurement).
final class Box<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
