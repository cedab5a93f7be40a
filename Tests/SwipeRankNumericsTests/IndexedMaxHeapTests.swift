import Testing
import SwipeRankNumerics

@Suite("Indexed 4-ary max-heap")
struct IndexedMaxHeapTests {
    @Test("random inserts, updates, removals and re-scores drain in reference order", arguments: 0..<50)
    func randomized(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var heap = IndexedMaxHeap<Float>()
        var reference: [Int: Float] = [:]
        for handle in 0..<Int.random(in: 0...300, using: &rng) {
            let s = Float(Int.random(in: 0...20, using: &rng))
            heap.insert(handle: handle, score: s)
            reference[handle] = s
        }
        for _ in 0..<200 {
            guard let handle = reference.keys.randomElement(using: &rng) else { break }
            switch Int.random(in: 0..<3, using: &rng) {
            case 0:
                let s = Float(Int.random(in: -5...25, using: &rng))
                heap.update(handle: handle, score: s)
                reference[handle] = s
            case 1:
                #expect(heap.remove(handle: handle) == reference.removeValue(forKey: handle))
            default:
                #expect(heap.remove(handle: handle + 10_000) == nil)
            }
            heap._checkInvariants()
        }
        if Bool.random(using: &rng) {
            heap.rescoreAll { h, s in s - Float(h % 3) }
            for (h, s) in reference { reference[h] = s - Float(h % 3) }
        }
        let order = reference.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }
        #expect(heap.top(10).map(\.handle) == order.prefix(10).map(\.key), "seed \(seed)")
        var drained: [Int] = []
        while let top = heap.popMax() { drained.append(top.handle) }
        #expect(drained == order.map(\.key), "seed \(seed)")
    }
}
