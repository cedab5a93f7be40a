import Foundation

/// What an app says about a card besides the swipe: a reaction (an emoji, "CTFO", "TFU") or how
/// long the student looked at it (`focus` with a duration). The service stores these as app
/// events (`POST /events`); a population fit may read them as how strongly a student meant an
/// answer (`FactorFit.Options.reactionBoost`, `dwellBoost`).
///
/// A session never learns from them: they arrive on their own channel, in any order relative to
/// the swipes, and a session's state must be the replay of its ordered swipes.
public struct EngagementSignal: Sendable, Hashable {
    /// What the app reported.
    public enum Kind: Sendable, Hashable {
        /// A reaction to the card; the text is the app's own vocabulary and is not interpreted:
        /// any reaction marks an answer the student felt strongly about.
        case reaction(String)
        /// The student looked at the card this long (milliseconds, ≥ 0).
        case dwell(milliseconds: Double)
    }

    /// The student.
    public var studentID: String
    /// The item.
    public var itemID: String
    /// What was reported.
    public var kind: Kind

    /// Creates a signal.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - itemID: The item.
    ///   - kind: The reaction or the dwell time.
    public init(studentID: String, itemID: String, kind: Kind) {
        (self.studentID, self.itemID, self.kind) = (studentID, itemID, kind)
    }
}

/// How strongly each (student, item) answer was meant, from the signals about it: the factor
/// the fit multiplies that answer's confidence by.
///
/// - A reaction: × (1 + `reactionBoost`) — for a like and for a dislike alike (the text is not
///   interpreted, so a reaction only says the answer was meant).
/// - Dwell: `z = clamp(ln(dwell / median), −2, 2)`, the median over every answered pair with a
///   dwell in the log (so the app's unit and typical pace cancel); a like × `exp(dwellBoost·z)`,
///   a dislike × `exp(−dwellBoost·z)` — a long look before a like is a stronger like, before a
///   dislike a hesitation. Several focus events on one card add up.
///
/// Pairs without signals, and every pair when both boosts are 0, keep factor 1, so the fit is
/// then exactly the fit without signals.
public struct AnswerStrengths: Sendable {
    /// The factor per (student id, item id); pairs not listed have 1.
    public let factors: [String: [String: Double]]
    /// The median dwell of the answered pairs (nil without dwell signals).
    public let medianDwell: Double?

    /// Computes the factors.
    ///
    /// - Parameters:
    ///   - signals: The signals, any order.
    ///   - answers: Each answered pair's answer (true: like), by student id, then item id.
    ///   - reactionBoost: ≥ 0.
    ///   - dwellBoost: ≥ 0.
    /// - Complexity: O(signals + dwell pairs × log dwell pairs).
    public init(signals: [EngagementSignal], answers: [String: [String: Bool]], reactionBoost: Double, dwellBoost: Double) {
        precondition(reactionBoost >= 0 && reactionBoost.isFinite && dwellBoost >= 0 && dwellBoost.isFinite, "boosts ≥ 0")
        var reacted: [String: Set<String>] = [:]
        var dwell: [String: [String: Double]] = [:]
        for s in signals where answers[s.studentID]?[s.itemID] != nil {
            switch s.kind {
            case .reaction: reacted[s.studentID, default: []].insert(s.itemID)
            case .dwell(let ms): if ms.isFinite && ms >= 0 { dwell[s.studentID, default: [:]][s.itemID, default: 0] += ms }
            }
        }
        // The median of the answered pairs' total dwell, by a sort of the values in a fixed
        // order (the dictionaries' order is not).
        let totals = dwell.keys.sorted().flatMap { id in dwell[id]!.keys.sorted().map { dwell[id]![$0]! } }.sorted()
        let median: Double? = totals.isEmpty ? nil
            : totals.count % 2 == 1 ? totals[totals.count / 2] : (totals[totals.count / 2 - 1] + totals[totals.count / 2]) / 2
        medianDwell = median
        var factors: [String: [String: Double]] = [:]
        guard reactionBoost > 0 || dwellBoost > 0 else { self.factors = [:]; return }
        for (student, items) in answers {
            for (item, liked) in items {
                var m = 1.0
                if reactionBoost > 0, reacted[student]?.contains(item) == true { m *= 1 + reactionBoost }
                if dwellBoost > 0, let ms = dwell[student]?[item], let median, median > 0 {
                    // A zero dwell is the shortest look there is: clamped like any other.
                    let z = min(2, max(-2, ms > 0 ? Foundation.log(ms / median) : -2))
                    m *= Foundation.exp((liked ? dwellBoost : -dwellBoost) * z)
                }
                if m != 1 { factors[student, default: [:]][item] = m }
            }
        }
        self.factors = factors
    }

    /// The factor of one answer.
    ///
    /// - Parameters:
    ///   - studentID: The student.
    ///   - itemID: The item.
    /// - Returns: The factor (1 without signals).
    public func factor(studentID: String, itemID: String) -> Double { factors[studentID]?[itemID] ?? 1 }
}
