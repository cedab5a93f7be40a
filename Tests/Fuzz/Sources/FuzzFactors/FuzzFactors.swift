import Foundation
import FuzzSupport
import SwipeRank

// Factor model JSON (`FactorModelFile`): a file that decodes and resolves against the catalog
// builds an engine whose sessions learn and serve with finite scores; anything else is an
// error, never a trap.
let matcher = FuzzData.restaurantMatcher
let base = SwipeEngine(matcher: matcher)
let profile = ItemProfile(home: try! GeoPoint(latitude: 40, longitude: -75), maxDistanceMiles: 3)
// libFuzzer calls this for every input (its own main drives the run).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let file = try? FactorModelFile.decode(json: fuzzData(pointer, count), source: "fuzz.json"),
          let engine = try? base.withFactors(file),
          var session = try? engine.session(studentID: "fuzz", profile: profile, seed: 3) else { return 0 }
    for round in 0..<2 {
        for (i, card) in session.recommendations(count: 6).recommendations.enumerated() {
            _ = try? session.recordSwipe(Swipe(swipeID: "\(round)-\(i)", cardID: card.item.id,
                                               action: i % 2 == 0 ? .like : .dislike, timestamp: Int64(i)))
        }
    }
    var scores: [Float] = []
    session.rankingScores(into: &scores)
    FuzzProperty.require(scores.allSatisfy { $0.isFinite }, "non-finite ranking score")
    return 0
}
