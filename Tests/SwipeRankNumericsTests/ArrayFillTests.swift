import Testing
import SwipeRankNumerics

/// `Array(filling:count:)`, which the deck's small arrays are made with: the same array as
/// `Array(repeating:count:)` for values, optionals and references, with room for its elements.
@Suite("Array filled by reserve and append")
struct ArrayFillTests {
    final class Box {}

    @Test("equals Array(repeating:count:)", arguments: 0..<40)
    func equalsRepeating(seed: UInt64) {
        var rng = SplitMix64(seed: 9_100 + seed)
        let count = seed < 3 ? Int(seed) : Int.random(in: 0...(seed % 5 == 0 ? 5_000 : 64), using: &rng)
        let float = Float.random(in: -3...3, using: &rng)
        #expect([Float](filling: float, count: count) == [Float](repeating: float, count: count), "seed \(seed)")
        let byte = Int8.random(in: .min ... .max, using: &rng)
        #expect([Int8](filling: byte, count: count) == [Int8](repeating: byte, count: count), "seed \(seed)")
        let optional: String? = seed % 2 == 0 ? nil : "reason \(seed)"
        let strings = [String?](filling: optional, count: count)
        #expect(strings == [String?](repeating: optional, count: count), "seed \(seed)")
        #expect(strings.capacity >= count)
    }

    @Test("a reference is held once per element")
    func references() {
        var box = Box()
        var boxes: [Box]? = [Box](filling: box, count: 7)
        #expect(boxes?.allSatisfy { $0 === box } == true)
        #expect(!isKnownUniquelyReferenced(&box))
        boxes = nil
        #expect(isKnownUniquelyReferenced(&box))
    }
}

/// `Array.prefetch(rows:width:)`, a hint a deck gives for the cards it will build: any rows, in
/// or out of the array, are accepted and change nothing.
@Suite("Prefetch hints")
struct PrefetchTests {
    @Test("any rows of any array, those outside left out, change nothing", arguments: 0..<20)
    func anyRows(seed: UInt64) {
        var rng = SplitMix64(seed: 9_300 + seed)
        let values = (0..<Int.random(in: 0...300, using: &rng)).map { _ in Double.random(in: -1...1, using: &rng) }
        let copy = values
        for _ in 0..<50 {
            let width = Int.random(in: 0...4, using: &rng)
            let rows = (0..<Int.random(in: 0...12, using: &rng)).map { _ in Int.random(in: -10...(values.count + 10), using: &rng) }
            values.prefetch(rows: rows, width: width)
        }
        let contiguous = ContiguousArray(values)
        contiguous.prefetch(rows: [-1, 0, values.count / 2, values.count, Int.max / 8], width: 2)
        let slice = contiguous[(values.count / 3)...]  // rows count from the slice's first element
        slice.prefetch(rows: [-1, 0, slice.count - 1, slice.count], width: 1)
        #expect(values == copy && Array(contiguous) == copy && Array(slice) == Array(copy[(values.count / 3)...]), "seed \(seed)")
    }
}
