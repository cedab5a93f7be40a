import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
@testable import SwipeRankServer
import SwipeRankNumerics
import Testing

/// The hand-written JSON of the hot responses against the reference, Foundation's
/// `JSONEncoder` with the same options, on seeded random values: byte for byte.
@Suite struct JSONWriterTests {
    /// Random strings that reach every escape: quotes, backslashes, slashes, every control
    /// character, DEL, non-ASCII, line separators, emoji, combining marks.
    struct Values {
        var rng: SplitMix64
        static let pieces = ["a", "Z", "0", " ", "\"", "\\", "/", "\u{7f}", "é", "e\u{301}", "😀", "\u{2028}", "_", "-", "Ä"]
            + (0..<32).map { String(UnicodeScalar(UInt8($0))) }

        mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        mutating func bool() -> Bool { rng.next() % 2 == 0 }

        mutating func string(max: Int = 12) -> String {
            (0..<int(max + 1)).map { _ in Self.pieces[int(Self.pieces.count)] }.joined()
        }

        mutating func key() -> String {
            // Keys that sort differently by bytes, by case and numerically.
            ["a", "a10", "a9", "B", "_x", "Z1", "é", "id", "name", "city", "state", "image_url", string(max: 4)][int(13)]
        }

        mutating func double() -> Double {
            switch int(6) {
            case 0:
                let d = Double(bitPattern: rng.next())
                return d.isFinite ? d : 0.5
            case 1: return Double(int(2_000_001)) - 1_000_000
            case 2: return (Double(int(10_001)) / 10_000)
            case 3: return [0, -0.0, 1, 1e15, 1e16, 1e21, 1e-7, 5e-324, 1.7976931348623157e308][int(9)]
            case 4: return Double(rng.next() >> 11) * 0x1p-53 * pow(10, Double(int(40)) - 20)
            default: return -Double(int(1_000)) / 7
            }
        }

        mutating func summary() -> ItemSummary {
            var attributes: [String: ItemSummary.Value] = [:]
            // One in four has many attributes: more keys to sort than a learning state's.
            let many = int(4) == 0
            for _ in 0..<(many ? 33 + int(60) : int(8)) {
                attributes[many ? key() + string(max: 3) : key()] = [ItemSummary.Value.text(string()), .number(double()), .missing][int(3)]
            }
            return ItemSummary(id: string(), name: string(), attributes: attributes)
        }

        mutating func learningState() -> LearningState {
            var weights: [String: Double] = [:]
            for _ in 0..<int(12) { weights[key()] = double() }
            return LearningState(phase: LearningPhase.allCases[int(3)], progress: double(), preferenceWeights: weights)
        }

        mutating func recommendation() -> Recommendation {
            Recommendation(item: summary(), matchScore: double(), grade: Grade.allCases[int(Grade.allCases.count)],
                           explanations: (0..<int(4)).map { _ in string() }, isProbe: bool(),
                           matchedMajors: (0..<int(3)).map { _ in string() }, distance: bool() ? double() : nil)
        }

        mutating func deck() -> DeckResponse {
            let cards = (0..<int(6)).map { _ in (recommendation(), bool() ? int(10_000) : nil) }
            return DeckResponse(deckID: bool() ? string() : nil,
                                recommendations: CardList(cards, fields: bool() ? .full : .minimal, compressed: int(3) == 0),
                                learningState: learningState(), totalSwipes: int(1_000), preload: bool(), repeated: int(50), exhausted: bool())
        }

        mutating func feedback() throws -> FeedbackPrompt? {
            guard bool() else { return nil }
            let options = FeedbackOption.allCases.filter { _ in bool() }.map { #""\#($0.rawValue)""# }.joined(separator: ",")
            let json = #"{"card_id":\#(String(decoding: try WireJSON.foundationEncode(string()), as: UTF8.self)),"reason":"\#(bool() ? "probe" : "pattern_break")","options":[\#(options)]}"#
            return try JSONDecoder().decode(FeedbackPrompt.self, from: Data(json.utf8))
        }

        mutating func served() -> ServedPayload {
            ServedPayload(count: int(50), preload: bool(), cards: (0..<int(5)).map { _ in
                .init(cardID: string(), position: int(5_000), band: bool() ? string() : nil, isProbe: bool(),
                      propensity: double(), predictedMatch: double())
            }, modelVersion: bool() ? string() : nil, arm: bool() ? string() : nil)
        }
    }

    static func same<T: Encodable>(_ value: T, _ what: String, _ i: Int) throws {
        let fast = try WireJSON.encode(value)
        let reference = try WireJSON.foundationEncode(value)
        #expect(fast == reference, "\(what) #\(i):\n  writer    \(String(decoding: fast, as: UTF8.self))\n  reference \(String(decoding: reference, as: UTF8.self))")
    }

    @Test("every writer equals JSONEncoder byte for byte on 400 seeded random values each")
    func matchesFoundation() throws {
        var v = Values(rng: SplitMix64(seed: 2026))
        var large = 0
        for i in 0..<400 {
            try Self.same(v.deck(), "deck", i)
            try Self.same(v.learningState(), "learning state", i)
            try Self.same(SwipeResponse(swipeID: v.string(), outcome: v.bool() ? "recorded" : "duplicate",
                                        learningState: v.learningState(), totalSwipes: v.int(100), feedback: try v.feedback(), organic: v.bool()), "swipe", i)
            try Self.same(SwipeRequest(swipeID: v.string(), itemID: v.string(), action: v.bool() ? .like : .dislike,
                                       timestamp: Int64(v.rng.next() % UInt64(SwipeRequest.maxTimestamp + 1))), "swipe request", i)
            try Self.same(v.served(), "served payload", i)
            try Self.same(LearningStateResponse(learningState: v.learningState(), totalSwipes: v.int(99), servedCards: v.int(999),
                                                unseenCards: v.int(9_999)), "learning state response", i)
            let summary = v.summary()
            if summary.attributes.count > 32 { large += 1 }
            try Self.same(summary, "summary", i)
        }
        #expect(large > 20, "items of more than 32 attributes written: \(large)")
    }

    @Test("full cards written from the summaries written once equal JSONEncoder on every school")
    func cachedSummaries() throws {
        let engine = Fixtures.engine
        let summaries = SummaryJSON(catalog: engine.matcher.catalog)
        var session = try engine.session(studentID: "json", profile: StudentProfile(homeState: "OH", annualBudget: 25_000), seed: 4)
        var cards = session.recommendations(count: engine.matcher.catalog.count).recommendations
        #expect(cards.count == engine.matcher.catalog.count)
        // A summary that is not the catalog's (another name) is written, not taken from the cache.
        cards[0].item.name += " (renamed)"
        for (i, card) in cards.enumerated() {
            let fast = try WireJSON.encode(CardList([(card, i + 1)], fields: .full, compressed: false, summaries: summaries))
            let reference = try WireJSON.foundationEncode(CardList([(card, i + 1)], fields: .full, compressed: false))
            #expect(fast == reference, "school \(card.item.id)")
        }
        #expect(summaries.json(of: cards[0].item) == nil)
        #expect(summaries.json(of: cards[1].item) != nil)
    }

    @Test("the summaries written once, back to back, are each item's own JSON, on a generated catalog")
    func packedSummaries() throws {
        let catalog = try SyntheticCatalog.catalog(items: 777, seed: 12)
        let summaries = SummaryJSON(catalog: catalog)
        for row in 0..<catalog.count {
            var w = JSONWriter()
            try catalog.summary(row: row).write(to: &w)
            #expect(summaries.json(of: catalog.summary(row: row)).map { Array($0) } == w.bytes, "row \(row)")
        }
        // Not the catalog's item, or renamed: written per card.
        let first = catalog.summary(row: 0)
        #expect(summaries.json(of: ItemSummary(id: "not-an-item", name: first.name, attributes: first.attributes)) == nil)
        #expect(summaries.json(of: ItemSummary(id: first.id, name: first.name + "!", attributes: first.attributes)) == nil)
    }

    @Test("past eagerSummaryLimit items no summary or label is written ahead: cards write their own")
    func nothingAheadPastTheLimit() throws {
        for n in [Catalog.eagerSummaryLimit, Catalog.eagerSummaryLimit + 1] {
            let catalog = try SyntheticCatalog.catalog(items: n, seed: 31)
            let summary = catalog.summary(row: n - 1)
            #expect((SummaryJSON(catalog: catalog).json(of: summary) != nil) == (n <= Catalog.eagerSummaryLimit), "\(n) items")
            #expect(ItemLabelsJSON(catalog: catalog).covers(catalog) == (n <= Catalog.eagerSummaryLimit), "\(n) items")
        }
    }

    @Test("brief cards written from the labels table equal JSONEncoder's minimal cards, on ids and names with escapes, both vocabularies")
    func briefCards() throws {
        // A synthetic catalog whose ids and names carry quotes, backslashes, slashes, tabs and
        // non-ASCII (CSV-quoted), so the table's escapes are checked, not only plain names.
        var v = Values(rng: SplitMix64(seed: 2027))
        let odd = ["\"", "\\", "/", "\t", "é", "😀", "e\u{301}", "a", "Z", " "]
        func field(_ prefix: String = "") -> String {
            "\"" + (prefix + (0..<(1 + v.int(8))).map { _ in odd[v.int(odd.count)] }.joined()).replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        var lines = SyntheticCatalog.csv(items: 60, seed: 5).split(separator: "\n").map(String.init)
        for i in 1..<lines.count {
            var columns = lines[i].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            (columns[0], columns[1]) = (field("r\(i)"), field())  // the row number keeps the ids distinct
            lines[i] = columns.joined(separator: ",")
        }
        let catalog = try Catalog(table: CSVTable(text: lines.joined(separator: "\n") + "\n", source: "odd.csv"), schema: SyntheticCatalog.schema)
        let other = try SyntheticCatalog.catalog(items: 60, seed: 6)  // not the table's: its labels are written per card
        let labels = ItemLabelsJSON(catalog: catalog)
        #expect(catalog.names.contains { $0.contains("\"") } && catalog.ids.contains { $0.contains("\\") })
        for i in 0..<200 {
            let from = v.int(4) == 0 ? other : catalog
            let cards = (0..<v.int(12)).map { _ in
                BriefCard(row: v.int(from.count), position: 1 + v.int(100_000), matchScore: Double(v.int(10_001)) / 10_000,
                          grade: Grade.allCases[v.int(Grade.allCases.count)], isProbe: v.bool())
            }
            let vocabulary: ItemVocabulary = v.bool() ? .school : .generic
            let list = CardList.brief(BriefCardList(cards: cards, catalog: from, labels: labels, vocabulary: vocabulary))
            // The reference: the same cards as `MinimalCard`s from the catalog's strings, through JSONEncoder.
            let minimal = cards.map { card in
                MinimalCard(itemID: from.ids[card.row], name: from.names[card.row], matchScore: card.matchScore, grade: card.grade,
                            isProbe: card.isProbe, position: card.position, vocabulary: vocabulary)
            }
            let fast = try WireJSON.encode(list), reference = try WireJSON.foundationEncode(CardList.minimal(minimal))
            #expect(fast == reference, "list #\(i):\n  writer    \(String(decoding: fast, as: UTF8.self))\n  reference \(String(decoding: reference, as: UTF8.self))")
            #expect(try WireJSON.foundationEncode(list) == reference)
        }
    }

    @Test("a learning state from a list sorted once equals, hashes and writes as the one from its dictionary")
    func learningStateLists() throws {
        var v = Values(rng: SplitMix64(seed: 2029))
        for i in 0..<400 {
            let state = v.learningState()
            let named = state.preferenceWeights
            // The names' order built from any order of them, as a matcher builds it once.
            let order = NamedWeightKeys(Array(named.keys).shuffled(using: &v.rng))
            let list = NamedWeightList(order: order, values: order.names.map { named[$0]! })
            let listed = LearningState(phase: state.phase, progress: state.progress, weightList: list)
            #expect(listed == state && listed.hashValue == state.hashValue && listed.preferenceWeights == named, "state #\(i)")
            var fromList = JSONWriter(), fromDictionary = JSONWriter()
            try listed.write(to: &fromList)
            try LearningState(phase: state.phase, progress: state.progress, preferenceWeights: named).write(to: &fromDictionary)
            #expect(fromList.bytes == fromDictionary.bytes, "state #\(i)")
            var deck = v.deck()
            deck.learningState = listed
            try Self.same(deck, "deck with a listed state", i)
            try Self.same(SwipeResponse(swipeID: v.string(), outcome: "recorded", learningState: listed, totalSwipes: v.int(100),
                                        feedback: nil, organic: v.bool()), "swipe with a listed state", i)
            // Another value or another name is another state.
            if let first = named.keys.first {
                var changed = named
                changed[first] = named[first]! == 0 ? 1 : -named[first]!  // x + 1 is x for a large x
                #expect(LearningState(phase: state.phase, progress: state.progress, preferenceWeights: changed) != listed)
                changed = named
                changed[first] = nil
                changed[first + "!"] = named[first]!
                #expect(LearningState(phase: state.phase, progress: state.progress, preferenceWeights: changed) != listed)
            }
        }
    }

    /// A number as the writer wrote every number before its four-decimal path: `description`,
    /// a trailing `.0` dropped.
    static func describedNumber(_ value: Double) -> String {
        let text = value.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// Records an issue when the writer's text of `value` is not `describedNumber(value)`
    /// (compared first: an expectation per value was most of this test's time).
    static func check(_ value: Double) throws {
        var w = JSONWriter()
        try w.number(value)
        let text = String(decoding: w.bytes, as: UTF8.self)
        if text != describedNumber(value) { Issue.record("\(value.bitPattern): wrote \(text), description \(describedNumber(value))") }
    }

    @Test("numbers of four decimals or fewer are written from their digits as description writes them; integers as String does")
    func fourDecimalNumbers() throws {
        // Every multiple of 10⁻⁴ within ±30, and each one's neighbouring doubles (not four-decimal
        // values: the general path), then seeded random ones up to ±10⁹ and past the fast path's edge.
        for k in -300_000...300_000 {
            let x = Double(k) / 10_000
            try Self.check(x)
            if k % 97 == 0 {
                for y in [x.nextUp, x.nextDown] { try Self.check(y) }
            }
        }
        var rng = SplitMix64(seed: 2028)
        for i in 0..<200_000 {
            let bound: UInt64 = [10_000, 100_000_000, 10_000_000_000_000, 20_000_000_000_000][i % 4]
            let k = Int64(rng.next() % (2 * bound + 1)) - Int64(bound)
            let x = Double(k) / 10_000
            try Self.check(x)
            let y = Double(bitPattern: rng.next())
            if y.isFinite { try Self.check(y) }
        }
        for x in [0.0, -0.0, 0.0001, -0.0001, 0.00005, 1e-5, 99_999.99995, 999_999_999.9999, 1e9, 1e13, 1.0, -1.0, 0.1 + 0.2] {
            try Self.check(x)
        }
        for value in [0, 1, -1, 9, 10, -10, 1_234_567, Int.max, Int.min, Int.max - 1] + (0..<1_000).map({ _ in Int(bitPattern: UInt(rng.next())) }) {
            var w = JSONWriter()
            w.number(value)
            #expect(String(decoding: w.bytes, as: UTF8.self) == String(value))
        }
    }

    @Test("a number JSON cannot carry is an error in the writer too")
    func nonFinite() {
        for bad in [Double.nan, .infinity, -.infinity] {
            let state = LearningState(phase: .stable, progress: bad, preferenceWeights: [:])
            #expect(throws: EncodingError.self) { try WireJSON.foundationEncode(state) }
            #expect(throws: EncodingError.self) { try WireJSON.encode(state) }
        }
    }
}
