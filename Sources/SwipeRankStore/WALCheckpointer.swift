import Dispatch
import Foundation
import GRDB
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// When and how the SQLite store moves its write-ahead log into the database file.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold, on the
/// writer: it syncs the log, copies the pages and syncs the database file (two fsyncs, 10–16 ms
/// on this project's VM, measured with strace) while every other write queues behind it — at
/// 1,000 requests/s that alone put one request in twenty past 12 ms. So the store switches it
/// off and checkpoints from a thread and a connection of its own instead (a passive checkpoint
/// never blocks writers or readers). The log restarts from its beginning only when a writer
/// finds it entirely copied, which continuous writes prevent; so once the log has grown past
/// `restartBytes` the thread runs passes back to back until one finds nothing new (a pause
/// between commits), and then has the writer run a checkpoint with nothing (or next to
/// nothing) left to copy: its next transaction restarts the log. Measured here: the writer's
/// step takes microseconds that way, where copying even the ~50 frames written during one
/// short pass took it 17–84 ms (two fsyncs on a virtual disk), and copying everything since
/// the last background pass 20–70 ms. Past `forceRestartBytes` (writes that never pause) the
/// writer copies what is left regardless, so the log stays bounded.
public struct CheckpointPolicy: Sendable, Equatable {
    /// How often the background thread checkpoints (when the log has anything to copy).
    public var interval: Duration
    /// Log size past which the log is restarted at the next pause between commits.
    public var restartBytes: Int
    /// Log size past which it is restarted even without a pause (the writer then copies what
    /// arrived during the last pass): the bound on the log's size on disk.
    public var forceRestartBytes: Int

    /// - Parameters:
    ///   - interval: Between background checkpoints (default 250 ms).
    ///   - restartBytes: Log size that starts a restart (default 64 MiB).
    ///   - forceRestartBytes: Log size that forces one (default 4 × `restartBytes`; at least
    ///     `restartBytes`).
    public init(interval: Duration = .milliseconds(250), restartBytes: Int = 64 << 20, forceRestartBytes: Int? = nil) {
        precondition(interval > .zero, "a checkpoint interval must be positive")
        precondition(restartBytes > 0, "a restart size must be positive")
        self.interval = interval
        self.restartBytes = restartBytes
        self.forceRestartBytes = max(restartBytes, forceRestartBytes ?? 4 * restartBytes)
    }
}

/// The background checkpoint thread of one `SQLiteStore` (see `CheckpointPolicy`).
///
/// A thread of its own, with a SQLite connection of its own that only it uses: a checkpoint
/// copies megabytes through the kernel and blocks in fsync for milliseconds, so it runs at a
/// lower scheduling weight (nice +10, Linux) — requests come first and the copying fills idle
/// time. GRDB's synchronous call runs the work on this thread (a serial queue's `sync` runs on
/// the calling thread; a test reads the nice value inside the call), not on a dispatch worker.
final class WALCheckpointer: Sendable {
    private let pool: DatabasePool
    private let connection: DatabaseQueue
    private let policy: CheckpointPolicy
    private let pageSize: Int
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// Checkpoints run in the background and by the writer (for tests and diagnostics).
    let counts = Mutex<(background: Int, restarts: Int)>((0, 0))
    /// The nice value the last checkpoint ran at, read inside GRDB's call (for tests; Linux).
    let lastPassNice = Atomic<Int>(0)

    /// Opens the checkpoint connection and starts the thread.
    ///
    /// - Parameters:
    ///   - pool: The store's pool (its writer finishes the checkpoints that restart the log).
    ///   - path: The database file.
    ///   - policy: Interval and restart size.
    /// - Throws: GRDB's error if the connection cannot be opened.
    init(pool: DatabasePool, path: String, policy: CheckpointPolicy) throws {
        self.pool = pool
        var configuration = Configuration()
        configuration.label = "SwipeRank.checkpointer"
        self.connection = try DatabaseQueue(path: path, configuration: configuration)
        // The connection has read the file (GRDB checks its format on opening), so it knows the
        // file is in WAL mode: a connection that has not would checkpoint nothing (-1 frames).
        do {
            _ = try Self.passive(connection).frames
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            // Another connection is checkpointing this file, which happens only in WAL mode.
        }
        self.policy = policy
        self.pageSize = try pool.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") } ?? 4_096
        let thread = Thread { [self] in run() }
        thread.name = "SwipeRank.checkpointer"
        thread.start()
    }

    /// Stops the thread and waits for a checkpoint under way to end.
    func stop() {
        guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        wake.signal()
        finished.wait()
    }

    private func run() {
        #if os(Linux)
        // On Linux the nice value is per thread, and `who` 0 is the calling thread.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
        let nanoseconds = policy.interval.components.seconds * 1_000_000_000 + policy.interval.components.attoseconds / 1_000_000_000
        while true {
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds)))
            if stopping.load(ordering: .sequentiallyConsistent) { break }
            checkpointOnce()
        }
        try? connection.close()
        finished.signal()
    }

    /// One background pass: a passive checkpoint; when the log is past the restart size, more
    /// passes until one finds nothing new, then the writer's (see `CheckpointPolicy`). A busy
    /// database or a failed checkpoint only postpones the work (the log stays correct; it just
    /// keeps more frames).
    func checkpointOnce() {
        do {
            var frames = try passive()
            guard frames * pageSize >= policy.restartBytes else { return }
            // A pass reports the log as it was when the pass began, and copies all of it: what
            // arrived while it ran is left for the next. Passes shorten as they go (each copies
            // what arrived during the one before); one that finds nothing new found a pause.
            var quiet = false
            for _ in 0..<16 where !quiet {
                let before = frames
                frames = try passive()
                quiet = frames == before
            }
            // Under the writer's own lock no frame can arrive meanwhile, so this copies what is
            // left (nothing after a pause; unless a reader still needs an old page) and the
            // writer's next transaction restarts the log.
            guard quiet || frames * pageSize >= policy.forceRestartBytes else { return }
            try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
            counts.withLock { $0.restarts += 1 }
        } catch {
            // SQLITE_BUSY and friends: try again at the next interval.
        }
    }

    /// A passive checkpoint from the thread's connection; returns the frames in the log when it
    /// began (all copied unless a reader still needed an old page).
    private func passive() throws -> Int {
        let (frames, nice) = try Self.passive(connection)
        lastPassNice.store(nice, ordering: .relaxed)
        if frames > 0 { counts.withLock { $0.background += 1 } }
        return frames
    }

    /// A passive checkpoint on `connection`, run on the calling thread: the frames in the log
    /// when it began and the nice value it ran at; throws if the connection does not see the
    /// file in WAL mode.
    private static func passive(_ connection: DatabaseQueue) throws -> (frames: Int, nice: Int) {
        let (frames, nice) = try connection.inDatabase { db in (try db.checkpoint(.passive).walFrameCount, currentNice()) }
        guard frames >= 0 else { throw StoreError("cannot checkpoint: the database is not in WAL mode") }
        return (frames, nice)
    }

    /// The calling thread's nice value (0 where threads have none of their own).
    private static func currentNice() -> Int {
        #if os(Linux)
        return Int(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
        #else
        return 0
        #endif
    }
}
