/// An error from a numeric routine that the data, not the caller, caused.
///
/// A struct wrapping a private enum so that new cases can be added without breaking clients;
/// compare with the static members:
///
///     do { _ = try CholeskyFactor(symmetric: a, dimension: 3) }
///     catch let error as NumericsError where error.kind == .notPositiveDefinite { … }
public struct NumericsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Kind: Sendable, Hashable {
        private let rawValue: Int
        /// A matrix that must be symmetric positive definite is not.
        public static let notPositiveDefinite = Kind(rawValue: 1)
        /// An input or result holds NaN or an infinity.
        public static let nonFinite = Kind(rawValue: 2)
        /// LAPACK rejected an argument (its `info < 0`).
        public static let lapackArgument = Kind(rawValue: 3)
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// A sentence a person can act on.
    public let message: String

    /// The message.
    public var description: String { message }

    static func notPositiveDefinite(routine: String, minor: Int) -> NumericsError {
        NumericsError(kind: .notPositiveDefinite,
                      message: "\(routine): the leading minor of order \(minor) is not positive definite")
    }

    /// A `.nonFinite` error naming what held NaN or an infinity.
    ///
    /// - Parameter what: The input's name.
    /// - Returns: The error.
    public static func nonFinite(_ what: String) -> NumericsError {
        NumericsError(kind: .nonFinite, message: "\(what) contains NaN or an infinity")
    }

    static func lapackArgument(routine: String, info: Int) -> NumericsError {
        NumericsError(kind: .lapackArgument, message: "\(routine): argument \(-info) had an illegal value")
    }
}
