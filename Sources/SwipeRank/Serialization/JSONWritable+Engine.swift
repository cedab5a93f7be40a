import Foundation

// The JSON forms of the engine's values that responses and snapshots carry, written directly
// (`JSONWriter`); each is byte-identical to the type's `Encodable` form under `JSONEncoder` with
// sorted keys and unescaped slashes. Keys are in byte order, as `.sortedKeys` puts them.

extension LearningState: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{\"phase\":")
        w.string(phase.rawValue)
        // The list is in the sorted keys' order, its keys escaped once per matcher.
        w.raw(",\"preference_weights\":{")
        let keys = weightList.order.keys, values = weightList.values
        for i in values.indices {
            if i > 0 { w.raw(",") }
            w.raw(keys[i])
            try w.number(values[i])
        }
        w.raw("},\"progress\":")
        try w.number(progress)
        w.raw("}")
    }
}

/// A matcher's named-weight keys (`Matcher.namedWeights(_:)`), sorted as `.sortedKeys` sorts
/// them and written as JSON keys once: every deck and swipe answer writes a learning state, and
/// sorting its keys and escaping them again was half of writing it. `NamedWeightList` keeps one.
package struct NamedWeightKeys: Sendable, Hashable {
    /// The names, in the order JSON writes them.
    package let names: [String]
    /// `"name":` for each name, in that order.
    package let keys: [[UInt8]]

    /// The keys of the given names (any order, each once).
    package init<S: Sequence>(_ names: S) where S.Element == String {
        self.names = names.sorted(by: JSONWriter.precedes)
        keys = self.names.map { name in
            var w = JSONWriter(capacity: name.utf8.count + 3)
            w.key(name)
            return w.bytes
        }
    }
}

extension ItemSummary.Value: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        switch self {
        case let .text(text): w.string(text)
        case let .number(number): try w.number(number)
        case .missing: w.null()
        }
    }
}

extension ItemSummary: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        var entries: [(key: String, value: Value)] = [("id", .text(id)), ("name", .text(name))]
        entries.reserveCapacity(attributes.count + 2)
        for (key, value) in attributes where key != "id" && key != "name" { entries.append((key, value)) }
        try w.object(entries) { w, value in try value.write(to: &w) }
    }
}

extension FeedbackPrompt: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{\"card_id\":")
        w.string(cardID)
        w.raw(",\"options\":")
        w.strings(options.map(\.rawValue))
        w.raw(",\"reason\":")
        w.string(reason.rawValue)
        w.raw("}")
    }
}

extension ServedCard: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{")
        if let action {
            w.raw("\"action\":")
            w.string(action.rawValue)
            w.raw(",")
        }
        if let band {
            w.raw("\"band\":")
            w.string(band.rawValue)
            w.raw(",")
        }
        w.raw("\"card_id\":")
        w.string(cardID)
        w.raw(",\"is_probe\":")
        w.bool(isProbe)
        w.raw(",\"position\":")
        w.number(position)
        w.raw(",\"predicted_match\":")
        try w.number(predictedMatch)
        w.raw(",\"propensity\":")
        try w.number(propensity)
        w.raw(",\"row\":")
        w.number(row)
        w.raw("}")
    }
}
