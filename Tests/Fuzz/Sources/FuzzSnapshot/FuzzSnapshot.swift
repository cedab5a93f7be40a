import Foundation
import FuzzSupport
import SwipeRank
import SwipeRankColleges

// Snapshot JSON (versions 1 and 2): restore either throws a DataError or gives a session that
// serves, learns and snapshots again into a value that restores to the same state.
let engine = FuzzData.schoolEngine

// libFuzzer calls this for every input (its own main drives the run).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let snapshot = try? SessionSnapshot<StudentProfile>.decode(json: fuzzData(pointer, count), source: "fuzz.json"),
          var session = try? engine.restore(snapshot) else { return 0 }
    let again = session.snapshot()
    FuzzProperty.require((try? engine.restore(again))?.snapshot() == again, "a restored session's snapshot does not restore")
    let cards = session.recommendations(count: 4).recommendations
    if let card = cards.first {
        _ = try? session.recordSwipe(Swipe(swipeID: "fuzz-next", cardID: card.item.id, action: .dislike, timestamp: 1))
        FuzzProperty.require(session.model.mean.allSatisfy { $0.isFinite }, "non-finite model after a swipe")
    }
    return 0
}
