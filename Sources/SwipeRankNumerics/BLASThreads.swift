import CBLAS

/// The number of threads OpenBLAS uses for one call.
///
/// SwipeRank's policy: per-request work (one student's scores, the model's solves) does not
/// call BLAS at all — it runs fixed-order loops (`Matrix.multiplyTransposedInOrder`,
/// `CholeskyFactor`) whose results cannot depend on this setting — and batch products use all
/// cores. The setting is process-wide, as in OpenBLAS itself.
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
