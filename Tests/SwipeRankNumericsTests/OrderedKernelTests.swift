import Testing
import SwipeRankNumerics

@Suite("Ordered kernels")
struct OrderedKernelTests {
    @Test("column dot products equal a one-vector loop over j, bit for bit (300 seeded shapes, 0 columns included)")
    func columnDots() {
        var rng = SplitMix64(seed: 47)
        for trial in 0..<300 {
            let f = Int(rng.next() % 40) + 1, n = trial < 5 ? trial : Int(rng.next() % 150)
            // Magnitudes over many orders, so a changed summation order would show in the bits.
            let xt = (0..<f * n).map { _ in Double.random(in: -1...1, using: &rng) * Double(1 << Int(rng.next() % 30)) }
            let v = (0..<f).map { _ in Double.random(in: -1...1, using: &rng) }
            let dots = columnDotsInOrder(xt, columns: n, with: v)
            #expect(dots.count == n)
            for i in 0..<n {
                var reference = 0.0
                for j in 0..<f { reference += v[j] * xt[j * n + i] }
                #expect(dots[i].bitPattern == reference.bitPattern, "f \(f) n \(n) column \(i)")
            }
        }
    }
}
