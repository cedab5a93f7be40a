import SwipeRank

/// What to do with a row that does not parse.
public enum BadRowPolicy: Sendable, Hashable {
    /// Stop at the first bad row with its `DataError` (the default).
    case fail
    /// Skip bad rows and report each in the `LoadReport` — never silently.
    case skip
}

/// The rows a load skipped, and why.
public struct LoadReport: Sendable {
    /// The file.
    public let source: String
    /// Rows read successfully.
    public internal(set) var loaded = 0
    /// Each skipped row's error (with its file:line:column).
    public internal(set) var skipped: [DataError] = []

    /// One line per skipped row, and a count.
    public var summary: String {
        skipped.isEmpty ? "\(source): \(loaded) rows loaded"
            : "\(source): \(loaded) rows loaded, \(skipped.count) skipped:\n" + skipped.map { "  \($0)" }.joined(separator: "\n")
    }

    init(source: String) { self.source = source }

    /// Runs `body` on a row under `policy`: rethrows with `.fail`, records with `.skip`.
    mutating func row<T>(_ policy: BadRowPolicy, _ body: () throws(DataError) -> T) throws(DataError) -> T? {
        do {
            let value = try body()
            loaded += 1
            return value
        } catch {
            guard policy == .skip else { throw error }
            skipped.append(error)
            return nil
        }
    }
}
