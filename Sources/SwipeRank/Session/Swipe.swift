/// A like or a dislike.
public enum SwipeAction: String, Sendable, Hashable, Codable {
    /// Swiped right.
    case like
    /// Swiped left.
    case dislike
}

/// One swipe as the app sends it.
public struct Swipe: Sendable, Hashable, Codable {
    /// A client-chosen id, unique per swipe: replaying the same id changes nothing.
    public var swipeID: String
    /// The card (item id) swiped.
    public var cardID: String
    /// Like or dislike.
    public var action: SwipeAction
    /// When it happened on the device (e.g. Unix milliseconds); orders offline replays.
    public var timestamp: Int64

    /// Creates a swipe.
    ///
    /// - Parameters:
    ///   - swipeID: Unique per swipe.
    ///   - cardID: The item id.
    ///   - action: Like or dislike.
    ///   - timestamp: Device time.
    public init(swipeID: String, cardID: String, action: SwipeAction, timestamp: Int64) {
        self.swipeID = swipeID
        self.cardID = cardID
        self.action = action
        self.timestamp = timestamp
    }

    enum CodingKeys: String, CodingKey {
        case swipeID = "swipe_id", cardID = "card_id", action, timestamp
    }
}

/// Why a swipe was rejected. Rejected swipes never change the session.
///
/// A struct wrapping a private enum so reasons can be added later; compare `kind`.
public struct SwipeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reason.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        /// The card id is not in the catalog.
        public static let unknownCard = Kind(name: "unknown card")
        /// The card exists but was never served to this student.
        public static let notServed = Kind(name: "card not served")
        /// The card was already swiped under another swipe id.
        public static let alreadySwiped = Kind(name: "card already swiped")
        /// Feedback for a card that has no open feedback prompt, or an option it did not offer.
        public static let invalidFeedback = Kind(name: "invalid feedback")
        /// The swipe itself is malformed (an id too long).
        public static let invalidSwipe = Kind(name: "invalid swipe")
        /// The learning update failed numerically (state unchanged).
        public static let numerical = Kind(name: "numerical failure")
        /// The name of the reason.
        public var description: String { name }
    }

    /// The reason.
    public let kind: Kind
    /// Details a person can act on.
    public let message: String

    /// The message.
    public var description: String { message }

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

/// What recording a swipe did.
public struct SwipeResult: Sendable, Hashable, Codable {
    /// Whether the swipe was applied now or had been applied before (same swipe id).
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// Applied now.
        case recorded
        /// Seen before; nothing changed.
        case duplicate
    }

    /// Applied or duplicate.
    public var outcome: Outcome
    /// The learning state after the swipe.
    public var learningState: LearningState
    /// Swipes recorded so far.
    public var totalSwipes: Int
    /// A feedback question to show, if the engine wants one.
    public var feedback: FeedbackPrompt?

    enum CodingKeys: String, CodingKey {
        case outcome, learningState = "learning_state", totalSwipes = "total_swipes", feedback
    }
}
