/// Where a student is in learning, by total swipes: discovery (1–10), refinement (11–30),
/// stable (31+). A student with no swipes yet is in discovery.
public enum LearningPhase: String, Sendable, Hashable, Codable, CaseIterable {
    /// Swipes 0–10: broad exploration around the cold-start preferences.
    case discovery
    /// Swipes 11–30: narrowing down.
    case refinement
    /// Swipes 31+: settled preferences that keep adapting slowly.
    case stable

    /// The phase after `totalSwipes` swipes.
    ///
    /// - Parameter totalSwipes: Swipes recorded so far, not negative.
    public init(totalSwipes: Int) {
        precondition(totalSwipes >= 0, "Swipe count must not be negative")
        switch totalSwipes {
        case ...10: self = .discovery
        case 11...30: self = .refinement
        default: self = .stable
        }
    }

    /// Progress within the phase, 0…1: discovery swipes/10, refinement (swipes − 10)/20,
    /// stable 1.
    ///
    /// - Parameter totalSwipes: Swipes recorded so far.
    /// - Returns: The progress.
    public static func progress(totalSwipes: Int) -> Double {
        switch LearningPhase(totalSwipes: totalSwipes) {
        case .discovery: Double(totalSwipes) / 10
        case .refinement: Double(totalSwipes - 10) / 20
        case .stable: 1
        }
    }
}
