import SwipeRankNumerics

/// Keeps a deck's explanations varied: no sentence on more than a third of a deck's cards
/// unless it is those cards' top reason.
///
/// Each card keeps its top (first) reason. Its other places go, in the card's own order of
/// reasons (the ones it showed, then its next-best ones), to sentences used on fewer than
/// ⌊n/3⌋ cards of the n-card deck so far (at least 1), counting every card's top reason from the
/// start; a card keeps as many reasons as it had, or fewer when its reasons run out. So a
/// sentence is on more than a third of a deck only as those cards' top reason.
///
/// Two sentences are the same when they differ only in their numbers ("Close to home (12 mi)"
/// and "Close to home (40 mi)"): the reader sees the same reason.
public enum ExplanationVariety {
    /// How many reasons of a card are candidates (its shown ones and the next-best after them).
    public static let candidates = 6

    /// A sentence with its numbers blanked: what "the same sentence" compares.
    ///
    /// - Parameter sentence: A reason.
    /// - Returns: The sentence with every run of digits (and the separators inside it) as `#`.
    public static func key(_ sentence: String) -> String {
        String(decoding: keyBytes(sentence), as: UTF8.self)
    }

    /// The UTF-8 bytes of `key(_:)`.
    static func keyBytes(_ sentence: String) -> [UInt8] {
        var key: [UInt8] = []
        forEachKeyByte(sentence) { key.append($0) }
        return key
    }

    /// Calls `body` with each byte of a sentence's key, read from its UTF-8 without building
    /// anything: ASCII digits and separators are single bytes that never occur inside a
    /// multi-byte character, and a deck asks this for every candidate sentence (iterating
    /// Characters, or building each key, cost more than building the cards).
    @inline(__always)
    static func forEachKeyByte(_ sentence: String, _ body: (UInt8) -> Void) {
        var sentence = sentence  // withUTF8 is mutating: it may make a bridged string native
        sentence.withUTF8 { bytes in
            var reader = KeyReader()
            for byte in bytes { reader.take(byte, body) }
        }
    }

    /// The key's rule, one sentence byte at a time: a run of digits (with the separators inside
    /// it) gives one `#`, any other byte itself.
    struct KeyReader {
        /// Whether the last byte read was in a run of digits.
        private(set) var inNumber = false

        /// Reads one byte of the sentence, giving `body` the key bytes it makes (none or one).
        @inline(__always)
        mutating func take(_ byte: UInt8, _ body: (UInt8) -> Void) {
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                if !inNumber { body(UInt8(ascii: "#")) }
                inNumber = true
            } else if !(inNumber && (byte == UInt8(ascii: ",") || byte == UInt8(ascii: "."))) {
                inNumber = false
                body(byte)
            }
        }
    }

    /// A sentence compared and hashed by a 64-bit digest of its `key(_:)` bytes, the key never
    /// built: a deck asks for a few dozen, and building each key (as a `String`, then as bytes)
    /// and comparing them was a tenth of a deck's cost. Two different keys share a digest with
    /// probability about 2⁻⁶⁴ per pair (a deck compares a few thousand pairs), and the cost of
    /// that would be one varied reason dropped.
    ///
    /// The key's bytes are mixed eight at a time (`Digest`), and eight bytes of the sentence
    /// with no digit among them, outside a number, are its key's next eight bytes as they stand:
    /// one load and one test instead of a branch per byte (hashing byte by byte was a twentieth
    /// of a factors deck's instructions).
    ///
    /// Public so that a matcher which writes its sentences ahead of time keys them ahead of
    /// time too (`Matcher.cardWithKeyedCandidates`): a deck then reads no sentence's text to
    /// vary its reasons.
    public struct Key: Hashable, Sendable {
        let digest: UInt64

        /// The key of a sentence: its text with every run of digits blanked, digested.
        ///
        /// - Parameter sentence: A reason.
        /// - Complexity: O(the sentence's UTF-8 length).
        public init(_ sentence: String) {
            var sentence = sentence  // withUTF8 is mutating: it may make a bridged string native
            digest = sentence.withUTF8 { bytes in
                var digest = Digest()
                var reader = KeyReader()
                @inline(__always) func take(_ byte: UInt8) { reader.take(byte) { digest.append(byte: $0) } }
                guard let base = bytes.baseAddress else { return digest.value }
                let n = bytes.count
                var i = 0
                while n &- i >= 8 {
                    let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                    if !reader.inNumber && !Digest.hasDigit(word) {
                        digest.append(word: UInt64(littleEndian: word))
                    } else {
                        for j in i..<(i &+ 8) { take(base[j]) }  // a word with a number: byte by byte
                    }
                    i &+= 8
                }
                while i < n {
                    take(base[i])
                    i &+= 1
                }
                return digest.value
            }
        }

        /// The digest of a key's bytes given one by one: what `init(_:)` computes (a reference
        /// for tests).
        static func reference(keyBytes: [UInt8]) -> UInt64 {
            var digest = Digest()
            for byte in keyBytes { digest.append(byte: byte) }
            return digest.value
        }

        /// A 64-bit digest of a byte stream taken eight bytes at a time, little-endian: bytes
        /// wait in `pending` until eight are there, so the digest depends on the stream alone,
        /// not on how it was fed. Each word is mixed by a multiply and a shift (Fibonacci
        /// hashing's constant), the end by the length and MurmurHash3's finalizer.
        struct Digest {
            private var state: UInt64 = 0x243F_6A88_85A3_08D3
            private var pending: UInt64 = 0
            private var pendingBytes: UInt64 = 0
            private var count: UInt64 = 0

            @inline(__always)
            private static func mix(_ state: UInt64, _ word: UInt64) -> UInt64 {
                let x = (state ^ word) &* 0x9E37_79B9_7F4A_7C15
                return x ^ (x &>> 29)
            }

            @inline(__always)
            mutating func append(byte: UInt8) {
                pending |= UInt64(byte) &<< (8 &* pendingBytes)
                pendingBytes &+= 1
                count &+= 1
                if pendingBytes == 8 {
                    state = Self.mix(state, pending)
                    (pending, pendingBytes) = (0, 0)
                }
            }

            /// Eight bytes, the first in the low byte.
            @inline(__always)
            mutating func append(word: UInt64) {
                count &+= 8
                if pendingBytes == 0 {
                    state = Self.mix(state, word)
                } else {
                    let shift = 8 &* pendingBytes
                    state = Self.mix(state, pending | word &<< shift)
                    pending = word &>> (64 &- shift)
                }
            }

            var value: UInt64 {
                var x = Self.mix(state, pending) ^ count
                x ^= x &>> 33
                x = x &* 0xFF51_AFD7_ED55_8CCD
                x ^= x &>> 33
                x = x &* 0xC4CE_B9FE_1A85_EC53
                return x ^ (x &>> 33)
            }

            /// Whether any byte of `word` is an ASCII digit (0x30…0x39): the exact test for a
            /// byte between two values of "Bit Twiddling Hacks" (no false answer either way,
            /// for bytes of any value).
            @inline(__always)
            static func hasDigit(_ word: UInt64) -> Bool {
                let ones: UInt64 = 0x0101_0101_0101_0101
                let low7 = word & (ones &* 127)
                let (m, n): (UInt64, UInt64) = (0x2F, 0x3A)
                return (((ones &* (127 &+ n)) &- low7) & ~word & (low7 &+ ones &* (127 &- m)) & (ones &* 128)) != 0
            }
        }

        /// The digest as a table key (every bit kept).
        var tableKey: Int { Int(truncatingIfNeeded: digest) }
    }

    /// The reasons each card of a deck shows.
    ///
    /// - Parameters:
    ///   - shown: Per card, the reasons it would show alone (its top reason first).
    ///   - candidates: Per card, its reasons best first (may repeat `shown`); the ones after
    ///     `shown` replace a repeated one.
    /// - Returns: Per card, at most as many reasons as `shown`, the top one unchanged.
    /// - Complexity: O(n × candidates).
    public static func vary(shown: [[String]], candidates: [[String]]) -> [[String]] {
        precondition(shown.count == candidates.count, "vary: one candidate list per card")
        return vary(shown: shown) { candidates[$0] }
    }

    /// `vary(shown:candidates:)` asking for a card's next-best reasons only when one of its
    /// shown reasons is over its share: most cards keep theirs, and writing a card's candidate
    /// sentences costs more than the rest of building it.
    ///
    /// - Parameters:
    ///   - shown: Per card, the reasons it would show alone (its top reason first).
    ///   - more: The candidates of card `i`, best first (called at most once per card).
    /// - Returns: As `vary(shown:candidates:)`.
    static func vary(shown: [[String]], more: (Int) -> [String]) -> [[String]] {
        vary(shown: shown, shownKey: { _, _ in nil }, more: { (more($0), nil) })
    }

    /// `vary(shown:more:)` with the keys of the sentences where they are known: `shownKey(i, j)`
    /// is the key of `shown[i][j]` or nil, and `more(i).keys` (when not nil) has the key of each
    /// of `more(i).texts`, each equal to `Key(sentence)`. A sentence without a given key is keyed
    /// from its text. The same result as keying every sentence from its text.
    static func vary(shown: [[String]], shownKey given: (Int, Int) -> Key?, more: (Int) -> (texts: [String], keys: [Key]?)) -> [[String]] {
        let cap = max(1, shown.count / 3)
        func shownKey(_ i: Int, _ j: Int) -> Key { given(i, j) ?? Key(shown[i][j]) }
        // Every key counted is a top reason or a kept one: at most the shown reasons' total.
        var uses = SmallTable<Int>(capacity: shown.reduce(0) { $0 + $1.count })
        let topKeys = shown.indices.map { shown[$0].isEmpty ? nil : shownKey($0, 0) }
        for key in topKeys { if let key { uses[key.tableKey] = (uses[key.tableKey] ?? 0) + 1 } }
        var result: [[String]] = []
        result.reserveCapacity(shown.count)
        // A card keeps a handful of reasons: a list, not a set (one buffer for every card).
        var keys: [Key] = []
        keys.reserveCapacity(candidates)
        for (i, reasons) in shown.enumerated() {
            guard let top = reasons.first else {
                result.append([])
                continue
            }
            var kept: [String] = []
            kept.reserveCapacity(reasons.count)
            kept.append(top)
            keys.removeAll(keepingCapacity: true)
            keys.append(topKeys[i]!)
            func consider(_ sentence: String, _ k: Key) {
                guard !keys.contains(k), (uses[k.tableKey] ?? 0) < cap else { return }
                kept.append(sentence)
                keys.append(k)
                uses[k.tableKey] = (uses[k.tableKey] ?? 0) + 1
            }
            for j in reasons.indices.dropFirst() where kept.count < reasons.count { consider(reasons[j], shownKey(i, j)) }
            if kept.count < reasons.count {
                let (texts, textKeys) = more(i)
                for j in texts.indices where kept.count < reasons.count { consider(texts[j], textKeys?[j] ?? Key(texts[j])) }
            }
            result.append(kept)
        }
        return result
    }
}

extension Matcher {
    /// Varies the explanations of a deck's cards (`ExplanationVariety`), drawing each card's
    /// next-best reasons from the matcher.
    ///
    /// - Parameters:
    ///   - cards: The deck, in order; a card's explanations may start with a reason the matcher
    ///     does not give (the collaborative one), which stays its top reason.
    ///   - student: The student.
    ///   - weights: The weights the cards were scored with.
    /// - Complexity: O(n × candidates × (d + k)).
    public func varyExplanations(_ cards: inout [Recommendation], student: Student, weights: PreferenceWeights) {
        varyExplanations(&cards, candidates: [], student: student, weights: weights)
    }

    /// `varyExplanations(_:student:weights:)` with candidate reasons the cards were written with
    /// (`cardWithCandidates`): card i's next-best reasons are `candidates[i]` where it is given,
    /// else asked of the matcher.
    ///
    /// - Parameters:
    ///   - cards: The deck, in order.
    ///   - candidates: Per card, its candidate reasons or nil; empty: none given.
    ///   - student: The student.
    ///   - weights: The weights the cards were scored with.
    public func varyExplanations(_ cards: inout [Recommendation], candidates: [[String]?], student: Student,
                                 weights: PreferenceWeights) {
        varyExplanations(&cards, candidates: candidates, keys: CandidateKeys(), student: student, weights: weights)
    }

    /// `varyExplanations(_:candidates:student:weights:)` with the keys the matcher gave
    /// (`cardWithKeyedCandidates`): a card's keys, where given, key its explanations and its
    /// candidates instead of their text (the same result).
    func varyExplanations(_ cards: inout [Recommendation], candidates: [[String]?], keys: CandidateKeys, student: Student,
                          weights: PreferenceWeights) {
        precondition(candidates.isEmpty || candidates.count == cards.count, "varyExplanations: one candidate list per card")
        precondition(keys.isEmpty || keys.candidates.count == cards.count, "varyExplanations: one key list per card")
        guard cards.count > 1 else { return }
        let shown = cards.map(\.explanations)
        let catalog = self.catalog  // once: through the protocol, each read copies the catalog
        let varied = ExplanationVariety.vary(shown: shown, shownKey: { keys.shownKey(card: $0, place: $1) }) { i in
            if !candidates.isEmpty, let given = candidates[i] {
                // Keys only as many as the candidates (a matcher's contract; else keyed from the text).
                let givenKeys = keys.isEmpty ? nil : keys.candidates[i].flatMap { $0.count == given.count ? $0 : nil }
                return (given, givenKeys)
            }
            guard let row = catalog.row(of: cards[i].item.id) else { return ([], nil) }
            return (explanations(row: row, student: student, weights: weights, limit: ExplanationVariety.candidates), nil)
        }
        for i in cards.indices { cards[i].explanations = varied[i] }
    }
}

/// A deck's keys of its cards' reasons, where the matcher gave them (`cardWithKeyedCandidates`):
/// per card, the keys of its candidates (nil for a card without), whose first ones are its
/// explanations' keys, and the key of a reason put before its explanations, if any. Empty: none
/// given. Nothing is copied per card: a card's explanation keys are read from its candidates'.
struct CandidateKeys {
    private(set) var candidates: [[ExplanationVariety.Key]?] = []
    private var first: [ExplanationVariety.Key?] = []

    /// Whether no card has keys (none were given).
    var isEmpty: Bool { candidates.isEmpty }

    /// Room for `count` cards.
    mutating func reserve(_ count: Int) {
        candidates.reserveCapacity(count)
        first.reserveCapacity(count)
    }

    /// A card's keys: `keys` of its candidates, the first ones its explanations'.
    mutating func append(_ keys: [ExplanationVariety.Key]?) {
        candidates.append(keys)
        first.append(nil)
    }

    /// A reason put before card `i`'s explanations.
    mutating func insertFirst(_ sentence: String, card i: Int) {
        guard !candidates.isEmpty, candidates[i] != nil else { return }
        first[i] = ExplanationVariety.Key(sentence)
    }

    /// The key of card `i`'s explanation at place `j`, nil when the card has no keys (or, from a
    /// matcher that broke the contract, fewer keys than explanations: keyed from the text then).
    func shownKey(card i: Int, place j: Int) -> ExplanationVariety.Key? {
        guard !candidates.isEmpty, let keys = candidates[i] else { return nil }
        let k = first[i] == nil ? j : j - 1
        if k < 0 { return first[i] }
        return k < keys.count ? keys[k] : nil
    }

    /// Puts the cards' keys in the deck's new order (`Array.permute`).
    mutating func permute(source: [Int]) {
        guard !candidates.isEmpty else { return }
        candidates.permute(source: source)
        first.permute(source: source)
    }
}
