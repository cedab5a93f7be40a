import Foundation
import SwipeRank
import SwipeRankNumerics
import Testing

/// The reference's answer to a vote.
private enum ReferenceVote {
    case ok(GroupVoteOutcome, Bool)
    case fail(GroupError.Kind)

    var failureKind: GroupError.Kind? {
        if case let .fail(kind) = self { return kind }
        return nil
    }
}

/// The reference for `GroupSession`: the rules written as plainly as possible, recomputing
/// like counts from the list of accepted votes on every question.
private struct ReferenceGroup {
    let quorum: Int
    let maxMembers: Int
    let creator: String
    var members: [String]
    var deck: [String] = []
    var closed = false
    var accepted: [(id: String, member: String, option: String, action: GroupVoteAction, outcome: GroupVoteOutcome)] = []

    var matched: String? {
        var likers: [String: Set<String>] = [:]
        for vote in accepted where vote.action == .like && vote.outcome.recorded {
            likers[vote.option, default: []].insert(vote.member)
            if likers[vote.option]!.count >= quorum { return vote.option }
        }
        return nil
    }

    func likes(_ option: String) -> Int {
        Set(accepted.filter { $0.option == option && $0.action == .like && $0.outcome.recorded }.map(\.member)).count
    }

    var status: GroupStatus { closed ? .closed : matched != nil ? .matched : .open }

    mutating func join(_ s: String) -> GroupError.Kind? {
        if status != .open { return .notOpen }
        if members.contains(s) { return .alreadyJoined }
        if members.count >= maxMembers { return .full }
        members.append(s)
        return nil
    }

    mutating func vote(_ id: String, _ member: String, _ option: String, _ action: GroupVoteAction) -> ReferenceVote {
        if let earlier = accepted.first(where: { $0.id == id && $0.member == member }) {
            guard earlier.option == option, earlier.action == action else { return .fail(.voteIDReused) }
            return .ok(earlier.outcome, true)
        }
        guard members.contains(member) else { return .fail(.notMember) }
        guard deck.contains(option) else { return .fail(.unknownOption) }
        guard !closed else { return .fail(.notOpen) }
        if let matched {
            let outcome = GroupVoteOutcome(recorded: false, matchFound: true, matchedOption: matched, madeMatch: false, likes: likes(option))
            accepted.append((id, member, option, action, outcome))
            return .ok(outcome, false)
        }
        // Provisionally recorded, then see whether it made the match.
        accepted.append((id, member, option, action, GroupVoteOutcome(recorded: true, matchFound: false, matchedOption: nil, madeMatch: false, likes: 0)))
        let now = matched
        let outcome = GroupVoteOutcome(recorded: true, matchFound: now != nil, matchedOption: now, madeMatch: now != nil, likes: likes(option))
        accepted[accepted.count - 1].outcome = outcome
        return .ok(outcome, false)
    }
}

@Suite struct GroupSessionTests {
    @Test("seeded random operations agree with the reference; a match happens exactly once", arguments: 0..<150)
    func modelBased(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed &+ 7_000)
        let quorum = Int.random(in: 2...4, using: &rng)
        let maxMembers = Int.random(in: quorum...6, using: &rng)
        var session = try GroupSession(id: "g", creatorID: "s0", quorum: quorum, maxMembers: maxMembers, createdAt: 0)
        var reference = ReferenceGroup(quorum: quorum, maxMembers: maxMembers, creator: "s0", members: ["s0"])
        session.extendDeck(with: ["o0", "o1", "o2", "o3"])
        reference.deck = ["o0", "o1", "o2", "o3"]
        var madeMatches = 0
        for step in 0..<80 {
            let roll = Int.random(in: 0..<100, using: &rng)
            let student = "s\(Int.random(in: 0..<7, using: &rng))"
            if roll < 15 {
                let expected = reference.join(student)
                do {
                    try session.join(student, at: Int64(step))
                    #expect(expected == nil, "seed \(seed) step \(step): join should fail with \(String(describing: expected))")
                } catch {
                    #expect(error.kind == expected, "seed \(seed) step \(step): \(error)")
                }
            } else if roll < 18 {
                let next = "o\(session.deck.count)"
                session.extendDeck(with: [next])
                reference.deck.append(next)
            } else if roll < 20 {
                do {
                    let changed = try session.close(by: student, at: Int64(step))
                    #expect(student == "s0" && reference.members.contains(student), "seed \(seed)")
                    #expect(changed == !reference.closed)
                    reference.closed = true
                } catch {
                    #expect(error.kind == (reference.members.contains(student) ? .notCreator : .notMember), "seed \(seed)")
                }
            } else {
                let id = "v\(Int.random(in: 0..<40, using: &rng))"
                let option = "o\(Int.random(in: 0..<(session.deck.count + 1), using: &rng))"
                let action: GroupVoteAction = Int.random(in: 0..<4, using: &rng) == 0 ? .pass : .like
                let expected = reference.vote(id, student, option, action)
                do {
                    let (outcome, replayed) = try session.vote(id: id, member: student, option: option, action: action, at: Int64(step))
                    guard case let .ok(refOutcome, refReplayed) = expected else {
                        Issue.record("seed \(seed) step \(step): vote accepted, reference says \(expected)")
                        continue
                    }
                    #expect(outcome == refOutcome && replayed == refReplayed, "seed \(seed) step \(step)")
                    if outcome.madeMatch && !replayed { madeMatches += 1 }
                } catch {
                    #expect(expected.failureKind == error.kind, "seed \(seed) step \(step): \(error) vs \(expected)")
                }
            }
            #expect(session.status == reference.status, "seed \(seed) step \(step)")
            #expect(session.matchedOption == reference.matched, "seed \(seed) step \(step)")
            #expect(session.members.map(\.id) == reference.members)
            for option in session.deck { #expect(session.likeCount(of: option) == reference.likes(option), "seed \(seed) \(option)") }
        }
        #expect(madeMatches == (reference.matched == nil ? 0 : 1), "seed \(seed)")
        // The stored form replays to the same session.
        let decoded = try JSONDecoder().decode(GroupSession.self, from: JSONEncoder().encode(session))
        #expect(decoded == session, "seed \(seed)")
        // Erasing a member keeps every count and names nobody.
        if let member = session.members.last?.id {
            let renamed = try session.renamingMember(member, to: "anon")
            #expect(!renamed.isMember(member) && renamed.isMember("anon"))
            #expect(renamed.status == session.status && renamed.matchedOption == session.matchedOption)
            for option in session.deck { #expect(renamed.likeCount(of: option) == session.likeCount(of: option)) }
            #expect(!renamed.votes.contains { $0.member == member })
        }
    }

    @Test("settings and ids are checked")
    func settings() throws {
        #expect(throws: GroupError.self) { try GroupSession(id: "g", creatorID: "a", quorum: 1, createdAt: 0) }
        #expect(throws: GroupError.self) { try GroupSession(id: "g", creatorID: "a", quorum: 5, maxMembers: 4, createdAt: 0) }
        #expect(throws: GroupError.self) { try GroupSession(id: "", creatorID: "a", quorum: 2, createdAt: 0) }
        #expect(throws: GroupError.self) { try GroupSession(id: "g", creatorID: String(repeating: "x", count: 257), quorum: 2, createdAt: 0) }
        var s = try GroupSession(id: "g", creatorID: "a", quorum: 2, maxMembers: 2, createdAt: 0)
        try s.join("b", at: 1)
        #expect { try s.join("c", at: 2) } throws: { ($0 as? GroupError)?.kind == .full }
        #expect { try s.vote(id: "", member: "a", option: "x", action: .like, at: 3) } throws: { ($0 as? GroupError)?.kind == .invalidID }
    }

    @Test("a stored session that contradicts its votes does not decode")
    func corrupt() throws {
        var s = try GroupSession(id: "g", creatorID: "a", quorum: 2, createdAt: 0)
        try s.join("b", at: 1)
        s.extendDeck(with: ["x", "y"])
        _ = try s.vote(id: "1", member: "a", option: "x", action: .like, at: 2)
        let good = try JSONEncoder().encode(s)
        var json = try #require(try JSONSerialization.jsonObject(with: good) as? [String: Any])
        json["status"] = "matched"
        json["matched_option"] = "x"
        #expect(throws: (any Error).self) { try JSONDecoder().decode(GroupSession.self, from: JSONSerialization.data(withJSONObject: json)) }
        json = try #require(try JSONSerialization.jsonObject(with: good) as? [String: Any])
        json["deck"] = ["x", "x"]
        #expect(throws: (any Error).self) { try JSONDecoder().decode(GroupSession.self, from: JSONSerialization.data(withJSONObject: json)) }
        json = try #require(try JSONSerialization.jsonObject(with: good) as? [String: Any])
        json["members"] = [["id": "b", "joined_at": 1]]
        #expect(throws: (any Error).self) { try JSONDecoder().decode(GroupSession.self, from: JSONSerialization.data(withJSONObject: json)) }
    }

    @Test("next options skip what the member voted on, from a cursor")
    func nextOptions() throws {
        var s = try GroupSession(id: "g", creatorID: "a", quorum: 2, createdAt: 0)
        try s.join("b", at: 0)
        s.extendDeck(with: ["p", "q", "r", "t"])
        _ = try s.vote(id: "1", member: "a", option: "q", action: .pass, at: 1)
        #expect(s.nextOptions(for: "a", after: 0, count: 3).map(\.option) == ["p", "r", "t"])
        #expect(s.nextOptions(for: "a", after: 0, count: 3).map(\.position) == [1, 3, 4])
        #expect(s.nextOptions(for: "a", after: 3, count: 3).map(\.option) == ["t"])
        #expect(s.nextOptions(for: "b", after: 0, count: 2).map(\.option) == ["p", "q"])
        // A pass then a like counts the like; a like then a pass keeps it.
        _ = try s.vote(id: "2", member: "a", option: "q", action: .like, at: 2)
        #expect(s.likeCount(of: "q") == 1 && s.vote(of: "a", on: "q") == .like)
        _ = try s.vote(id: "3", member: "a", option: "q", action: .pass, at: 3)
        #expect(s.likeCount(of: "q") == 1)
    }
}

@Suite struct GroupAggregationTests {
    /// Percentile rank by counting (the definition).
    static func referenceRank(_ values: [Double], _ i: Int) -> Double {
        guard values.count > 1 else { return 1 }
        let below = values.filter { $0 < values[i] }.count
        let equal = values.filter { $0 == values[i] }.count
        return (Double(below) + Double(equal - 1) / 2) / Double(values.count - 1)
    }

    @Test("percentile ranks and every strategy's order match the definitions", arguments: 0..<60)
    func reference(seed: UInt64) {
        var rng = SplitMix64(seed: seed &+ 31)
        let n = Int.random(in: 1...40, using: &rng)
        let members = Int.random(in: 1...5, using: &rng)
        // Few distinct values, so ties are common.
        let scores = (0..<members).map { _ in (0..<n).map { _ in Double(Int.random(in: 0..<6, using: &rng)) } }
        let candidates = Array(0..<n).shuffled(using: &rng).prefix(Int.random(in: 1...n, using: &rng)).map { $0 }
        for m in 0..<members {
            let values = candidates.map { scores[m][$0] }
            let ranks = GroupAggregation.percentileRanks(of: values)
            for i in values.indices { #expect(abs(ranks[i] - Self.referenceRank(values, i)) < 1e-12, "seed \(seed)") }
        }
        for strategy in GroupStrategy.allCases {
            let aggregation = GroupAggregation(strategy: strategy, miseryThreshold: 0.3)
            let ranks = (0..<members).map { m in GroupAggregation.percentileRanks(of: candidates.map { scores[m][$0] }) }
            func value(_ i: Int) -> Double {
                let r = ranks.map { $0[i] }
                let mean = r.reduce(0, +) / Double(r.count)
                switch strategy {
                case .average: return mean
                case .leastMisery: return r.min()!
                case .averageWithoutMisery: return r.min()! < 0.3 ? mean - 1 : mean
                }
            }
            // Best first; ties to the candidate listed first (a stable sort).
            let expected = candidates.indices.sorted { value($0) > value($1) || (value($0) == value($1) && $0 < $1) }.map { candidates[$0] }
            let k = Int.random(in: 0...candidates.count + 2, using: &rng)
            #expect(aggregation.rank(candidates: candidates, memberScores: scores, count: k) == Array(expected.prefix(k)),
                    "seed \(seed) \(strategy)")
        }
    }

    @Test("strategies differ where they should: least misery avoids a member's worst option")
    func strategies() {
        // Option 0: loved by a, hated by b. Option 1: fine for both. Option 2: bad for both.
        let a = [1.0, 0.6, 0.0], b = [0.0, 0.6, 0.1]
        #expect(GroupAggregation(strategy: .leastMisery).rank(candidates: [0, 1, 2], memberScores: [a, b], count: 3).first == 1)
        #expect(GroupAggregation(strategy: .averageWithoutMisery).rank(candidates: [0, 1, 2], memberScores: [a, b], count: 1) == [1])
        // Without members the given order stays.
        #expect(GroupAggregation.standard.rank(candidates: [2, 0, 1], memberScores: [], count: 2) == [2, 0])
    }
}

@Suite struct InviteCodeTests {
    @Test("codes use no look-alike characters and read back however typed")
    func codes() {
        #expect(!InviteCode.alphabet.contains { "01ILO".contains($0) })
        var rng = SplitMix64(seed: 5)
        var seen = Set<String>()
        for _ in 0..<2_000 {
            let code = InviteCode.generate(using: &rng)
            #expect(code.count == 8 && code.allSatisfy { InviteCode.alphabet.contains($0) })
            seen.insert(code)
            #expect(InviteCode.canonical(InviteCode.display(code).lowercased()) == code)
            #expect(InviteCode.canonical(" " + code.prefix(4) + " - " + code.dropFirst(4)) == code)
        }
        #expect(seen.count == 2_000)
        var x = SplitMix64(seed: 9), y = SplitMix64(seed: 9)
        #expect((0..<5).map { _ in InviteCode.generate(using: &x) } == (0..<5).map { _ in InviteCode.generate(using: &y) })
        #expect(InviteCode.canonical("ABCD-EFG0") == nil)  // 0 is not in the alphabet
        #expect(InviteCode.canonical("ABCD-EFGHJ") == nil)  // too long
        #expect(InviteCode.canonical("ABC") == nil)
        #expect(InviteCode.display("ABCDEFGH") == "ABCD-EFGH")
    }
}
