import ArgumentParser
import SwipeRank
import SwipeRankEvaluation

/// The app's other events as training signal, shared by `fit-factors` and `fit-prior` (one
/// set of names, limits and messages): a signals CSV beside `--interactions`, or the store's
/// app events with `--store`, and how much each kind weighs an answer.
struct SignalOptions: ParsableArguments {
    @Option(help: "With --interactions: the app's dwell times and reactions about the swipes, a CSV (student_id, item_id, kind dwell_ms or reaction, value), weighing the answers with --reaction-boost and --dwell-boost. --store reads them from the store's app events instead.")
    var signals: String?

    @Option(help: "With --store or --signals: how much more an answer the app reacted to counts (its swipe_reaction events: the answer's weight × (1 + this); in [0, 1e6], default 0: ignored).")
    var reactionBoost: Double = 0

    @Option(help: "With --store or --signals: how much the app's focus dwell time on a card moves its answer's weight (× exp(±this · z), z the log-ratio to the log's median dwell, clamped to ±2; in [0, 1e6], default 0: ignored).")
    var dwellBoost: Double = 0

    /// Whether any boost is on (the store's app events are read only then).
    var weighs: Bool { reactionBoost > 0 || dwellBoost > 0 }

    func validate() throws {
        for (name, value) in [("--reaction-boost", reactionBoost), ("--dwell-boost", dwellBoost)] {
            guard value.isFinite && value >= 0 && value <= 1e6 else { throw ValidationError("\(name) must be in [0, 1e6], got \(value)") }
        }
    }

    /// The checks that need the command's source of swipes (`--store` or not).
    func validate(readingStore: Bool) throws {
        for (name, value) in [("--reaction-boost", reactionBoost), ("--dwell-boost", dwellBoost)] where value > 0 && !readingStore && signals == nil {
            throw ValidationError("\(name) weighs answers by the app's events: it needs --store or --signals")
        }
        if readingStore && signals != nil { throw ValidationError("--signals goes with --interactions: --store reads the app's events from the store") }
    }

    /// `--signals`: the CSV's dwell times and reactions (none without the option), bad rows
    /// reported on stderr.
    func read(itemIDs: Set<String>, policy: BadRowPolicy) throws -> [EngagementSignal] {
        guard let signals else { return [] }
        let read = try loadRows { () throws(DataError) in
            try SignalsFile.read(CSVTable(contentsOfFile: signals), itemIDs: itemIDs, policy: policy)
        }
        print("read \(read.count) dwell times and reactions from \(signals)")
        return read
    }
}
