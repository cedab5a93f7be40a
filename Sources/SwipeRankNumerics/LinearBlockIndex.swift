import Foundation
import Synchronization

// Exact top-k of a linear score over many rows without reading them all: rows grouped into
// blocks of similar feature vectors, each block with its per-column minima and maxima, so no
// row of a block can score above Σⱼ max(wⱼ·minⱼ, wⱼ·maxⱼ) (+ the block's largest offset). That
// bound is computed in Float with the very operations, in the very order, that score a row
// (0 + w₀x₀ + w₁x₁ + …), and Float multiplication by a fixed weight and Float addition are
// monotone, so the bound is never below any row's Float score: no rounding slack is needed,
// and a block whose bound equals the k-th best kept score is skipped when all its rows are
// higher than that row (ties go to the lower row). Exact by construction.

/// A catalog's rows grouped into blocks of similar feature vectors, with each block's
/// per-column minima and maxima: an exact top-k of any linear score visits only the blocks
/// whose bound can still beat the rows kept so far.
///
/// Blocks are the leaves of a k-d tree: a range of rows is split at the median of its widest
/// column until it holds at most `blockSize` rows, so a block's rows agree on their categorical
/// columns and lie close on the numeric ones, which keeps the bounds tight for any weights.
/// Within a block the rows are in ascending order. The features are copied in block order
/// (row-major, contiguous), so a visited block is read sequentially.
///
///     let index = LinearBlockIndex(features: catalog.features)
///     var kept = BoundedTopList(capacity: 20)
///     index.search(weights: w, constants: [], offsets: nil, into: &kept) { row in !served.contains(row) }
public struct LinearBlockIndex: Sendable {
    /// The rows indexed.
    public let rowCount: Int
    /// Feature columns per row.
    public let dimension: Int
    /// The row at each position; block b holds the positions `blockStarts[b] ..< blockStarts[b + 1]`.
    public let rowAtPosition: [Int32]
    let blockStarts: [Int]
    /// The features in position order, row-major (read in place from a cache file's mapping
    /// when the index came from one).
    package let values: FloatValues
    /// Per block, per column (blocks × dimension).
    package let minima: [Float]
    package let maxima: [Float]

    /// The number of blocks.
    public var blockCount: Int { blockStarts.count - 1 }

    /// Groups the rows of a row-major feature matrix into blocks.
    ///
    /// - Parameters:
    ///   - features: One row per item (finite values).
    ///   - blockSize: The most rows per block, ≥ 1 (256: a block's bound costs d operations, its
    ///     scan 256·d; measured at 10⁵ and 10⁶ items, see Benchmarks/Scale).
    /// - Complexity: O(N × d × log(N / blockSize)) expected, on up to four threads; O(N × d)
    ///   memory.
    public init(features: Matrix, blockSize: Int = 256) {
        self.init(features: features, checkedLayout: Self.layout(features: features, blockSize: blockSize))
    }

    /// The blocks `init(features:blockSize:)` makes, without building the index: what a
    /// catalog cache stores (`CatalogCache`).
    ///
    /// - Complexity: as `init(features:blockSize:)`, without its O(N × d) copy.
    public static func layout(features: Matrix, blockSize: Int = 256) -> Layout {
        precondition(blockSize >= 1, "blockSize must be at least 1")
        let n = features.rows, d = features.columns
        var order = Array(0..<n)
        var starts: [Int] = []
        features.withUnsafeBufferPointer { x in
            order.withUnsafeMutableBufferPointer { order in
                let splitter = BlockSplitter(x: x, d: d, order: order, blockSize: blockSize)
                // The first two levels here, then each of the (up to) four subtrees on its own
                // thread: they own disjoint parts of `order`, and each is split exactly as the
                // sequential depth-first pass would, so the index is the same.
                var frontier: [(range: Range<Int>, isLeaf: Bool)] = n > 0 ? [(0..<n, false)] : []
                for _ in 0..<2 {
                    frontier = frontier.flatMap { item -> [(range: Range<Int>, isLeaf: Bool)] in
                        guard !item.isLeaf else { return [item] }
                        guard let (lower, upper) = splitter.split(item.range) else { return [(item.range, true)] }
                        return [(lower, false), (upper, false)]
                    }
                }
                let parts = Mutex([[Int]](repeating: [], count: frontier.count))
                let items = frontier
                DispatchQueue.concurrentPerform(iterations: items.count) { i in
                    let found = items[i].isLeaf ? splitter.blockStarts(leaf: items[i].range) : splitter.blocks(of: items[i].range)
                    parts.withLock { $0[i] = found }
                }
                starts = parts.withLock { $0.flatMap { $0 } }
            }
        }
        starts.append(n)
        return Layout(rowAtPosition: order.map { Int32($0) }, blockStarts: starts)
    }

    /// Which rows form which block, in position order: all an index is besides copies of the
    /// features (`init(features:layout:)` rebuilds the rest in one pass). The splitting is
    /// what costs, so a catalog cache stores this (`CatalogCache`) and a start skips it.
    public struct Layout: Sendable, Hashable {
        /// The row at each position (a permutation of `0..<N`, ascending within each block).
        public let rowAtPosition: [Int32]
        /// Block b holds positions `blockStarts[b] ..< blockStarts[b + 1]`: strictly increasing
        /// from 0 to N (just `[0]` for no rows).
        public let blockStarts: [Int]

        /// Creates a layout (`problem(rowCount:)` says whether it is one).
        public init(rowAtPosition: [Int32], blockStarts: [Int]) {
            self.rowAtPosition = rowAtPosition
            self.blockStarts = blockStarts
        }

        /// What is wrong with this as the layout of `rowCount` rows, or nil.
        ///
        /// - Complexity: O(N).
        public func problem(rowCount n: Int) -> String? {
            guard rowAtPosition.count == n else { return "\(rowAtPosition.count) positions for \(n) rows" }
            guard blockStarts.first == 0, blockStarts.last == n, n == 0 || blockStarts.count >= 2 else {
                return "the block starts do not run from 0 to \(n)"
            }
            var seen = [Bool](repeating: false, count: n)
            for b in 0..<(blockStarts.count - 1) {
                guard blockStarts[b] < blockStarts[b + 1] else { return "block \(b) is empty or out of order" }
                var previous = -1
                for p in blockStarts[b]..<blockStarts[b + 1] {
                    let row = Int(rowAtPosition[p])
                    guard row >= 0, row < n, !seen[row] else { return "position \(p): row \(row) is not a row, or twice" }
                    guard row > previous else { return "block \(b): rows not ascending at position \(p)" }
                    seen[row] = true
                    previous = row
                }
            }
            return nil
        }
    }

    /// The index's layout, to store beside the catalog.
    public var layout: Layout { Layout(rowAtPosition: rowAtPosition, blockStarts: blockStarts) }

    /// The index of `features` grouped as `layout` says, without splitting: the same index as
    /// `init(features:blockSize:)` when the layout is that index's (a search is exact for any
    /// valid layout; a layout only decides how many blocks a search visits).
    ///
    /// - Parameters:
    ///   - features: One row per item.
    ///   - layout: A valid layout of `features.rows` rows (`Layout.problem(rowCount:)` is nil).
    /// - Complexity: O(N × d).
    public init(features: Matrix, layout: Layout) {
        if let problem = layout.problem(rowCount: features.rows) { preconditionFailure("LinearBlockIndex: not a layout: \(problem)") }
        self.init(features: features, checkedLayout: layout)
    }

    /// An index from the parts another one was made of (`layout`, `values`, `minima`,
    /// `maxima`: what a catalog cache stores), without reading the features: a start of ten
    /// million items spent a fifth of its time gathering them into block order.
    ///
    /// The parts are taken as they are: a search is exact only when they are an index's (the
    /// features by position, and bounds that hold every block's values), which the caller
    /// vouches for (the cache's checksum).
    ///
    /// - Parameters:
    ///   - layout: A layout whose `problem(rowCount:)` the caller has checked is nil.
    ///   - dimension: Feature columns per row.
    ///   - values: rows × `dimension` features by position.
    ///   - minima: blocks × `dimension` per-block minima.
    ///   - maxima: blocks × `dimension` per-block maxima.
    package init(checkedLayout layout: Layout, dimension: Int, values: FloatValues, minima: [Float], maxima: [Float]) {
        let n = layout.rowAtPosition.count, blocks = layout.blockStarts.count - 1
        precondition(values.count == n * dimension && minima.count == blocks * dimension && maxima.count == blocks * dimension,
                     "LinearBlockIndex: parts of different sizes")
        rowCount = n
        self.dimension = dimension
        rowAtPosition = layout.rowAtPosition
        blockStarts = layout.blockStarts
        self.values = values
        self.minima = minima
        self.maxima = maxima
    }

    /// The features copied in block order and each block's per-column minima and maxima.
    private init(features: Matrix, checkedLayout layout: Layout) {
        let n = features.rows, d = features.columns, starts = layout.blockStarts, order = layout.rowAtPosition
        rowCount = n
        dimension = d
        blockStarts = starts
        rowAtPosition = order
        let blocks = starts.count - 1
        var minima = [Float](repeating: .infinity, count: blocks * d)
        var maxima = [Float](repeating: -.infinity, count: blocks * d)
        let values = features.withUnsafeBufferPointer { x in
            FloatValues(count: n * d) { values in
                minima.withUnsafeMutableBufferPointer { minima in
                    maxima.withUnsafeMutableBufferPointer { maxima in
                        let gather = BlockGather(x: x, d: d, order: order, starts: starts, values: values, minima: minima, maxima: maxima)
                        // Runs of blocks on every core: each writes its own blocks' positions
                        // and bounds (a start from a cached layout is this pass, memory-bound
                        // at ten million items).
                        let chunks = min(blocks, 4 * max(1, ProcessInfo.processInfo.activeProcessorCount))
                        DispatchQueue.concurrentPerform(iterations: chunks) { c in
                            gather.run(blocks: (blocks * c / chunks)..<(blocks * (c + 1) / chunks))
                        }
                    }
                }
            }
        }
        self.values = values
        self.minima = minima
        self.maxima = maxima
    }

    /// A per-row value laid out by position, with each block's largest: an additive term of
    /// the score the search bounds per block (a population's item offsets).
    ///
    /// - Parameter perRow: One finite value per row.
    /// - Returns: The values by position and the block maxima.
    /// - Complexity: O(N).
    public func column(_ perRow: [Float]) -> BlockColumn {
        precondition(perRow.count == rowCount, "column: \(perRow.count) values for \(rowCount) rows")
        let byPosition = rowAtPosition.map { perRow[Int($0)] }
        let maxima = (0..<blockCount).map { b in byPosition[blockStarts[b]..<blockStarts[b + 1]].max() ?? -.infinity }
        return BlockColumn(byPosition: byPosition, blockMaxima: maxima)
    }

    /// Per-row codes laid out by position (the region of each row, for a per-region bonus).
    ///
    /// - Parameter perRow: One code per row.
    /// - Returns: The codes by position.
    public func codes(_ perRow: [Int32]) -> [Int32] {
        precondition(perRow.count == rowCount, "codes: \(perRow.count) codes for \(rowCount) rows")
        return rowAtPosition.map { perRow[Int($0)] }
    }

    /// The score of one row as the in-order catalog scan computes it: `0 + Σⱼ wⱼ·xⱼ` in column
    /// order, skipping zero weights (`Matrix.multiplyTransposedInOrder`).
    ///
    /// - Parameters:
    ///   - features: The row-major features (the same matrix the index was built from).
    ///   - row: The row.
    ///   - weights: `dimension` weights.
    /// - Returns: The score, bit-identical to the scan's.
    /// - Complexity: O(d).
    public static func dot(_ features: Matrix, row: Int, _ weights: [Float]) -> Float {
        precondition(weights.count == features.columns && row >= 0 && row < features.rows, "dot: row or weights out of range")
        return features.withUnsafeBufferPointer { dot($0, from: row * weights.count, weights) }
    }

    /// `dot(_:row:_:)` over row-major values, the row starting at `base` (a permuted store's
    /// position × d, `FeatureRows`): the caller has checked the range.
    @inline(__always)
    static func dot(_ x: UnsafeBufferPointer<Float>, from base: Int, _ weights: [Float]) -> Float {
        weights.withUnsafeBufferPointer { w in
            var sum: Float = 0
            for j in 0..<w.count where w[j] != 0 { sum = sum + w[j] * x[base &+ j] }
            return sum
        }
    }

    /// `dot(_:from:_:)` of many rows, `sums[i]` for the row at `bases[i]`, bit for bit: eight
    /// rows at a time, each with its own sum, so the eight rows' (scattered) values are
    /// fetched from memory together. Why: the rows near a home are random rows of a large
    /// catalog, and one row at a time the loop waited on each row's cache miss in turn.
    static func dots(_ x: UnsafeBufferPointer<Float>, bases: UnsafeBufferPointer<Int>, _ weights: [Float],
                     into sums: UnsafeMutableBufferPointer<Float>) {
        let active = (0..<weights.count).filter { weights[$0] != 0 }
        weights.withUnsafeBufferPointer { w in
            active.withUnsafeBufferPointer { dots(x, bases: bases, w, active: $0, into: sums) }
        }
    }

    /// `dots(_:bases:_:into:)` with the nonzero weights' columns given (ascending): a search
    /// calls it once per block it scans, and its rows, contiguous, are eight independent sums
    /// instead of one chain of dependent additions.
    @inline(__always)
    static func dots(_ x: UnsafeBufferPointer<Float>, bases: UnsafeBufferPointer<Int>, _ w: UnsafeBufferPointer<Float>,
                     active: UnsafeBufferPointer<Int>, into sums: UnsafeMutableBufferPointer<Float>) {
        let n = bases.count
        var i = 0
        while i &+ 8 <= n {
            let (b0, b1, b2, b3) = (bases[i], bases[i &+ 1], bases[i &+ 2], bases[i &+ 3])
            let (b4, b5, b6, b7) = (bases[i &+ 4], bases[i &+ 5], bases[i &+ 6], bases[i &+ 7])
            var (s0, s1, s2, s3): (Float, Float, Float, Float) = (0, 0, 0, 0)
            var (s4, s5, s6, s7): (Float, Float, Float, Float) = (0, 0, 0, 0)
            for j in active {
                let wj = w[j]
                s0 = s0 + wj * x[b0 &+ j]; s1 = s1 + wj * x[b1 &+ j]
                s2 = s2 + wj * x[b2 &+ j]; s3 = s3 + wj * x[b3 &+ j]
                s4 = s4 + wj * x[b4 &+ j]; s5 = s5 + wj * x[b5 &+ j]
                s6 = s6 + wj * x[b6 &+ j]; s7 = s7 + wj * x[b7 &+ j]
            }
            (sums[i], sums[i &+ 1], sums[i &+ 2], sums[i &+ 3]) = (s0, s1, s2, s3)
            (sums[i &+ 4], sums[i &+ 5], sums[i &+ 6], sums[i &+ 7]) = (s4, s5, s6, s7)
            i &+= 8
        }
        while i < n {
            var s: Float = 0
            for j in active { s = s + w[j] * x[bases[i] &+ j] }
            sums[i] = s
            i &+= 1
        }
    }

    /// Adds to `kept` the best rows by `dot + constants + offset (+ bonus)` among those
    /// `accept` admits, visiting blocks best bound first and stopping at the first block that
    /// cannot place a row in `kept`: afterwards `kept` holds exactly what it would hold had
    /// every accepted row been inserted (ties to the lower row).
    ///
    /// A row's score is `0 + w₀x₀ + …` (zero weights skipped), then `+ c` for each constant in
    /// order, then `+ offset` when `offsets` is given, then `+ bonus.amount` when the row's
    /// code is eligible: bit-identical to a full pass doing the same additions.
    ///
    /// - Parameters:
    ///   - weights: `dimension` finite weights.
    ///   - constants: Values added to every row's score, in order.
    ///   - offsets: A per-row additive term (`column(_:)`), or nil.
    ///   - bonus: An amount added to rows whose code is eligible (`codes(_:)` by position,
    ///     eligibility by code), or nil.
    ///   - kept: The list to fill; may hold rows already (found elsewhere).
    ///   - accept: Whether a row may be kept; asked only of rows whose score would enter `kept`.
    /// - Returns: The number of blocks scanned (for tests and benchmarks).
    /// - Complexity: O(B × d + B log B) for B blocks, plus d per row of each visited block.
    @discardableResult
    public func search(weights: [Float], constants: [Float], offsets: BlockColumn?,
                       bonus: (amount: Float, codes: [Int32], eligible: [Bool])?,
                       into kept: inout BoundedTopList, accept: (Int) -> Bool) -> Int {
        precondition(weights.count == dimension, "search: \(weights.count) weights for \(dimension) columns")
        let d = dimension, blocks = blockCount
        guard blocks > 0, kept.capacity > 0 else { return 0 }
        let active = (0..<d).filter { weights[$0] != 0 }
        let bonusBound: Float = bonus.map { $0.amount > 0 && $0.eligible.contains(true) ? $0.amount : 0 } ?? 0
        var bounds = [Float](repeating: 0, count: blocks)
        minima.withUnsafeBufferPointer { lo in
            maxima.withUnsafeBufferPointer { hi in
                for b in 0..<blocks {
                    var s: Float = 0
                    for j in active {
                        let w = weights[j]
                        s = s + max(w * lo[b * d + j], w * hi[b * d + j])
                    }
                    for c in constants { s = s + c }
                    if let offsets { s = s + offsets.blockMaxima[b] }
                    // A negative bonus only lowers scores: the bound stays an upper bound.
                    if bonusBound > 0 { s = s + bonusBound }
                    bounds[b] = s
                }
            }
        }
        // Best bound first; among equal bounds, the block whose lowest row is lower (a strict
        // order: no two blocks share a row). A heap, not a sort: a search visits few of the
        // blocks, and sorting them all was a tenth of a deck at a million items.
        var heap = BlockHeap(bounds: bounds, firstRows: (0..<blocks).map { rowAtPosition[blockStarts[$0]] })
        var scanned = 0
        // A scanned block's feature sums, computed together (`dots`), then its rows one by one.
        let longest = (0..<blocks).reduce(0) { max($0, blockStarts[$1 + 1] - blockStarts[$1]) }
        let bases = UnsafeMutableBufferPointer<Int>.allocate(capacity: longest), sums = UnsafeMutableBufferPointer<Float>.allocate(capacity: longest)
        let w = UnsafeMutableBufferPointer<Float>.allocate(capacity: d), columns = UnsafeMutableBufferPointer<Int>.allocate(capacity: active.count)
        defer { bases.deallocate(); sums.deallocate(); w.deallocate(); columns.deallocate() }
        _ = w.initialize(from: weights)
        _ = columns.initialize(from: active)
        values.withUnsafeBufferPointer { x in
            rowAtPosition.withUnsafeBufferPointer { rows in
                while let b = heap.pop() {
                    if kept.isFull {
                        let (worst, worstRow) = kept.worst
                        // Every later block has a bound no higher, and a lowest row no lower
                        // when its bound is equal: none can place a row either.
                        if bounds[b] < worst || (bounds[b] == worst && Int(rows[blockStarts[b]]) > worstRow) { break }
                    }
                    scanned += 1
                    let first = blockStarts[b], count = blockStarts[b + 1] - first
                    for i in 0..<count { bases[i] = (first &+ i) &* d }
                    Self.dots(x, bases: UnsafeBufferPointer(rebasing: bases[0..<count]), UnsafeBufferPointer(w),
                              active: UnsafeBufferPointer(columns), into: UnsafeMutableBufferPointer(rebasing: sums[0..<count]))
                    for p in first..<(first + count) {
                        var s = sums[p &- first]
                        for c in constants { s = s + c }
                        if let offsets { s = s + offsets.byPosition[p] }
                        if let bonus, bonus.eligible[Int(bonus.codes[p])] { s = s + bonus.amount }
                        let row = Int(rows[p])
                        guard kept.admits(score: s, row: row), accept(row) else { continue }
                        kept.insert(score: s, row: row)
                    }
                }
            }
        }
        return scanned
    }
}

/// The blocks of a search in visiting order, popped one at a time: highest bound first, the
/// lower first row among equal bounds. O(B) to build, O(log B) a pop.
struct BlockHeap {
    private let bounds: [Float]
    private let firstRows: [Int32]
    private var heap: [Int32]

    init(bounds: [Float], firstRows: [Int32]) {
        self.bounds = bounds
        self.firstRows = firstRows
        heap = (0..<Int32(bounds.count)).map { $0 }
        var i = heap.count / 2
        while i > 0 { i -= 1; siftDown(i) }
    }

    @inline(__always)
    private func before(_ a: Int32, _ b: Int32) -> Bool {
        let (ba, bb) = (bounds[Int(a)], bounds[Int(b)])
        return ba > bb || (ba == bb && firstRows[Int(a)] < firstRows[Int(b)])
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        let n = heap.count
        while true {
            let l = 2 &* i &+ 1, r = l &+ 1
            var top = i
            if l < n && before(heap[l], heap[top]) { top = l }
            if r < n && before(heap[r], heap[top]) { top = r }
            if top == i { return }
            heap.swapAt(i, top)
            i = top
        }
    }

    /// The next block to visit, or nil when every block was popped.
    mutating func pop() -> Int? {
        guard let first = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return Int(first)
    }
}

/// A per-row value in an index's position order, with each block's largest value.
public struct BlockColumn: Sendable {
    /// The values, by position.
    public let byPosition: [Float]
    /// Each block's largest value.
    public let blockMaxima: [Float]
}

/// The best `capacity` (score, row) pairs seen so far, best first: higher score first, the
/// lower row among equal scores (`TopKSelector`'s order). NaN scores are never kept.
///
/// A sorted array: a deck keeps a few dozen rows, and insertions are rare next to the
/// comparisons with the worst kept entry that reject most rows.
public struct BoundedTopList: Sendable {
    /// The most entries kept.
    public let capacity: Int
    /// The kept scores and rows, best first.
    public private(set) var scores: [Float] = []
    /// The kept rows, best first.
    public private(set) var rows: [Int] = []

    /// Creates an empty list.
    ///
    /// - Parameter capacity: The most entries, ≥ 0.
    public init(capacity: Int) {
        precondition(capacity >= 0, "BoundedTopList needs a non-negative capacity")
        self.capacity = capacity
        scores.reserveCapacity(capacity)
        rows.reserveCapacity(capacity)
    }

    /// Whether the list holds `capacity` entries.
    public var isFull: Bool { rows.count >= capacity }

    /// The worst kept entry (the list must not be empty).
    public var worst: (score: Float, row: Int) { (scores[scores.count - 1], rows[rows.count - 1]) }

    /// Whether (score, row) would enter the list.
    @inline(__always)
    public func admits(score: Float, row: Int) -> Bool {
        guard !score.isNaN, capacity > 0 else { return false }
        guard isFull else { return true }
        let w = scores[scores.count - 1]
        return score > w || (score == w && row < rows[rows.count - 1])
    }

    /// Inserts (score, row) in order, dropping the worst entry when full; nothing when it does
    /// not rank (`admits(score:row:)`). A row must not be inserted twice.
    ///
    /// - Complexity: O(capacity).
    public mutating func insert(score: Float, row: Int) {
        guard admits(score: score, row: row) else { return }
        if isFull { scores.removeLast(); rows.removeLast() }
        var i = scores.count
        while i > 0 && (scores[i - 1] < score || (scores[i - 1] == score && rows[i - 1] > row)) { i -= 1 }
        scores.insert(score, at: i)
        rows.insert(row, at: i)
    }
}

/// Copies features into block order and takes each block's per-column bounds, for a run of
/// blocks: runs of one gather may go on several threads, each block's positions and bounds
/// written by one.
struct BlockGather: @unchecked Sendable {  // raw buffers, each block written by one thread
    let x: UnsafeBufferPointer<Float>
    let d: Int
    let order: [Int32]
    let starts: [Int]
    let values: UnsafeMutableBufferPointer<Float>
    let minima: UnsafeMutableBufferPointer<Float>
    let maxima: UnsafeMutableBufferPointer<Float>

    func run(blocks: Range<Int>) {
        for b in blocks {
            for p in starts[b]..<starts[b + 1] {
                let row = Int(order[p])
                for c in 0..<d {
                    let v = x[row * d + c]
                    values[p * d + c] = v
                    minima[b * d + c] = min(minima[b * d + c], v)
                    maxima[b * d + c] = max(maxima[b * d + c], v)
                }
            }
        }
    }
}

/// The median splits of `LinearBlockIndex.init` over one buffer of rows: a range wider than a
/// block is split at the median of its widest column, a block's rows are sorted ascending.
/// Ranges of one splitter may be split on several threads when they are disjoint.
struct BlockSplitter: @unchecked Sendable {  // raw buffers, each range written by one thread
    let x: UnsafeBufferPointer<Float>
    let d: Int
    let order: UnsafeMutableBufferPointer<Int>
    let blockSize: Int

    /// Splits `range` at its median (its rows rearranged so the lower half comes first) and
    /// returns the halves; nil for a leaf (at most a block, or every row alike), whose rows are
    /// then sorted ascending.
    func split(_ range: Range<Int>) -> (Range<Int>, Range<Int>)? {
        var widest = -1
        var spread: Float = 0
        if range.count > blockSize {
            // Each row read once, all its columns together (rows are contiguous; a column at a
            // time read the range d times, in random row order).
            let lo = UnsafeMutableBufferPointer<Float>.allocate(capacity: d), hi = UnsafeMutableBufferPointer<Float>.allocate(capacity: d)
            defer { lo.deallocate(); hi.deallocate() }
            lo.initialize(repeating: .infinity)
            hi.initialize(repeating: -.infinity)
            for p in range {
                let row = UnsafeBufferPointer(rebasing: x[(order[p] * d)..<(order[p] * d + d)])
                for c in 0..<d {
                    lo[c] = min(lo[c], row[c]); hi[c] = max(hi[c], row[c])
                }
            }
            for c in 0..<d where hi[c] - lo[c] > spread { spread = hi[c] - lo[c]; widest = c }
        }
        var slice = UnsafeMutableBufferPointer(rebasing: order[range])
        guard widest >= 0 else {
            slice.sort()
            return nil
        }
        // The lower half is the count/2 smallest rows by (value in the widest column, row): a
        // unique set under that strict order, so selecting it (O(count)) instead of sorting the
        // range (O(count log count)) builds the same index — the halves are only ever read as
        // sets (their spreads, their next split, their rows sorted ascending in the end).
        let (x, d, c) = (x, d, widest)
        selectNth(range.count / 2, in: slice, within: 0..<slice.count) { a, b in
            let va = x[a * d + c], vb = x[b * d + c]
            return va < vb || (va == vb && a < b)
        }
        let middle = range.lowerBound + range.count / 2
        return (range.lowerBound..<middle, middle..<range.upperBound)
    }

    /// Where a leaf's blocks start: every `blockSize` rows.
    func blockStarts(leaf range: Range<Int>) -> [Int] { Array(stride(from: range.lowerBound, to: range.upperBound, by: blockSize)) }

    /// Splits `range` depth-first, lower half first, down to its leaves; their blocks' starts in
    /// position order.
    func blocks(of range: Range<Int>) -> [Int] {
        var starts: [Int] = []
        var stack = [range]
        while let next = stack.popLast() {
            guard let (lower, upper) = split(next) else {
                starts += blockStarts(leaf: next)
                continue
            }
            stack.append(upper)
            stack.append(lower)
        }
        return starts
    }
}
