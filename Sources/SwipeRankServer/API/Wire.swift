import Crypto
import Foundation
import SwipeRank

/// JSON in and out of the API: sorted keys (stable bytes for golden tests and caches), no
/// escaped slashes; request bodies go through the engine's strict checker first (line and
/// column for malformed JSON, duplicate keys, depth), then a decoder that rejects unknown keys.
enum WireJSON {
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        if let writable = value as? any JSONWritable {
            // The hot responses: the same bytes as below, written directly.
            var writer = JSONWriter()
            try writable.write(to: &writer)
            return Data(writer.bytes)
        }
        return try foundationEncode(value)
    }

    /// `JSONEncoder` with the wire options: every type without a `JSONWritable` form, and the
    /// reference the writers are tested against.
    static func foundationEncode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// SHA-256 (hex) of the canonical encoding: what "the same request" means for a retry.
    static func digest<T: Encodable>(_ value: T) -> String {
        let canonical = (try? encode(value)) ?? Data()
        var hex = [UInt8]()
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: canonical) { Hex.append(byte, to: &hex) }
        return String(decoding: hex, as: UTF8.self)
    }

    /// Decodes a request body, or throws the 400 that names the position or the field.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, what: String, maxBytes: Int) throws(APIError) -> T {
        do {
            return try JSONInput.decode(type, from: data, source: what, maxBytes: maxBytes)
        } catch {
            throw APIError.validation(error)
        }
    }
}

/// A client-chosen id (swipe id, save id): 1…128 of `A–Z a–z 0–9 . _ ~ : -` (UUIDs fit). The
/// service prefixes its own ids with `/`, which no client id can contain.
enum ClientID {
    static let maxLength = 128

    static func validate(_ id: String, field: String) throws(APIError) {
        guard !id.isEmpty, id.utf8.count <= maxLength,
              id.utf8.allSatisfy({ b in
                  (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                      || b == 0x2E || b == 0x5F || b == 0x7E || b == 0x3A || b == 0x2D
              })
        else {
            throw APIError.validation("\(field) must be 1…\(maxLength) characters of A-Z a-z 0-9 . _ ~ : -", field: field)
        }
    }
}

/// `POST /student/swipe` and each entry of `POST /student/sync`.
struct SwipeRequest: Codable, Hashable, Sendable {
    var swipeID: String
    /// The swiped item: `school_id` on the wire (the app contract's name, kept for every
    /// catalog so stored events and digests stay as they were), `item_id` accepted for it.
    var itemID: String
    var action: SwipeAction
    var timestamp: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case swipeID = "swipe_id", itemID = "school_id", action, timestamp
    }

    /// What a request may say: `item_id` is the generic name of `school_id`.
    private enum DecodingKeys: String, CodingKey, CaseIterable {
        case swipeID = "swipe_id", schoolAlias = "school_id", itemID = "item_id", action, timestamp
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(DecodingKeys.self)
        let c = try decoder.container(keyedBy: DecodingKeys.self)
        swipeID = try c.decode(String.self, forKey: .swipeID)
        itemID = try decodeItemID(c, school: .schoolAlias, item: .itemID)
        action = try c.decode(SwipeAction.self, forKey: .action)
        timestamp = try c.decode(Int64.self, forKey: .timestamp)
        try Self.checkTimestamp(timestamp, key: DecodingKeys.timestamp, decoder: decoder)
    }

    /// The largest timestamp accepted: 2⁵³ − 1 ms, exact in every JSON parser.
    static let maxTimestamp: Int64 = 9_007_199_254_740_991

    static func checkTimestamp(_ t: Int64, key: some CodingKey, decoder: any Decoder) throws {
        guard (0...maxTimestamp).contains(t) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [key],
                                                    debugDescription: "timestamp must be Unix milliseconds in 0…\(maxTimestamp)"))
        }
    }

    init(swipeID: String, itemID: String, action: SwipeAction, timestamp: Int64) {
        self.swipeID = swipeID
        self.itemID = itemID
        self.action = action
        self.timestamp = timestamp
    }

    var swipe: Swipe { Swipe(swipeID: swipeID, cardID: itemID, action: action, timestamp: timestamp) }

    /// Canonical bytes: a retry is "the same body" when these match.
    var digest: String {
        WireJSON.digest(self)
    }
}

/// `POST /student/sync`.
struct SyncRequest: Codable, Sendable {
    var swipes: [SwipeRequest]

    enum CodingKeys: String, CodingKey, CaseIterable { case swipes }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        swipes = try decoder.container(keyedBy: CodingKeys.self).decode([SwipeRequest].self, forKey: .swipes)
    }
}

/// `POST /student/feedback`.
struct FeedbackRequest: Codable, Sendable {
    var itemID: String
    var options: [FeedbackOption]

    enum CodingKeys: String, CodingKey, CaseIterable { case itemID = "school_id", options }
    private enum DecodingKeys: String, CodingKey, CaseIterable { case schoolAlias = "school_id", itemID = "item_id", options }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(DecodingKeys.self)
        let c = try decoder.container(keyedBy: DecodingKeys.self)
        itemID = try decodeItemID(c, school: .schoolAlias, item: .itemID)
        // Codes (`too_expensive`), or the English labels older clients and stored events hold.
        var list = try c.nestedUnkeyedContainer(forKey: .options)
        var options: [FeedbackOption] = []
        while !list.isAtEnd {
            let text = try list.decode(String.self)
            guard let option = FeedbackOption(codeOrLabel: text) else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: c.codingPath + [DecodingKeys.options, IndexKey(options.count)],
                    debugDescription: "\"\(text.prefix(64))\" is not a feedback option; use one of "
                        + FeedbackOption.allCases.map(\.code).joined(separator: ", ")))
            }
            options.append(option)
        }
        self.options = options
    }
}

/// An array position in a coding path (`options[2]` in an error).
struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { intValue.map(String.init) ?? "" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

/// A feedback question as the wire shows it: each option a stable code and its English label.
struct FeedbackPromptWire: Encodable, Sendable {
    var prompt: FeedbackPrompt

    struct Option: Encodable {
        var code: String
        var label: String
    }

    enum CodingKeys: String, CodingKey { case cardID = "card_id", reason, options }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(prompt.cardID, forKey: .cardID)
        try c.encode(prompt.reason, forKey: .reason)
        try c.encode(prompt.options.map { Option(code: $0.code, label: $0.label) }, forKey: .options)
    }
}

/// The item a request names: `item_id` or its alias `school_id`, exactly one of them.
func decodeItemID<K: CodingKey>(_ c: KeyedDecodingContainer<K>, school: K, item: K) throws -> String {
    switch (c.contains(school), c.contains(item)) {
    case (true, false): return try c.decode(String.self, forKey: school)
    case (false, true): return try c.decode(String.self, forKey: item)
    case (true, true):
        throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [item],
                                                debugDescription: "give item_id or its alias school_id, not both"))
    case (false, false):
        throw DecodingError.keyNotFound(item, .init(codingPath: c.codingPath, debugDescription: "item_id (or its alias school_id) is required"))
    }
}

/// `POST /student/schools/:id/save` (the body is optional).
struct SaveRequest: Codable, Sendable {
    var timestamp: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable { case timestamp }

    init(timestamp: Int64?) { self.timestamp = timestamp }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        timestamp = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Int64.self, forKey: .timestamp)
        if let timestamp { try SwipeRequest.checkTimestamp(timestamp, key: CodingKeys.timestamp, decoder: decoder) }
    }
}

/// `POST /student/batch`.
struct BatchRequest: Codable, Sendable {
    struct Operation: Codable, Sendable {
        var method: String
        var path: String
        var body: JSONValue?

        enum CodingKeys: String, CodingKey, CaseIterable { case method, path, body }

        init(from decoder: any Decoder) throws {
            try decoder.rejectUnknownKeys(CodingKeys.self)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            method = try c.decode(String.self, forKey: .method)
            path = try c.decode(String.self, forKey: .path)
            body = try c.decodeIfPresent(JSONValue.self, forKey: .body)
        }
    }

    var operations: [Operation]

    enum CodingKeys: String, CodingKey, CaseIterable { case operations }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        operations = try decoder.container(keyedBy: CodingKeys.self).decode([Operation].self, forKey: .operations)
    }
}

/// The result of one swipe: the learning state after it and any feedback question.
struct SwipeResponse: Encodable, Sendable, Equatable {
    var swipeID: String
    var outcome: String
    var learningState: LearningState
    var totalSwipes: Int
    var feedback: FeedbackPrompt?
    /// The card was not served to this student (reached by search or a detail page): learned
    /// from, but with no propensity, so off-policy estimates leave it out.
    var organic = false
    enum CodingKeys: String, CodingKey {
        case swipeID = "swipe_id", outcome, learningState = "learning_state", totalSwipes = "total_swipes", feedback, organic
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(swipeID, forKey: .swipeID)
        try c.encode(outcome, forKey: .outcome)
        try c.encode(learningState, forKey: .learningState)
        try c.encode(totalSwipes, forKey: .totalSwipes)
        try c.encode(feedback.map(FeedbackPromptWire.init), forKey: .feedback)  // explicit null: "no question" is an answer
        try c.encode(organic, forKey: .organic)
    }
}

/// The learning state and swipe count.
struct LearningStateResponse: Codable, Sendable {
    var learningState: LearningState
    var totalSwipes: Int
    var servedCards: Int
    var unseenCards: Int

    enum CodingKeys: String, CodingKey {
        case learningState = "learning_state", totalSwipes = "total_swipes", servedCards = "served_cards",
             unseenCards = "unseen_cards"
    }
}

/// A card as `fields=full` sends it: the recommendation (the shape of `swiperank recommend`)
/// plus its position in the student's deck.
struct FullCard: Encodable {
    var card: Recommendation
    var position: Int?
    /// `card.item` already written as JSON (`SummaryJSON`), or nil to write it.
    var schoolJSON: ArraySlice<UInt8>? = nil
    /// The catalog's names (`item` and no `matched_majors` outside colleges).
    var vocabulary: ItemVocabulary = .school

    enum CodingKeys: String, CodingKey { case position }

    func encode(to encoder: any Encoder) throws {
        guard vocabulary == .school else {
            var c = encoder.container(keyedBy: AnyKey.self)
            try c.encode(card.item, forKey: AnyKey(vocabulary.item))
            try c.encode(card.matchScore, forKey: AnyKey("match_score"))
            try c.encode(card.grade, forKey: AnyKey("grade"))
            try c.encode(card.explanations, forKey: AnyKey("explanations"))
            try c.encode(card.isProbe, forKey: AnyKey("is_probe"))
            if vocabulary.hasMajors { try c.encode(card.matchedMajors, forKey: AnyKey("matched_majors")) }
            try c.encodeIfPresent(card.distance, forKey: AnyKey("distance"))
            try c.encodeIfPresent(position, forKey: AnyKey("position"))
            return
        }
        try card.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(position, forKey: .position)
    }
}

/// A coding key named at run time (a catalog's wire names).
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A card as `fields=minimal` sends it.
struct MinimalCard: Encodable {
    var itemID: String
    var name: String
    var matchScore: Double
    var grade: Grade
    var isProbe: Bool
    var position: Int?
    /// The id's wire name (`school_id` or `item_id`).
    var vocabulary: ItemVocabulary = .school

    init(itemID: String, name: String, matchScore: Double, grade: Grade, isProbe: Bool, position: Int?, vocabulary: ItemVocabulary) {
        (self.itemID, self.name, self.matchScore, self.grade) = (itemID, name, matchScore, grade)
        (self.isProbe, self.position, self.vocabulary) = (isProbe, position, vocabulary)
    }

    init(_ card: Recommendation, position: Int?, vocabulary: ItemVocabulary = .school) {
        itemID = card.item.id
        name = card.item.name
        matchScore = card.matchScore
        grade = card.grade
        isProbe = card.isProbe
        self.position = position
        self.vocabulary = vocabulary
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(itemID, forKey: AnyKey(vocabulary.itemID))
        try c.encode(name, forKey: AnyKey("name"))
        try c.encode(matchScore, forKey: AnyKey("match_score"))
        try c.encode(grade, forKey: AnyKey("grade"))
        try c.encode(isProbe, forKey: AnyKey("is_probe"))
        try c.encodeIfPresent(position, forKey: AnyKey("position"))
    }
}

/// A card as `compressed=true` sends it: `i` id, `n` name, `l` location ("City, ST"), `m`
/// match score in whole percent, `img` the catalog's `image_url` (null without one), `p`
/// position, `q` probe.
struct CompressedCard: Encodable {
    var i: String
    var n: String
    var l: String?
    var m: Int
    var img: String?
    var p: Int?
    var q: Bool

    init(_ card: Recommendation, position: Int?) {
        i = card.item.id
        n = card.item.name
        let city = card.item.attributes["city"]?.text
        let state = card.item.attributes["state"]?.text
        l = [city, state].compactMap { $0 }.joined(separator: ", ").nilIfEmpty
        // Scores are in 0…1; clamped so no value can trap the conversion.
        m = card.matchScore.isFinite ? Int((min(max(card.matchScore, 0), 1) * 100).rounded()) : 0
        img = card.item.attributes["image_url"]?.text
        p = position
        q = card.isProbe
    }

    enum CodingKeys: String, CodingKey { case i, n, l, m, img, p, q }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(i, forKey: .i)
        try c.encode(n, forKey: .n)
        try c.encode(l, forKey: .l)
        try c.encode(m, forKey: .m)
        try c.encode(img, forKey: .img)
        try c.encodeIfPresent(p, forKey: .p)
        try c.encode(q, forKey: .q)
    }
}

/// How much of each card a response carries.
enum CardFields: String {
    case minimal, full
}

/// Cards in the requested shape.
enum CardList: Encodable {
    case full([FullCard])
    case minimal([MinimalCard])
    case compressed([CompressedCard])
    /// Minimal cards from a brief deck (`SwipeSession.briefDeck(count:)`): the same JSON as
    /// `minimal`, the ids and names read from `ItemLabelsJSON` by row.
    case brief(BriefCardList)

    /// - Parameters:
    ///   - cards: Each card with its position, if it has one.
    ///   - fields: Full or minimal cards.
    ///   - compressed: Short keys.
    ///   - summaries: The catalog's summaries as JSON, for full cards (written per card otherwise).
    ///   - vocabulary: The catalog's wire names.
    init(_ cards: [(Recommendation, Int?)], fields: CardFields, compressed: Bool, summaries: SummaryJSON? = nil,
         vocabulary: ItemVocabulary = .school) {
        if compressed {
            self = .compressed(cards.map { CompressedCard($0.0, position: $0.1) })
        } else if fields == .minimal {
            self = .minimal(cards.map { MinimalCard($0.0, position: $0.1, vocabulary: vocabulary) })
        } else {
            self = .full(cards.map { FullCard(card: $0.0, position: $0.1, schoolJSON: summaries?.json(of: $0.0.item), vocabulary: vocabulary) })
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case let .full(c): try c.encode(to: encoder)
        case let .minimal(c): try c.encode(to: encoder)
        case let .compressed(c): try c.encode(to: encoder)
        case let .brief(list): try list.minimalCards.encode(to: encoder)
        }
    }
}

/// A brief deck's cards with what writes them: the catalog they were dealt from (their rows'),
/// the service's labels, and the id's wire name.
struct BriefCardList {
    var cards: [BriefCard]
    var catalog: Catalog
    var labels: ItemLabelsJSON
    var vocabulary: ItemVocabulary

    /// The same cards as `MinimalCard`s (for `Encodable`; the service writes them with `JSONWriter`).
    var minimalCards: [MinimalCard] {
        cards.map { card in
            MinimalCard(itemID: catalog.ids[card.row], name: catalog.names[card.row], matchScore: card.matchScore,
                        grade: card.grade, isProbe: card.isProbe, position: card.position, vocabulary: vocabulary)
        }
    }
}

/// Every catalog item's id and name as JSON strings (quoted and escaped), written once when
/// the service starts: a minimal card is those two and four short fields, and escaping both
/// per card was a third of writing it. Above `Catalog.eagerSummaryLimit` items nothing is
/// written ahead (each card's are written when served), as for `SummaryJSON`.
struct ItemLabelsJSON: Sendable {
    private let catalog: Catalog
    /// Every row's id then name, back to back.
    private let bytes: [UInt8]
    /// Where each label starts: row r's id is `bytes[starts[2r]..<starts[2r + 1]]`, its name
    /// the next range; 2N + 1 offsets (empty when nothing is written ahead).
    private let starts: [Int]

    init(catalog: Catalog) {
        self.catalog = catalog
        guard catalog.count <= Catalog.eagerSummaryLimit else { (bytes, starts) = ([], []); return }
        var w = JSONWriter(capacity: catalog.count * 48)
        var starts = [0]
        starts.reserveCapacity(2 * catalog.count + 1)
        for row in 0..<catalog.count {
            w.string(catalog.ids[row])
            starts.append(w.bytes.count)
            w.string(catalog.names[row])
            starts.append(w.bytes.count)
        }
        (bytes, self.starts) = (w.bytes, starts)
    }

    /// Writes the id of `row` as a JSON string, from the table (`covers` its catalog).
    func writeID(row: Int, to w: inout JSONWriter) { w.raw(bytes[starts[2 * row]..<starts[2 * row + 1]]) }

    /// Writes the name of `row` as a JSON string, from the table (`covers` its catalog).
    func writeName(row: Int, to w: inout JSONWriter) { w.raw(bytes[starts[2 * row + 1]..<starts[2 * row + 2]]) }

    /// Whether the table holds `catalog`'s labels (it was written from that catalog, and was
    /// written at all); otherwise a card's are escaped when written.
    func covers(_ catalog: Catalog) -> Bool { !starts.isEmpty && self.catalog.sharesStorage(with: catalog) }
}

/// `GET /student/recommendations` and `/preload`.
struct DeckResponse: Encodable {
    var deckID: String?
    var recommendations: CardList
    var learningState: LearningState
    var totalSwipes: Int
    var preload: Bool
    /// How many of the cards were dealt by an earlier request and not played yet (they come
    /// first): a retried or repeated request returns them instead of using up new cards.
    var repeated: Int
    /// Nothing is left to deal: every card was served or judged. The deck still holds `repeated`.
    var exhausted: Bool
    enum CodingKeys: String, CodingKey {
        case deckID = "deck_id", recommendations, learningState = "learning_state", totalSwipes = "total_swipes", preload
        case repeated, exhausted
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(deckID, forKey: .deckID)
        try c.encode(exhausted, forKey: .exhausted)
        try c.encode(recommendations, forKey: .recommendations)
        try c.encode(learningState, forKey: .learningState)
        try c.encode(totalSwipes, forKey: .totalSwipes)
        try c.encode(preload, forKey: .preload)
        try c.encode(repeated, forKey: .repeated)
    }
}

extension ItemSummary.Value {
    /// The value as text (numbers printed plainly), nil for null.
    var text: String? {
        switch self {
        case let .text(s): s
        case let .number(n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .missing: nil
        }
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// Every catalog item's summary as JSON bytes, written once when the service starts: a full
/// card's school object is the same bytes every time it is served, and writing it (every
/// attribute, keys sorted) was most of a deck's JSON time. Above
/// `Catalog.eagerSummaryLimit` items nothing is written ahead (every card is written when
/// served): a million items' JSON would be more memory than their feature matrix.
///
/// The summaries lie back to back in one buffer: an array per item had cost a buffer of the
/// writer's starting capacity (1 KiB) each, for ~170 bytes of a restaurant's JSON.
struct SummaryJSON: Sendable {
    private let catalog: Catalog
    /// Every row's summary JSON, back to back.
    private let bytes: [UInt8]
    /// Row r's JSON is `bytes[starts[r]..<starts[r + 1]]`, empty for one the writer refused
    /// (written per card); N + 1 offsets, none when nothing is written ahead.
    private let starts: [Int]

    /// Writes every item's summary.
    init(catalog: Catalog) {
        self.catalog = catalog
        guard catalog.count <= Catalog.eagerSummaryLimit else { (bytes, starts) = ([], []); return }
        var all = JSONWriter(capacity: catalog.count * 192)
        var starts = [0]
        starts.reserveCapacity(catalog.count + 1)
        for row in 0..<catalog.count {
            var one = JSONWriter(capacity: 512)
            if (try? catalog.summary(row: row).write(to: &one)) != nil { all.raw(one.bytes) }
            starts.append(all.bytes.count)
        }
        // Copied to its length: the capacity reserved above may have been generous.
        (bytes, self.starts) = (Array(all.bytes[...]), starts)
    }

    /// The JSON of the catalog's summary of `summary`'s id when `summary` carries that id and
    /// name (every matcher serves the catalog's summary; a renamed one is written per card),
    /// else nil.
    func json(of summary: ItemSummary) -> ArraySlice<UInt8>? {
        guard !starts.isEmpty, let row = catalog.row(of: summary.id), summary.name == catalog.names[row] else { return nil }
        let json = bytes[starts[row]..<starts[row + 1]]
        return json.isEmpty ? nil : json
    }
}

/// Lowercase hex digits for ids and digests.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Appends `byte` as two lowercase hex digits.
    static func append(_ byte: UInt8, to text: inout [UInt8]) {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 15)])
    }
}
