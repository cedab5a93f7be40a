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
        var key = "", inNumber = false
        for ch in sentence {
            if ch.isASCII && ch.isNumber {
                if !inNumber { key.append("#") }
                inNumber = true
            } else if inNumber && (ch == "," || ch == ".") {
                continue
            } else {
                inNumber = false
                key.append(ch)
            }
        }
        return key
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
        let cap = max(1, shown.count / 3)
        var uses: [String: Int] = [:]
        for reasons in shown { if let top = reasons.first { uses[key(top), default: 0] += 1 } }
        return zip(shown, candidates).map { reasons, more in
            guard let top = reasons.first else { return [] }
            var kept = [top], keys: Set<String> = [key(top)]
            for sentence in reasons.dropFirst() + more where kept.count < reasons.count {
                let k = key(sentence)
                guard !keys.contains(k), uses[k, default: 0] < cap else { continue }
                kept.append(sentence)
                keys.insert(k)
                uses[k, default: 0] += 1
            }
            return kept
        }
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
        guard cards.count > 1 else { return }
        let more = cards.map { card -> [String] in
            guard let row = catalog.row(of: card.item.id) else { return [] }
            return explanations(row: row, student: student, weights: weights, limit: ExplanationVariety.candidates)
        }
        let varied = ExplanationVariety.vary(shown: cards.map(\.explanations), candidates: more)
        for i in cards.indices { cards[i].explanations = varied[i] }
    }
}
