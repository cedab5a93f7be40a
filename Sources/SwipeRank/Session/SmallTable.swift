import SwipeRankNumerics

/// A map from `Int` keys to values for the few dozen keys a deck touches (the rows its probes
/// look at, the digests of its explanation sentences): open addressing on a multiplicative mix
/// of the key, at most half full, doubling when it would be more — where a `Dictionary` hashed
/// every key with SipHash on each lookup, a tenth of a deck between the two uses.
struct SmallTable<Value> {
    private var keys: [Int]
    /// nil marks an empty slot (values are never removed).
    private var values: [Value?]
    private var stored = 0

    /// A table with room for `capacity` keys before it first grows.
    init(capacity: Int = 32) {
        var size = 16
        while size < 2 * capacity { size *= 2 }
        keys = [Int](filling: 0, count: size)
        values = [Value?](filling: nil, count: size)
    }

    /// The slot of `key`: where it is, or the empty slot where it would go.
    private func slot(_ key: Int) -> Int {
        let mask = keys.count - 1
        var i = Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(key)) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
        while values[i] != nil && keys[i] != key { i = (i + 1) & mask }
        return i
    }

    /// The value of `key`, if set; setting nil is refused (nothing is removed).
    subscript(key: Int) -> Value? {
        get { values[slot(key)] }
        set {
            guard let newValue else { preconditionFailure("SmallTable: values are not removed") }
            var i = slot(key)
            if values[i] == nil {
                if 2 * (stored + 1) > keys.count {
                    grow()
                    i = slot(key)
                }
                keys[i] = key
                stored += 1
            }
            values[i] = newValue
        }
    }

    /// Twice the slots, every entry placed again.
    private mutating func grow() {
        let (oldKeys, oldValues) = (keys, values)
        keys = [Int](filling: 0, count: 2 * oldKeys.count)
        values = [Value?](filling: nil, count: 2 * oldKeys.count)
        for (key, value) in zip(oldKeys, oldValues) where value != nil {
            let i = slot(key)
            keys[i] = key
            values[i] = value
        }
    }
}
