// A fixed workload for profilers (valgrind --tool=callgrind): a session serving batches of 10
// after a swipe each, over the shipped catalog; with a second argument `restore`, 100 restores
// of a snapshot taken after 40 swipes.
import Foundation
import SwipeRank

let root = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "..")
let schools = try SchoolCatalog(schoolsPath: root.appendingPathComponent("datasets/schools.csv").path,
                                majorsPath: root.appendingPathComponent("datasets/school_majors.csv").path)
let engine = SwipeEngine(matcher: SchoolMatcher(schools: schools))
let profile = StudentProfile(home: try GeoPoint(latitude: 42.3601, longitude: -71.0589), homeState: "MA",
                             maxDistanceMiles: 250, annualBudget: 32000, sat: 1380,
                             intendedMajors: ["Computer Science", "Business Administration"])
var session = try engine.session(studentID: "p", profile: profile, seed: 1)
if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "restore" {
    // 40 swipes, then 100 restores of the snapshot.
    for round in 0..<4 {
        for (i, card) in session.recommendations(count: 10).recommendations.enumerated() {
            _ = try session.recordSwipe(Swipe(swipeID: "\(round)-\(i)", cardID: card.item.id,
                                              action: Int(card.item.id)! % 3 == 0 ? .like : .dislike, timestamp: Int64(round * 10 + i)))
        }
    }
    let snapshot = session.snapshot()
    var restored = 0
    for _ in 0..<100 { restored += try engine.restore(snapshot).totalSwipes }
    print(restored)
    exit(0)
}
var total = 0
for round in 0..<100 {
    let cards = session.recommendations(count: 10).recommendations
    total += cards.count
    _ = try session.recordSwipe(Swipe(swipeID: "\(round)", cardID: cards[0].item.id, action: .like, timestamp: Int64(round)))
}
print(total)
