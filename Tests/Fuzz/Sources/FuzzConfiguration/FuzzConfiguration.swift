import Foundation
import FuzzSupport
import SwipeRank

// Engine configuration JSON: a configuration that decodes builds an engine that serves a
// session (probes, bands, feedback) without trapping.
let matcher = FuzzData.restaurantMatcher
let profile = ItemProfile(home: try! GeoPoint(latitude: 40, longitude: -75), maxDistanceMiles: 3)
// libFuzzer calls this for every input (its own main drives the run).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let configuration = try? EngineConfiguration.decode(json: fuzzData(pointer, count), source: "fuzz.json") else { return 0 }
    let engine = SwipeEngine(matcher: matcher, configuration: configuration)
    guard var session = try? engine.session(studentID: "fuzz", profile: profile, seed: 3) else { return 0 }
    for round in 0..<2 {
        for (i, card) in session.recommendations(count: 6).recommendations.enumerated() {
            let result = try? session.recordSwipe(Swipe(swipeID: "\(round)-\(i)", cardID: card.item.id,
                                                       action: i % 2 == 0 ? .like : .dislike, timestamp: Int64(i)))
            if let prompt = result?.feedback { try? session.submitFeedback(cardID: prompt.cardID, options: prompt.options) }
        }
    }
    FuzzProperty.require(session.model.mean.allSatisfy { $0.isFinite }, "non-finite model")
    return 0
}
