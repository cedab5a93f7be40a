import Foundation

// The JSON forms of the engine's values that responses and snapshots carry, written directly
// (`JSONWriter`); each is byte-identical to the type's `Encodable` form under `JSONEncoder` with
// sorted keys and unescaped slashes. Keys are in byte order, as `.sortedKeys` puts them.

extension LearningState: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{\"phase\":")
        w.string(phase.rawValue)
        w.raw(",\"preference_weights\":")
        try w.object(preferenceWeights.map { ($0.key, $0.value) }) { w, value in try w.number(value) }
        w.raw(",\"progress\":")
        try w.number(progress)
        w.raw("}")
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
