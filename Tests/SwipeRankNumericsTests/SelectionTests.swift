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
}
