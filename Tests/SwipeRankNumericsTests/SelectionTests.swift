import Testing
import SwipeRankNumerics

@Suite("Selection")
struct SelectionTests {
    @Test("selectNth puts the sorted element at n, none greater before and none less after; every n, duplicates, runs, sorted and reversed input")
    func everyIndex() {
        var rng = SplitMix64(seed: 11)
        for count in [1, 2, 3, 5, 8, 33, 200] {
            for spread: UInt64 in [1, 2, 3, 1_000] {
                let values = (0..<count).map { _ in Float(rng.next() % spread) }
                let sorted = values.sorted()
                for input in [values, sorted, Array(sorted.reversed())] {
                    for n in 0..<count {
                        var a = input
                        selectNth(n, in: &a, by: <)
                        #expect(a[n] == sorted[n], "count \(count) n \(n)")
                        #expect(a[..<n].allSatisfy { $0 <= a[n] } && a[(n + 1)...].allSatisfy { $0 >= a[n] })
                        #expect(a.sorted() == sorted)  // a permutation
                    }
                }
            }
        }
    }

    @Test("within a range: only the range moves; a descending order selects from the top")
    func range() {
        var rng = SplitMix64(seed: 12)
        for _ in 0..<200 {
            let count = Int(rng.next() % 60) + 1
            let values = (0..<count).map { _ in Double(rng.next() % 9) }
            let lower = Int(rng.next() % UInt64(count)), upper = lower + 1 + Int(rng.next() % UInt64(count - lower))
            let n = lower + Int(rng.next() % UInt64(upper - lower))
            var a = values
            selectNth(n, in: &a, within: lower..<upper, by: >)
            #expect(Array(a[..<lower]) == Array(values[..<lower]) && Array(a[upper...]) == Array(values[upper...]))
            #expect(a[n] == values[lower..<upper].sorted(by: >)[n - lower])
        }
    }

    @Test("values at descending ranks equal a best-first sort's, on ties, runs, infinities, signed zeros and every size around the insertion-sort cut (600 seeded arrays)")
    func descendingRanks() {
        var rng = SplitMix64(seed: 13)
        let palette: [Double] = [-.infinity, -1, -0.0, 0, 0.25, 1, .infinity]
        for trial in 0..<600 {
            let m = trial < 40 ? trial + 1 : Int(rng.next() % 3_000) + 1
            let values: [Double]
            switch trial % 4 {
            case 0: values = (0..<m).map { _ in palette[Int(rng.next() % UInt64(palette.count))] }  // long runs of ties
            case 1: values = [Double](repeating: 0.5, count: m)  // all equal
            case 2: values = (0..<m).map { Double($0) }  // ascending: the worst order for a first pivot
            default: values = (0..<m).map { _ in Double.random(in: -3...3, using: &rng) }
            }
            let sorted = values.sorted(by: >)
            // Up to four ascending ranks, repeats allowed (a tiny sample gives equal positions).
            let ranks = (0..<Int(rng.next() % 5)).map { _ in Int(rng.next() % UInt64(m)) }.sorted()
            let got = valuesAtDescendingRanks(ranks, of: values)
            #expect(got == ranks.map { sorted[$0] }, "trial \(trial) m \(m) ranks \(ranks)")
            #expect(got == quickselectDescending(ranks, of: values), "trial \(trial): the same values as quickselect")
        }
    }

    @Test("with a NaN anywhere, values at descending ranks are quickselect's, and never hang")
    func descendingRanksWithNaN() {
        var rng = SplitMix64(seed: 14)
        for trial in 0..<100 {
            let m = Int(rng.next() % 2_000) + 1
            var values = (0..<m).map { _ in Double.random(in: -1...1, using: &rng) }
            for _ in 0...(trial % 5) { values[Int(rng.next() % UInt64(m))] = .nan }
            let ranks = [0, m / 4, m / 2, m - 1]
            let got = valuesAtDescendingRanks(ranks, of: values), reference = quickselectDescending(ranks, of: values)
            #expect(zip(got, reference).allSatisfy { $0.bitPattern == $1.bitPattern }, "trial \(trial)")
        }
    }

    @Test("through bins and through partitions, each path alone equals a best-first sort: smooth, tied, one far outlier, ulp-narrow and subnormal values (400 seeded arrays)")
    func descendingRanksByBinsAndPartitions() {
        var rng = SplitMix64(seed: 15)
        for trial in 0..<400 {
            let m = Int(rng.next() % 3_000) + 1
            let values: [Double]
            switch trial % 5 {
            case 0: values = (0..<m).map { _ in Double.random(in: -2...2, using: &rng) * Double.random(in: 0...1, using: &rng) }
            case 1: values = (0..<m).map { _ in rng.next() % 4 == 0 ? -0.0 : Double(rng.next() % 6) * 0.5 }  // ties, signed zeros
            case 2: values = (0..<m).map { $0 == m / 3 ? -1e300 : Double.random(in: 0...1, using: &rng) }  // one bin holds the rest
            case 3: values = (0..<m).map { _ in 1e9 + Double(rng.next() % 50) * (1e9 as Double).ulp }
            default: values = (0..<m).map { _ in Double(rng.next() % 9) * Double.leastNonzeroMagnitude }
            }
            let sorted = values.sorted(by: >)
            let ranks = (0..<Int(rng.next() % 5) + 1).map { _ in Int(rng.next() % UInt64(m)) }.sorted()
            let expected = ranks.map { sorted[$0] }
            // Both kernels (the AVX passes where this CPU has them), with the range found here
            // and handed over as a grade scale does.
            for kernel in OrderedKernelTests.kernels {
                for range in [nil, values.min().map { ($0, values.max()!) }] {
                    let binned = valuesAtDescendingRanksByBins(ranks, of: values, range: range, kernel: kernel)
                    // Subnormal gaps overflow the scale: bins decline them (the partitions answer).
                    if trial % 5 == 4 && Set(values).count > 1 {
                        #expect(binned == nil, "trial \(trial): subnormal gaps decline")
                    } else {
                        #expect(binned == expected, "trial \(trial) m \(m) ranks \(ranks) \(kernel): bins")
                    }
                }
            }
            #expect(valuesAtDescendingRanksByPartitions(ranks, of: values) == expected, "trial \(trial): partitions")
        }
        // What bins decline: an infinity, a NaN anywhere, and a width past the greatest finite value.
        #expect(valuesAtDescendingRanksByBins([0], of: [1, .infinity]) == nil)
        #expect(valuesAtDescendingRanksByBins([0], of: [1, 2, .nan]) == nil && valuesAtDescendingRanksByBins([0], of: [.nan, 1, 2]) == nil)
        // A NaN anywhere (first, last or between) declines: the range pass reads its bits.
        for m in [4, 9, 13] {
            for at in 0..<m {
                var values = (0..<m).map { Double($0) }
                values[at] = .nan
                #expect(valuesAtDescendingRanksByBins([0], of: values) == nil, "NaN at \(at) of \(m)")
            }
            // The least and greatest found wherever they stand.
            for at in 0..<m {
                var values = (0..<m).map { _ in 5.0 }
                values[at] = -3
                values[(at + 1) % m] = 11
                #expect(valuesAtDescendingRanksByBins([0, m - 1], of: values) == [11, -3], "extremes at \(at) of \(m)")
            }
        }
        #expect(valuesAtDescendingRanksByBins([1], of: [-.greatestFiniteMagnitude, .greatestFiniteMagnitude]) == nil)
        #expect(valuesAtDescendingRanksByBins([0, 1], of: [3, 3]) == [3, 3])
        #expect(valuesAtDescendingRanksByBins([], of: [3, 1]) == [])
    }
}
