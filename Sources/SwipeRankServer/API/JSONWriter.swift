import Foundation
import SwipeRank

// Keys in each writer below are in byte order, as `.sortedKeys` puts them.

extension FullCard: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{")
        if let distance = card.distance {
            w.raw("\"distance\":")
            try w.number(distance)
            w.raw(",")
        }
        w.raw("\"explanations\":")
        w.strings(card.explanations)
        w.raw(",\"grade\":")
        w.string(card.grade.rawValue)
        w.raw(",\"is_probe\":")
        w.bool(card.isProbe)
        if vocabulary != .school {
            // Generic catalogs: "item" sorts before "match_score"; no majors.
            w.raw(Array(",\"\(vocabulary.item)\":".utf8))
            if let schoolJSON { w.raw(schoolJSON) } else { try card.item.write(to: &w) }
        }
        w.raw(",\"match_score\":")
        try w.number(card.matchScore)
        if vocabulary.hasMajors {
            w.raw(",\"matched_majors\":")
            w.strings(card.matchedMajors)
        }
        if let position {
            w.raw(",\"position\":")
            w.number(position)
        }
        if vocabulary == .school {
            w.raw(",\"school\":")
            if let schoolJSON { w.raw(schoolJSON) } else { try card.item.write(to: &w) }
        }
        w.raw("}")
    }
}

extension MinimalCard: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        let school = vocabulary == .school
        try MinimalCard.write(grade: grade, isProbe: isProbe, matchScore: matchScore, position: position, school: school,
                              idKey: school ? [] : Array(",\"\(vocabulary.itemID)\":".utf8), to: &w,
                              id: { $0.string(itemID) }, name: { $0.string(name) })
    }

    /// One minimal card's JSON, its keys in `.sortedKeys` order, the id and name written by the
    /// caller (escaped now, or from `ItemLabelsJSON`): the one layout both card sources share.
    ///
    /// - Parameters:
    ///   - school: Whether the id's key is `school_id` (written last) rather than `idKey`
    ///     (`,"item_id":`, which sorts before `match_score`).
    static func write(grade: Grade, isProbe: Bool, matchScore: Double, position: Int?, school: Bool, idKey: [UInt8],
                      to w: inout JSONWriter, id: (inout JSONWriter) -> Void, name: (inout JSONWriter) -> Void) throws {
        w.raw("{\"grade\":")
        w.string(grade.rawValue)
        if isProbe { w.raw(",\"is_probe\":true") } else { w.raw(",\"is_probe\":false") }
        if !school {
            w.raw(idKey)
            id(&w)
        }
        w.raw(",\"match_score\":")
        try w.number(matchScore)
        w.raw(",\"name\":")
        name(&w)
        if let position {
            w.raw(",\"position\":")
            w.number(position)
        }
        if school {
            w.raw(",\"school_id\":")
            id(&w)
        }
        w.raw("}")
    }
}

extension BriefCardList {
    /// The cards as `MinimalCard.write(to:)` writes them, byte for byte, the id and name from
    /// the labels table when it holds this catalog.
    func write(to w: inout JSONWriter) throws {
        // The vocabulary compared, its key written and the table checked once, not per card.
        let school = vocabulary == .school, idKey = school ? [] : Array(",\"\(vocabulary.itemID)\":".utf8)
        let table = labels.covers(catalog)
        w.raw("[")
        for i in cards.indices {
            let card = cards[i]
            if i > 0 { w.raw(",") }
            try MinimalCard.write(grade: card.grade, isProbe: card.isProbe, matchScore: card.matchScore, position: card.position,
                                  school: school, idKey: idKey, to: &w,
                                  id: { table ? labels.writeID(row: card.row, to: &$0) : $0.string(catalog.ids[card.row]) },
                                  name: { table ? labels.writeName(row: card.row, to: &$0) : $0.string(catalog.names[card.row]) })
        }
        w.raw("]")
    }
}

extension CompressedCard: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{\"i\":")
        w.string(i)
        w.raw(",\"img\":")
        w.string(img)
        w.raw(",\"l\":")
        w.string(l)
        w.raw(",\"m\":")
        w.number(m)
        w.raw(",\"n\":")
        w.string(n)
        if let p {
            w.raw(",\"p\":")
            w.number(p)
        }
        w.raw(",\"q\":")
        w.bool(q)
        w.raw("}")
    }
}

extension CardList: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        switch self {
        case let .full(cards): try CardList.write(cards, to: &w)
        case let .minimal(cards): try CardList.write(cards, to: &w)
        case let .compressed(cards): try CardList.write(cards, to: &w)
        case let .brief(list): try list.write(to: &w)
        }
    }

    /// `JSONWriter.array(_:)` compiled in this module, so it is specialized for each card type:
    /// the engine module's generic one went through the iterator's and the element's witnesses
    /// and looked up type metadata for every card.
    private static func write<Card: JSONWritable>(_ cards: [Card], to w: inout JSONWriter) throws {
        w.raw("[")
        for i in cards.indices {
            if i > 0 { w.raw(",") }
            try cards[i].write(to: &w)
        }
        w.raw("]")
    }
}

extension DeckResponse: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{\"deck_id\":")
        w.string(deckID)
        w.raw(",\"exhausted\":")
        w.bool(exhausted)
        w.raw(",\"learning_state\":")
        try learningState.write(to: &w)
        w.raw(",\"preload\":")
        w.bool(preload)
        w.raw(",\"recommendations\":")
        try recommendations.write(to: &w)
        w.raw(",\"repeated\":")
        w.number(repeated)
        w.raw(",\"total_swipes\":")
        w.number(totalSwipes)
        w.raw("}")
    }
}

extension SwipeResponse: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{\"feedback\":")
        if let feedback {
            w.raw("{\"card_id\":")
            w.string(feedback.cardID)
            w.raw(",\"options\":[")
            for (i, option) in feedback.options.enumerated() {
                w.raw(i == 0 ? "{\"code\":" : ",{\"code\":")
                w.string(option.code)
                w.raw(",\"label\":")
                w.string(option.label)
                w.raw("}")
            }
            w.raw("],\"reason\":")
            w.string(feedback.reason.rawValue)
            w.raw("}")
        } else {
            w.null()
        }
        w.raw(",\"learning_state\":")
        try learningState.write(to: &w)
        w.raw(",\"organic\":")
        w.bool(organic)
        w.raw(",\"outcome\":")
        w.string(outcome)
        w.raw(",\"swipe_id\":")
        w.string(swipeID)
        w.raw(",\"total_swipes\":")
        w.number(totalSwipes)
        w.raw("}")
    }
}

extension SwipeRequest: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{\"action\":")
        w.string(action.rawValue)
        w.raw(",\"school_id\":")
        w.string(itemID)
        w.raw(",\"swipe_id\":")
        w.string(swipeID)
        w.raw(",\"timestamp\":")
        w.number(Int(timestamp))
        w.raw("}")
    }
}

extension ServedPayload.Card: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{")
        if let band {
            w.raw("\"band\":")
            w.string(band)
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
        w.raw("}")
    }
}

extension ServedPayload: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        // Keys in sorted order, as the Codable encoding writes them (a test compares the two).
        if let arm {
            w.raw("{\"arm\":")
            w.string(arm)
            w.raw(",\"cards\":")
        } else {
            w.raw("{\"cards\":")
        }
        try w.array(cards)
        w.raw(",\"count\":")
        w.number(count)
        if let modelVersion {
            w.raw(",\"model_version\":")
            w.string(modelVersion)
        }
        w.raw(",\"preload\":")
        w.bool(preload)
        w.raw("}")
    }
}

extension LearningStateResponse: JSONWritable {
    package func write(to w: inout JSONWriter) throws {
        w.raw("{\"learning_state\":")
        try learningState.write(to: &w)
        w.raw(",\"served_cards\":")
        w.number(servedCards)
        w.raw(",\"total_swipes\":")
        w.number(totalSwipes)
        w.raw(",\"unseen_cards\":")
        w.number(unseenCards)
        w.raw("}")
    }
}
