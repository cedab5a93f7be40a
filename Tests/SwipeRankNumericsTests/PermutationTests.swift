import Testing
import SwipeRankNumerics

/// `Array.permute(from:source:)`, which puts a deck's cards in order: the result must be the
/// gather `source.map { old[$0] }` inside the range, the rest untouched, and every element moved,
/// not copied (each object is still referenced by the array alone).
@Suite("Permutation in place")
struct PermutationTests {
    final class Box {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test("equals the gather of its sources, each element held once, the rest as it was", arguments: 0..<60)
    func againstGather(seed: UInt64) {
        var rng = SplitMix64(seed: 7_700 + seed)
        let count = Int.random(in: 0...(seed % 4 == 3 ? 150 : 40), using: &rng)  // past one word of places in a quarter
        let offset = Int.random(in: 0...5, using: &rng)
        let tail = Int.random(in: 0...5, using: &rng)
        // Fixed points in half the seeds (a deck keeps its probes and the cards already in place).
        var source = Array(0..<count).shuffled(using: &rng)
        if seed % 2 == 0 { for j in source.indices where Int.random(in: 0..<3, using: &rng) == 0 { source.swapAt(j, source.firstIndex(of: j)!) } }
        var boxes = (0..<(offset + count + tail)).map { Box($0) }
        let expected = Array(0..<offset) + source.map { offset + $0 } + Array((offset + count)..<(offset + count + tail))
        boxes.permute(from: offset, source: source)
        #expect(boxes.map(\.value) == expected, "seed \(seed)")
        for i in boxes.indices { #expect(isKnownUniquelyReferenced(&boxes[i]), "seed \(seed): element \(i) is referenced more than once") }
    }

    @Test("the identity and the empty permutation change nothing")
    func identity() {
        var values = [3, 1, 2]
        values.permute(source: [0, 1, 2])
        #expect(values == [3, 1, 2])
        values.permute(from: 3, source: [])
        #expect(values == [3, 1, 2])
        values.permute(from: 1, source: [1, 0])
        #expect(values == [3, 2, 1])
    }
}
