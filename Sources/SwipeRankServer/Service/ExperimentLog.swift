import Foundation
import SwipeRankStore

/// What an A/B test logged per student, read back from the store (`swiperank arms`): the arm
/// that served them, each swipe with the probe flag and propensity its card was served with,
/// and when they first saved.
public struct ExperimentStudent: Sendable, Hashable {
    /// One swipe.
    public struct Swipe: Sendable, Hashable {
        /// A like.
        public var liked: Bool
        /// Whether its card was a probe.
        public var isProbe: Bool
        /// The probability the card was served with (nil: not found in the log).
        public var propensity: Double?
    }

    /// The student.
    public var studentID: String
    /// The arm of their last logged deck (nil: served without an experiment).
    public var arm: String?
    /// Their swipes in order.
    public var swipes: [Swipe]
    /// Swipes before their first save (nil: never saved).
    public var swipesBeforeFirstSave: Int?

    /// Reads every student of a store (the default catalog's when read through a whole store).
    ///
    /// - Parameter store: The store.
    /// - Returns: Students in id order.
    /// - Throws: `StoreError` when the store fails; a logged event that does not decode is
    ///   skipped.
    public static func read(from store: any StudentStore) async throws(StoreError) -> [ExperimentStudent] {
        var out: [ExperimentStudent] = []
        let decoder = JSONDecoder()
        try await forEachStudentLog(in: store, kinds: [.served, .swipe, .save]) { id, events in
            var student = ExperimentStudent(studentID: id, arm: nil, swipes: [], swipesBeforeFirstSave: nil)
            var served: [String: (probe: Bool, propensity: Double)] = [:]
            for event in events {
                switch event.kind {
                case .served:
                    guard let deck = try? decoder.decode(ServedPayload.self, from: event.payload) else { continue }
                    if deck.arm != nil { student.arm = deck.arm }
                    for card in deck.cards { served[card.cardID] = (card.isProbe, card.propensity) }
                case .swipe:
                    guard let swipe = try? decoder.decode(SwipeRequest.self, from: event.payload) else { continue }
                    let card = served[swipe.itemID]
                    student.swipes.append(Swipe(liked: swipe.action == .like, isProbe: card?.probe ?? false, propensity: card?.propensity))
                default:
                    if student.swipesBeforeFirstSave == nil { student.swipesBeforeFirstSave = student.swipes.count }
                }
            }
            out.append(student)
        }
        return out
    }
}
