/// The card pool's id → handle map.
///
/// Non-negative `Int` ids — catalog rows, the engine's own case — live in a flat array indexed
/// by the id: one load, no hashing (hashing and probing a Dictionary cost a pool ~160
/// instructions per card, more than the heap itself). Every other id, and `Int` ids too far
/// beyond the pool's size to keep the array small, live in a Dictionary. So memory stays
/// O(cards + 1,024) whatever the ids.
///
/// Invariant: an `Int` id in `0..<dense.count` is only ever in `dense`; when `dense` grows,
/// dictionary entries in the new range move over.
@usableFromInline
struct HandleMap<ID: Hashable & Sendable>: Sendable {
    /// `dense[id]` is the handle of `Int` id `id`, or -1.
    @usableFromInline var dense: ContiguousArray<Int32> = []
    @usableFromInline var sparse: [ID: Int32] = [:]
    /// Ids in the map.
    @usableFromInline var count = 0

    @inlinable init() {}

    /// The array slot of an id, when it is a non-negative `Int` (folds to a no-op check when
    /// specialized for `Int`, and to `nil` for any other id type).
    @inlinable @inline(__always)
    static func denseIndex(_ id: ID) -> Int? {
        guard ID.self == Int.self, let i = id as? Int, i >= 0 else { return nil }
        return i
    }

    @inlinable
    mutating func reserveCapacity(_ n: Int) {
        if ID.self == Int.self { dense.reserveCapacity(n) } else { sparse.reserveCapacity(n) }
    }

    /// The handle of `id`, or nil.
    @inlinable
    subscript(id: ID) -> Int32? {
        if let i = Self.denseIndex(id), i < dense.count {
            let h = dense[i]
            return h >= 0 ? h : nil
        }
        return sparse.isEmpty ? nil : sparse[id]
    }

    /// Adds `id` with `handle` unless it is already present.
    ///
    /// - Returns: The existing handle (nothing changed), or nil when added.
    @inlinable
    mutating func insertIfAbsent(_ id: ID, handle: Int32) -> Int32? {
        if let i = Self.denseIndex(id) {
            if i >= dense.count && i < 2 * count + 1_024 { grow(toInclude: i) }
            if i < dense.count {
                let old = dense[i]
                if old >= 0 { return old }
                dense[i] = handle
                count += 1
                return nil
            }
        }
        if let old = sparse.updateValue(handle, forKey: id) {
            sparse[id] = old
            return old
        }
        count += 1
        return nil
    }

    @inlinable
    mutating func grow(toInclude i: Int) {
        let old = dense.count
        let size = Swift.max(i + 1, 2 * old, 64)
        dense.append(contentsOf: repeatElement(-1, count: size - old))
        guard !sparse.isEmpty else { return }
        for (id, h) in sparse {
            if let j = Self.denseIndex(id), j < size {
                dense[j] = h
                sparse[id] = nil
            }
        }
    }

    /// Removes `id`.
    @inlinable
    mutating func remove(_ id: ID) {
        if let i = Self.denseIndex(id), i < dense.count {
            if dense[i] >= 0 { dense[i] = -1; count -= 1 }
        } else if sparse.removeValue(forKey: id) != nil {
            count -= 1
        }
    }

    /// Every (id, handle), dense ids first (for the invariant checker).
    var entries: [(id: ID, handle: Int32)] {
        var result: [(id: ID, handle: Int32)] = []
        for (i, h) in dense.enumerated() where h >= 0 { result.append((i as! ID, h)) }
        for (id, h) in sparse { result.append((id, h)) }
        return result
    }
}
