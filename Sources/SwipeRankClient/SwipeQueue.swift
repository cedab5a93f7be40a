import Foundation

/// Swipes made offline, kept in a file until the service has them.
///
/// Each `enqueue` rewrites the file atomically (write to a temporary file, then rename), so a
/// crash leaves the old queue or the new one, never half of one. `flush` sends the queue in order
/// through `POST /student/sync`, in batches of at most 500 (the service's limit), and drops
/// each swipe the service answered for: recorded, replayed (it already had it), or refused for
/// good (a 4xx such as an unknown card, reported in `FlushReport.rejected`). Swipes keep their
/// client-made ids, so a flush interrupted after the service applied it, and repeated, is
/// answered `replayed` instead of counting twice.
public actor SwipeQueue {
    /// The queue file (JSON).
    public nonisolated let fileURL: URL
    private var pending: [Components.Schemas.ItemSwipe]

    /// What a flush did.
    public struct FlushReport: Sendable, Hashable {
        /// Swipes the service recorded now.
        public var recorded: Int = 0
        /// Swipes the service already had (a resent queue).
        public var replayed: Int = 0
        /// Swipes the service refused for good, with its error; dropped from the queue.
        public var rejected: [String: SwipeRankAPIError] = [:]
        /// The student's swipe count after the last batch (nil when nothing was sent).
        public var totalSwipes: Int?
    }

    /// The file's shape: a version, so a later client can tell an older file.
    private struct File: Codable {
        var version: Int
        var swipes: [Components.Schemas.ItemSwipe]
    }

    /// Opens the queue in `fileURL`, reading what an earlier instance (or an earlier run of the
    /// app) left there; a missing file is an empty queue.
    public init(fileURL: URL) throws {
        self.fileURL = fileURL
        if let data = try? Data(contentsOf: fileURL) {
            do {
                pending = try JSONDecoder().decode(File.self, from: data).swipes
            } catch {
                throw SwipeRankClientError.unreadableQueue("\(fileURL.path): \(error)")
            }
        } else {
            pending = []
        }
    }

    /// The swipes not yet sent, in order.
    public var swipes: [Components.Schemas.ItemSwipe] { pending }

    /// Adds a swipe and persists the queue before returning.
    public func enqueue(_ swipe: Components.Schemas.ItemSwipe) throws {
        pending.append(swipe)
        try persist()
    }

    /// Sends the queue through `client` and keeps only what the service did not answer for (the
    /// whole remainder when a request fails: the error is thrown and nothing is lost).
    @discardableResult
    public func flush(using client: SwipeRankClient) async throws -> FlushReport {
        var report = FlushReport()
        while !pending.isEmpty {
            let batch = Array(pending.prefix(500))
            let answer = try await client.sync(batch)
            var answered = Set<String>()
            for result in answer.results {
                if result.status == 200 {
                    answered.insert(result.swipe_id)
                    if result.replayed == true { report.replayed += 1 } else { report.recorded += 1 }
                } else if (400..<500).contains(result.status), result.status != 429 {
                    answered.insert(result.swipe_id)
                    report.rejected[result.swipe_id] = SwipeRankAPIError(
                        status: result.status, code: result.error?.code.rawValue ?? "UNKNOWN", message: result.error?.message ?? "",
                        details: result.error?.details.additionalProperties ?? .init())
                }
            }
            report.totalSwipes = answer.total_swipes
            let sent = Set(batch.map(\.swipe_id))
            let before = pending.count
            pending.removeAll { sent.contains($0.swipe_id) && answered.contains($0.swipe_id) }
            try persist()
            // Nothing of this batch could be settled (e.g. all retryable): stop, keep them.
            if pending.count == before { break }
        }
        return report
    }

    private func persist() throws {
        let data = try JSONEncoder().encode(File(version: 1, swipes: pending))
        try FileManager.default.createDirectory(at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: fileURL, options: .atomic)
    }
}
