import Foundation

/// A small, fast, seedable random number generator (SplitMix64, Steele et al. 2014).
///
/// Everything random in SwipeRank takes a generator, so runs replay exactly:
///
///     var rng = SplitMix64(seed: 42)
///     let x = Float.random(in: -1...1, using: &rng)
///
/// Not for cryptography.
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable, Codable {
    /// The internal state; the whole generator is this one value.
    public private(set) var state: UInt64

    /// Creates a generator.
    ///
    /// - Parameter seed: Any value; equal seeds give equal sequences.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    ///
    /// - Complexity: O(1).
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A standard normal sample (Box–Muller).
    ///
    /// - Returns: A value from N(0, 1).
    public mutating func nextGaussian() -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

