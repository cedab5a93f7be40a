/// Invite codes for group sessions: short enough to read out, no look-alike characters, and
/// unguessable enough for a session's lifetime.
///
/// The alphabet is the 31 characters `23456789ABCDEFGHJKMNPQRSTUVWXYZ` (no 0/O, 1/I/L); a code
/// is `length` of them (default 8: 31⁸ ≈ 8.5 × 10¹¹, about 39.6 bits), shown as `ABCD-EFGH`.
/// Someone guessing at 10 joins a minute (the service's join limit) against 10,000 open
/// sessions finds one in about 16 years on average.
public enum InviteCode {
    /// The characters a code is made of.
    public static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
    /// The default number of characters.
    public static let defaultLength = 8

    /// A new code.
    ///
    /// - Parameters:
    ///   - length: Characters, 4…32.
    ///   - generator: The randomness (a cryptographic one in a service; seeded in tests).
    /// - Returns: The code in canonical form (upper case, no separator).
    public static func generate(length: Int = defaultLength, using generator: inout some RandomNumberGenerator) -> String {
        precondition((4...32).contains(length), "an invite code has 4…32 characters")
        return String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// The canonical form of what a person typed: case, spaces and dashes ignored.
    ///
    /// - Parameters:
    ///   - typed: The code as entered.
    ///   - length: The code's length without dashes (`defaultLength`).
    /// - Returns: The canonical code, or nil if it has a character outside the alphabet or
    ///   the wrong length.
    public static func canonical(_ typed: String, length: Int = defaultLength) -> String? {
        var out: [Character] = []
        for character in typed.uppercased() where character != "-" && character != " " {
            guard alphabet.contains(character), out.count < length else { return nil }
            out.append(character)
        }
        return out.count == length ? String(out) : nil
    }

    /// The code as shown to people: two halves joined by a dash.
    ///
    /// - Parameter code: A canonical code.
    /// - Returns: E.g. `ABCD-EFGH`.
    public static func display(_ code: String) -> String {
        let half = code.count / 2
        return String(code.prefix(half)) + "-" + String(code.dropFirst(half))
    }
}
