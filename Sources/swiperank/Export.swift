import ArgumentParser
import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
import Logging
import SwipeRankStore

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write what the service logged as students.csv and interactions.csv (with is_probe and propensity), for swiperank evaluate.")

    @Option(help: "sqlite (the --database file, default) or a postgres:// URL (env SWIPERANK_STORE).")
    var store: String?

    @Option(help: "The SQLite file (env SWIPERANK_DATABASE; default swiperank.sqlite).")
    var database: String?

    @Option(help: "The folder to write students.csv and interactions.csv into.")
    var out: String

    func run() async throws {
        try createOutputFolder(out)
        let env = ProcessInfo.processInfo.environment
        let name = store ?? env["SWIPERANK_STORE"] ?? "sqlite"
        let path = database ?? env["SWIPERANK_DATABASE"] ?? "swiperank.sqlite"
        try await withStore(name, sqlitePath: path, mustExist: true, logger: Logger(label: "swiperank.export")) { store, _ in
            try await write(from: store)
        }
    }

    /// Walks every student: the profile, then the log, pairing each swipe with the served card
    /// it answered (its probe flag and the propensity it was served with).
    func write(from store: any StudentStore) async throws {
        var students: [DatasetStudent<StudentProfile>] = []
        var interactions: [Interaction] = []
        var skipped = 0
        var after: String?
        do {
            while true {
                let ids = try await store.studentIDs(after: after, limit: 500)
                guard let last = ids.last else { break }
                after = last
                // Students of the catalogs `serve --catalogs` adds are kept under a control-character
                // prefix: the export covers the default (college) catalog.
                for id in ids where !id.hasPrefix("\u{1}") {
                    guard let record = try await store.student(id) else { continue }
                    do {
                        students.append(DatasetStudent(id: id, profile: try StudentProfile.decode(json: record.profile, source: "profile of \(id)")))
                    } catch {
                        skipped += 1  // not a college profile (another catalog's service)
                        continue
                    }
                    var served: [String: (probe: Bool, propensity: Double)] = [:]
                    var cursor = 0
                    while true {
                        let page = try await store.events(of: id, after: cursor, kinds: [.served, .swipe], limit: 1_000)
                        guard let end = page.last else { break }
                        cursor = end.seq
                        for event in page {
                            if event.kind == .served {
                                let deck = try JSONDecoder().decode(ServedLog.self, from: event.payload)
                                for card in deck.cards { served[card.card_id] = (card.is_probe, card.propensity) }
                            } else {
                                let swipe = try JSONDecoder().decode(SwipeLog.self, from: event.payload)
                                let action: SwipeAction = swipe.action == "like" ? .like : .dislike
                                let card = served[swipe.school_id]
                                interactions.append(Interaction(studentID: id, itemID: swipe.school_id, action: action, timestamp: swipe.timestamp,
                                                                isProbe: card?.probe, propensity: card?.propensity))
                            }
                        }
                    }
                }
            }
        } catch let error as StoreError {
            throw CLIError(error.description)
        }
        try writeOutput(StudentsFile.write(students), to: out + "/students.csv")
        try writeOutput(InteractionsFile.write(interactions), to: out + "/interactions.csv")
        print("exported \(students.count) students and \(interactions.count) swipes to \(out)"
              + (skipped > 0 ? " (\(skipped) students without a college profile skipped)" : ""))
    }

    /// The parts of a logged deck the export needs.
    struct ServedLog: Decodable {
        struct Card: Decodable {
            var card_id: String
            var is_probe: Bool
            var propensity: Double
        }
        var cards: [Card]
    }

    /// The parts of a logged swipe the export needs.
    struct SwipeLog: Decodable {
        var school_id: String
        var action: String
        var timestamp: Int64
    }
}
