import Testing
@testable import SwipeRank
import SwipeRankNumerics

@Suite("Grades by quantile and varied explanations")
struct GradeScaleTests {
    /// The reference: the share of the sample scoring at least `x`, then the grade whose
    /// cumulative share covers it, computed by sorting and counting.
    static func referenceGrade(_ x: Double, sample: [Double]) -> Grade {
        let sorted = sample.sorted(by: >)
        for (grade, percent) in GradeScale.cumulativePercent {
            let position = Int((Double(percent) * Double(sorted.count) / 100).rounded(.up))
            if position >= 1, x >= sorted[min(position, sorted.count) - 1] { return grade }
        }
        return .F
    }

    @Test("the quantile rule against a reference computed by sorting", arguments: [1, 3, 10, 97, 1024])
    func quantiles(count: Int) {
        var rng = SplitMix64(seed: UInt64(count))
        let sample = (0..<count).map { _ in (Double(rng.next() % 10_000) / 10_000) }
        let scale = GradeScale(sampleMatchScores: sample.shuffled(using: &rng))
        for x in sample + [0, 1, 0.5] { #expect(scale.grade(matchScore: x) == Self.referenceGrade(x, sample: sample)) }
        // On distinct scores the shares are exact.
        let distinct = (0..<1000).map { Double($0) / 1000 }
        let grades = Dictionary(grouping: distinct, by: { GradeScale(sampleMatchScores: distinct).grade(matchScore: $0) }).mapValues(\.count)
        var expected: [Grade: Int] = [:], above = 0
        for (grade, percent) in GradeScale.cumulativePercent {
            expected[grade] = percent * 10 - above
            above = percent * 10
        }
        expected[.F] = 1000 - above
        #expect(grades == expected)
    }

    @Test("thresholds by selection equal the sorted sample's, calibrated or not, ties and all (400 seeded samples)")
    func selection() {
        var rng = SplitMix64(seed: 32)
        let calibration = MatchCalibration.default
        for trial in 0..<400 {
            let m = trial < 8 ? trial : Int(rng.next() % 1500) + 1
            // Few distinct values in some samples (long runs of ties), continuous ones in others.
            let levels = trial % 3 == 0 ? 4 : 1_000_000
            let raw = (0..<m).map { _ in Float(Int(rng.next() % UInt64(levels))) / Float(levels) * 8 - 2 }
            let sorted = raw.sorted(by: >)
            let expected = GradeScale.cumulativePercent.map { entry -> Double in
                guard m > 0 else { return .infinity }
                let position = Int((Double(entry.percent) * Double(m) / 100).rounded(.up))
                return calibration.cardMatchScore(raw: Double(sorted[min(max(position, 1), m) - 1]))
            }
            #expect(GradeScale(sample: raw.map(Double.init)) { calibration.cardMatchScore(raw: $0) }.thresholds == expected, "m = \(m)")
            let scores = raw.map { calibration.cardMatchScore(raw: Double($0)) }
            #expect(GradeScale(sampleMatchScores: scores).thresholds == expected, "m = \(m)")
        }
    }

    @Test("the sample: every row of a small catalog, 1,024 evenly spaced rows of a large one")
    func sample() {
        #expect(GradeScale.sampleRows(catalogCount: 5) == [0, 1, 2, 3, 4])
        let rows = GradeScale.sampleRows(catalogCount: 2294)
        #expect(rows.count == 1024 && Set(rows).count == 1024 && rows.first == 0 && rows.last! < 2294 && rows == rows.sorted())
        #expect(GradeScale.sampleRows(catalogCount: 0).isEmpty)
    }

    @Test("a scale read from every row's score samples rows ⌊i·N/m⌋, with and without item offsets, for catalogs around the sample size")
    func readSample() {
        var rng = SplitMix64(seed: 33)
        let matcher = Fixtures.matcher
        let calibration = matcher.calibration
        for n in [1, 5, 1_023, 1_024, 1_025, 2_294, 4_099, 20_000] {
            let raw = (0..<n).map { _ in Float.random(in: -3...3, using: &rng) }
            let offsets = (0..<n).map { _ in Float.random(in: -0.5...0.5, using: &rng) }
            for matchOffsets in [nil, offsets] {
                let sample = GradeScale.sampleRows(catalogCount: n).map { Double(raw[$0] - (matchOffsets?[$0] ?? 0)) }
                let reference = GradeScale(sample: sample) { calibration.cardMatchScore(raw: $0) }
                #expect(matcher.gradeScale(raw: raw, matchOffsets: matchOffsets) == reference, "N \(n) offsets \(matchOffsets != nil)")
            }
            // A NaN score among the sampled rows (the range the sampling finds is then not used):
            // the same thresholds, bit for bit, as the reference's selection with the NaN.
            var poisoned = raw
            let rows = GradeScale.sampleRows(catalogCount: n)
            poisoned[rows[rows.count / 2]] = .nan
            let sample = rows.map { Double(poisoned[$0]) }
            let reference = GradeScale(sample: sample) { calibration.cardMatchScore(raw: $0) }
            #expect(matcher.gradeScale(raw: poisoned, matchOffsets: nil).thresholds.map(\.bitPattern) == reference.thresholds.map(\.bitPattern),
                    "N \(n) with a NaN")
        }
    }

    @Test("a scale scored row by row equals one read from the full scores")
    func scoredSample() throws {
        let matcher = Fixtures.matcher
        let student = try matcher.student(Fixtures.bostonStudent)
        let weights = matcher.coldStartWeights(for: student)
        var raw: [Float] = []
        matcher.catalog.scores(weights: weights, terms: student.terms, into: &raw)
        let scored = matcher.gradeScale(student: student, weights: weights)
        let read = matcher.gradeScale(raw: raw, matchOffsets: nil)
        for (a, b) in zip(scored.thresholds, read.thresholds) { #expect(abs(a - b) <= 0.0002) }
    }

    @Test("a seeded 40-card session on the shipped schools: at least 3 grades, monotone in the match score")
    func gradesSeparateCards() throws {
        let engine = SwipeEngine(matcher: Fixtures.matcher)
        var session = try engine.session(studentID: "g", profile: Fixtures.bostonStudent, seed: 7)
        var cards: [Recommendation] = []
        for deck in 0..<4 {
            let dealt = session.recommendations(count: 10).recommendations
            cards += dealt
            for (i, card) in dealt.enumerated() {
                _ = try session.recordSwipe(Swipe(swipeID: "w\(deck)-\(i)", cardID: card.item.id, action: i % 3 == 0 ? .dislike : .like,
                                                  timestamp: Int64(deck * 10 + i)))
            }
        }
        #expect(cards.count == 40)
        #expect(Set(cards.map(\.grade)).count >= 3, "\(cards.map(\.grade.rawValue))")
        // Within one deck (one scale), a higher match score never has a worse grade.
        let order: [Grade] = [.A, .B, .C, .D, .F]
        for deck in 0..<4 {
            let slice = cards[(deck * 10)..<(deck * 10 + 10)]
            for a in slice { for b in slice where a.matchScore > b.matchScore {
                #expect(order.firstIndex(of: a.grade)! <= order.firstIndex(of: b.grade)!)
            } }
        }
    }

    @Test("variety: a sentence on more than a third of a deck only as a top reason; tops kept")
    func variety() {
        // Six cards that would all say "Public university" second and "Close to home (n mi)" third.
        let shown = (0..<6).map { ["Top \($0)", "Public university", "Close to home (\($0 * 7) mi)"] }
        // Alternatives named by letters: sentences that differ only in numbers count as one.
        let letters = ["a", "b", "c", "d", "e", "f"]
        let more = (0..<6).map { ["Top \($0)", "Public university", "Close to home (\($0 * 7) mi)", "Extra \(letters[$0 % 2])",
                                  "Other \(letters[$0])"] }
        let varied = ExplanationVariety.vary(shown: shown, candidates: more)
        #expect(varied.map(\.first) == shown.map(\.first))
        #expect(varied.map(\.count) == shown.map(\.count))
        var uses: [String: Int] = [:]
        for reasons in varied { for s in reasons.dropFirst() { uses[ExplanationVariety.key(s), default: 0] += 1 } }
        #expect(uses.values.allSatisfy { $0 <= 2 }, "\(uses)")  // ⌊6/3⌋
        // A sentence that is many cards' top reason stays their top reason.
        let tops = (0..<6).map { _ in ["Within your budget ($1/yr)", "B"] }
        #expect(ExplanationVariety.vary(shown: tops, candidates: tops).map(\.first) == tops.map(\.first))
        #expect(ExplanationVariety.key("Close to home (1,234 mi)") == ExplanationVariety.key("Close to home (7 mi)"))
    }

    @Test("sentence keys compare and hash as their key strings (2,000 seeded pairs with digits, separators, non-ASCII)")
    func sentenceKeys() {
        var rng = SplitMix64(seed: 61)
        let pieces = ["1", "23", ",", ".", "4.5", "1,234", " ", "mi", "é", "–", "$", "#", "a", ""]
        func sentence() -> String { (0..<Int(rng.next() % 6)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined() }
        // The key by its definition, over Characters: a run of digits, with the separators
        // inside it, becomes one "#".
        func referenceKey(_ s: String) -> String {
            var out = "", inNumber = false
            for c in s {
                if c.isASCII && c.isNumber {
                    if !inNumber { out.append("#") }
                    inNumber = true
                } else if inNumber && (c == "," || c == ".") {
                    continue
                } else {
                    inNumber = false
                    out.append(c)
                }
            }
            return out
        }
        var equalPairs = 0
        for _ in 0..<2000 {
            let (a, b) = (sentence(), sentence())
            #expect(ExplanationVariety.key(a) == referenceKey(a), "\(a)")
            let same = ExplanationVariety.key(a) == ExplanationVariety.key(b)
            let (ka, kb) = (ExplanationVariety.Key(a), ExplanationVariety.Key(b))
            #expect((ka == kb) == same, "\(a) | \(b)")
            if same { #expect(ka.hashValue == kb.hashValue) }
            equalPairs += same ? 1 : 0
        }
        #expect(equalPairs > 50)  // the pairs exercise equality, not only difference
    }

    @Test("a sentence key's digest, taken eight bytes at a time where no digit is, equals the digest of its key bytes one by one (20,000 seeded sentences of 0-297 bytes)")
    func sentenceKeyWords() {
        var rng = SplitMix64(seed: 62)
        // Long runs without digits (the word path), digits at every offset within a word, the
        // separators inside and after numbers, and bytes of 0x80 and above next to digits.
        let pieces = ["Close to home (", " mi)", "Strong graduate earnings ($", "90,000", " median)", "1", "23", ",", ".",
                      "4.5", "1,234", "é", "–", "/", ":", "0", "9", "abcdefgh", "ABCDEFGHIJKLMNOPQ", " ", "Ωmega", "#", ""]
        var equalKeys = 0
        var digests: [UInt64: [UInt8]] = [:]
        for _ in 0..<20_000 {
            let s = (0..<Int(rng.next() % 12)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
            let keyBytes = ExplanationVariety.keyBytes(s)
            let digest = ExplanationVariety.Key(s).digest
            #expect(digest == ExplanationVariety.Key.reference(keyBytes: keyBytes), "\(s)")
            // Equal keys share a digest, different ones do not (none collides in this sample).
            if let seen = digests[digest] {
                #expect(seen == keyBytes, "\(s): a digest shared with another key")
                equalKeys += 1
            }
            digests[digest] = keyBytes
        }
        #expect(equalKeys > 1_000)  // repeated keys occur, so equality is exercised too
        // The word test against the byte test, on words with one byte planted at each place.
        for _ in 0..<2_000 {
            let base = rng.next() & 0x7F7F_7F7F_7F7F_7F7F
            for place in 0..<8 {
                for byte: UInt64 in [0x2F, 0x30, 0x35, 0x39, 0x3A, 0xB0, 0xB9, 0xFF] {
                    let word = base & ~(0xFF << (8 * UInt64(place))) | byte << (8 * UInt64(place))
                    let expected = (0..<8).contains { (word >> (8 * UInt64($0))) & 0xFF >= 0x30 && (word >> (8 * UInt64($0))) & 0xFF <= 0x39 }
                    #expect(ExplanationVariety.Key.Digest.hasDigit(word) == expected, "\(String(word, radix: 16))")
                }
            }
        }
    }

    @Test("a served deck of the shipped schools obeys the variety rule")
    func deckVariety() throws {
        let engine = SwipeEngine(matcher: Fixtures.matcher)
        var session = try engine.session(studentID: "v", profile: Fixtures.bostonStudent, seed: 7)
        let deck = session.recommendations(count: 12).recommendations
        var onCards: [String: Int] = [:], asTop: [String: Int] = [:]
        for card in deck {
            for s in Set(card.explanations.map(ExplanationVariety.key)) { onCards[s, default: 0] += 1 }
            if let top = card.explanations.first { asTop[ExplanationVariety.key(top), default: 0] += 1 }
        }
        for (sentence, count) in onCards where count > deck.count / 3 {
            #expect(asTop[sentence] == count, "\(sentence) on \(count) cards, top on \(asTop[sentence] ?? 0)")
        }
    }
}
