import Foundation
import SwipeRank
import SwipeRankNumerics
import Testing

/// `ItemSummary` keeps its fields in one shared object (a card copies one reference): it must
/// still behave as a value of three fields. Equality and hashing by content, whoever built
/// it; a set changes that copy alone; JSON as before.
@Suite struct ItemSummaryTests {
    static func random(_ rng: inout SplitMix64) -> ItemSummary {
        let words = ["a", "b", "Boston", "ünï", ""]
        var attributes: [String: ItemSummary.Value] = [:]
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            let key = words[Int.random(in: 0..<words.count, using: &rng)]
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: attributes[key] = .text(words[Int.random(in: 0..<words.count, using: &rng)])
            case 1: attributes[key] = .number(Double(Int.random(in: -3...3, using: &rng)))
            default: attributes[key] = .missing
            }
        }
        return ItemSummary(id: words[Int.random(in: 0..<3, using: &rng)], name: words[Int.random(in: 0..<words.count, using: &rng)],
                           attributes: attributes)
    }

    @Test("equal and hashed by id, name and attributes; a set changes one copy only", arguments: 0..<40)
    func valueSemantics(seed: UInt64) throws {
        var rng = SplitMix64(seed: 4_400 + seed)
        let a = Self.random(&rng), b = Self.random(&rng)
        // Built apart from the same fields: equal, the same hash.
        let rebuilt = ItemSummary(id: a.id, name: a.name, attributes: a.attributes)
        #expect(rebuilt == a && rebuilt.hashValue == a.hashValue)
        #expect((a == b) == (a.id == b.id && a.name == b.name && a.attributes == b.attributes), "seed \(seed)")
        if a == b { #expect(a.hashValue == b.hashValue) }
        // A set on a copy leaves the original as it was.
        var copy = a
        copy.name += "!"
        #expect(copy.name == a.name + "!" && copy.id == a.id && copy.attributes == a.attributes && copy != a)
        copy.name = a.name
        #expect(copy == a)
        copy.attributes["x"] = .number(1)
        #expect(a.attributes["x"] == nil && copy.attributes["x"] == .number(1) && copy.id == a.id)
        copy.id += "?"
        #expect(copy.id == a.id + "?" && a.id != copy.id)
        // JSON: the same object as before the fields were shared (id, name, attributes flat).
        let decoded = try JSONDecoder().decode(ItemSummary.self, from: JSONEncoder().encode(a))
        #expect(decoded == a)
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(a)) as? [String: Any])
        #expect(object["id"] as? String == a.id && object["name"] as? String == a.name)
        #expect(Set(object.keys) == Set(["id", "name"]).union(a.attributes.keys))
    }
}
