import Foundation
import FuzzSupport
import SwipeRank
import SwipeRankColleges

// Profile JSON of both matchers: a valid profile resolves and serves a first batch and a swipe
// with finite scores; anything else is a DataError.
let engine = FuzzData.schoolEngine
let items = SwipeEngine(matcher: FuzzData.restaurantMatcher)
// libFuzzer calls this for every input (its own main drives the run).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = fuzzData(pointer, count)
    if let profile = try? StudentProfile.decode(json: data, source: "fuzz.json"),
       var session = try? engine.session(studentID: "fuzz", profile: profile, seed: 1) {
        let cards = session.recommendations(count: 5).recommendations
        FuzzProperty.require(cards.allSatisfy { $0.matchScore.isFinite }, "non-finite match score")
        if let first = cards.first {
            _ = try? session.recordSwipe(Swipe(swipeID: "a", cardID: first.item.id, action: .like, timestamp: 1))
            FuzzProperty.require(session.model.mean.allSatisfy { $0.isFinite }, "non-finite model")
        }
    }
    if let profile = try? ItemProfile.decode(json: data, source: "fuzz.json"),
       var session = try? items.session(studentID: "fuzz", profile: profile, seed: 1) {
        let cards = session.recommendations(count: 5).recommendations
        FuzzProperty.require(cards.allSatisfy { $0.matchScore.isFinite }, "non-finite match score")
    }
    return 0
}
