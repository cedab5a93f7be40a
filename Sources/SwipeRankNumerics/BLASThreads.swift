import CBLAS

/// The number of threads OpenBLAS uses for one call.
///
/// SwipeRank's policy: one thread for per-request work (a gemv over a few thousand rows or a
/// d × d solve finishes before a second thread would start, and a server already runs requests
/// concurrently), all cores for large batch products. The setting is process-wide, as in
/// OpenBLAS itself.
///
///     BLASThreads.count = 1                       // per-request serving
///     BLASThreads.withCount(2) { batch.multiplyTransposed(catalog, into: &scores) }
public enum BLASThreads {
    /// The number of threads OpenBLAS uses; setting it changes it for the whole process.
    ///
    /// - Complexity: O(1).
    public static var count: Int {
        get { Int(openblas_get_num_threads()) }
        set {
            precondition(newValue >= 1, "BLAS thread count must be at least 1")
            openblas_set_num_threads(Int32(newValue))
        }
    }

    /// Runs `body` with `count` OpenBLAS threads and restores the previous count afterwards.
    ///
    /// - Parameters:
    ///   - count: The thread count to use inside `body`.
    ///   - body: The work to run.
    /// - Returns: What `body` returns.
    public static func withCount<R>(_ count: Int, _ body: () throws -> R) rethrows -> R {
        let previous = self.count
        self.count = count
        defer { self.count = previous }
        return try body()
    }
}
