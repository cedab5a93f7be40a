import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics

/// Simulated friend groups deciding on a college together, to compare group decks.
///
/// Each group has 2–6 students who live in the same place (the first member's home; the rest
/// of each profile is drawn independently) with hidden tastes outside the engine's model class
/// (`HiddenTasteStudent`). Before the group session each member swipes `soloSwipes` cards
/// alone in their own engine session. The group's options are the schools of the members'
/// home region (the catalog filter a group would pick), and an option matches once
/// `quorum(members)` members like it.
///
/// Members vote in rounds: each member in turn votes on the next option of their deck that
/// they have not voted on, with their hidden taste's like probability. Compared decks:
/// - **learned** (`GroupAggregation`): one order for the group from the members' session
///   posteriors (cold start for members without solo swipes);
/// - **shared shuffle**: one random order for everyone (what group-swipe apps do);
/// - **member shuffles**: a random order per member;
/// - **popularity**: the options by a simulated population's like rate.
///
/// Per group and deck: the swipes (votes of all members) until the match, and the matched
/// option's utility for each member as a percentile of that member's hidden utility over the
/// options (1 = their favourite): the mean over members and the least-happy member's.
public struct GroupSimulation: Sendable {
    /// A way of ordering the group's options.
    public enum Deck: Sendable, Hashable, CustomStringConvertible {
        /// The engine's group deck with this aggregation, from the members' posteriors after
        /// their solo swipes.
        case learned(GroupAggregation)
        /// The same from the members' cold starts (profiles only): what the solo swipes add.
        case coldStart(GroupAggregation)
        /// One random order for all members.
        case sharedShuffle
        /// A random order per member.
        case memberShuffles
        /// By the population's like rate.
        case popularity

        /// A short name for tables.
        public var description: String {
            switch self {
            case let .learned(aggregation): "learned (\(aggregation.strategy.rawValue))"
            case let .coldStart(aggregation): "cold start (\(aggregation.strategy.rawValue))"
            case .sharedShuffle: "shared shuffle"
            case .memberShuffles: "member shuffles"
            case .popularity: "popularity"
            }
        }
    }

    /// One group's result on one deck.
    public struct Outcome: Sendable, Hashable {
        /// Members.
        public let size: Int
        /// Votes until the match, nil when the options ran out first.
        public let swipes: Int?
        /// Mean member percentile of the matched option.
        public let meanUtility: Double?
        /// The least-happy member's percentile of the matched option.
        public let leastUtility: Double?
    }

    /// A deck's results over all groups, with bootstrap 95% intervals.
    public struct Summary: Sendable {
        /// The deck.
        public let deck: Deck
        /// Groups.
        public let groups: Int
        /// Share of groups that matched.
        public let matchRate: Double
        /// Median votes to a match (a group without one counts as infinitely many), and its interval.
        public let medianSwipes: (value: Double, lower: Double, upper: Double)
        /// Mean over matched groups of the mean member percentile, and its interval.
        public let meanUtility: (value: Double, lower: Double, upper: Double)
        /// Mean over matched groups of the least-happy member's percentile, and its interval.
        public let leastUtility: (value: Double, lower: Double, upper: Double)
    }

    /// The engine (its catalog must be the college catalog).
    public let engine: SwipeEngine<SchoolMatcher>
    /// Swipes each member makes alone before the group session.
    public var soloSwipes = 20
    /// Group sizes, drawn uniformly.
    public var sizes = 2...6
    /// Students in the population whose like rates order the popularity deck.
    public var populationSize = 300

    /// The quorum of a group of `members`: two thirds, rounded up, and at least 2.
    public static func quorum(members: Int) -> Int { max(2, (2 * members + 2) / 3) }

    /// Creates a simulation.
    ///
    /// - Parameter engine: The engine.
    public init(engine: SwipeEngine<SchoolMatcher>) { self.engine = engine }

    /// Runs `groups` simulated groups through every deck.
    ///
    /// - Parameters:
    ///   - groups: How many groups.
    ///   - decks: The decks to compare.
    ///   - seed: The seed (groups, tastes, answers and shuffles all derive from it).
    /// - Returns: Per deck, one outcome per group (in group order).
    /// - Throws: `DataError`/`SwipeError` only on an internal inconsistency.
    /// - Complexity: O(groups × members × (solo swipes × engine cost + N log N)).
    public func run(groups: Int, decks: [Deck], seed: UInt64) throws -> [[Outcome]] {
        let schools = engine.matcher.schools
        let catalog = schools.catalog
        let regions = catalog.textValues[catalog.textAttribute(named: "region")!]
        var rng = SplitMix64(seed: seed)
        // Popularity: a separate population's mean like probability per school.
        var popularity = [Double](repeating: 0, count: catalog.count)
        for _ in 0..<populationSize {
            let student = HiddenTasteStudent(profile: SchoolSimulation.randomProfile(schools: schools, using: &rng),
                                             schools: schools, using: &rng)
            for row in 0..<catalog.count { popularity[row] += student.likeProbability(row: row) }
        }
        var outcomes = decks.map { _ in [Outcome]() }
        for g in 0..<groups {
            let size = Int.random(in: sizes, using: &rng)
            let first = SchoolSimulation.randomProfile(schools: schools, using: &rng)
            var members: [HiddenTasteStudent] = []
            var posteriors: [[Double]] = [], coldStarts: [[Double]] = []
            for m in 0..<size {
                var profile = m == 0 ? first : SchoolSimulation.randomProfile(schools: schools, using: &rng)
                profile.home = first.home
                profile.homeState = first.homeState
                let member = HiddenTasteStudent(profile: profile, schools: schools, using: &rng)
                members.append(member)
                let (cold, posterior) = try soloScores(member, id: "g\(g)m\(m)", seed: rng.next())
                coldStarts.append(cold)
                posteriors.append(posterior)
            }
            let homeRow = first.home.flatMap { home in catalog.locations.firstIndex { $0 == home } }
            let region = homeRow.map { regions[$0] }
            let options = (0..<catalog.count).filter { region == nil || regions[$0] == region }
            // Member percentiles of hidden utility over the options.
            let percentile = members.map { member in
                Dictionary(uniqueKeysWithValues: zip(options, GroupAggregation.percentileRanks(of: options.map { member.utility[$0] })))
            }
            let answerSeed = rng.next(), shuffleSeed = rng.next()
            for (d, deck) in decks.enumerated() {
                var shuffles = SplitMix64(seed: shuffleSeed)
                let orders: [[Int]]
                switch deck {
                case let .learned(aggregation):
                    let order = aggregation.rank(candidates: options, memberScores: posteriors, count: options.count)
                    orders = Array(repeating: order, count: size)
                case let .coldStart(aggregation):
                    let order = aggregation.rank(candidates: options, memberScores: coldStarts, count: options.count)
                    orders = Array(repeating: order, count: size)
                case .sharedShuffle:
                    orders = Array(repeating: options.shuffled(using: &shuffles), count: size)
                case .memberShuffles:
                    orders = (0..<size).map { _ in options.shuffled(using: &shuffles) }
                case .popularity:
                    let order = options.sorted { popularity[$0] != popularity[$1] ? popularity[$0] > popularity[$1] : $0 < $1 }
                    orders = Array(repeating: order, count: size)
                }
                var answers = SplitMix64(seed: answerSeed)
                let swipes = Self.play(members: members, orders: orders, quorum: Self.quorum(members: size), answers: &answers)
                if let (votes, row) = swipes {
                    let utilities = percentile.map { $0[row]! }
                    outcomes[d].append(Outcome(size: size, swipes: votes, meanUtility: utilities.reduce(0, +) / Double(size),
                                               leastUtility: utilities.min()!))
                } else {
                    outcomes[d].append(Outcome(size: size, swipes: nil, meanUtility: nil, leastUtility: nil))
                }
            }
        }
        return outcomes
    }

    /// Rounds of votes until an option has `quorum` likes: (votes cast, matched row), or nil
    /// when every member has voted on every option.
    static func play(members: [HiddenTasteStudent], orders: [[Int]], quorum: Int,
                     answers: inout SplitMix64) -> (Int, Int)? {
        var likes: [Int: Int] = [:]
        var next = [Int](repeating: 0, count: members.count)
        var votes = 0
        while true {
            var anyLeft = false
            for m in members.indices where next[m] < orders[m].count {
                anyLeft = true
                let row = orders[m][next[m]]
                next[m] += 1
                votes += 1
                if members[m].swipe(row: row, using: &answers) == .like {
                    likes[row, default: 0] += 1
                    if likes[row]! >= quorum { return (votes, row) }
                }
            }
            if !anyLeft { return nil }
        }
    }

    /// The member's raw scores over the catalog at the cold start and after `soloSwipes`
    /// swipes alone.
    func soloScores(_ member: HiddenTasteStudent, id: String, seed: UInt64) throws -> (cold: [Double], posterior: [Double]) {
        var session = try engine.session(studentID: id, profile: member.profile, seed: seed)
        var scores: [Float] = []
        engine.matcher.catalog.scores(weights: session.weights, terms: session.student.terms, into: &scores)
        let cold = scores.map(Double.init)
        var answers = SplitMix64(seed: seed ^ 0x9E37_79B9_7F4A_7C15)
        var done = 0
        while done < soloSwipes {
            let response = session.recommendations(count: min(10, soloSwipes - done))
            if response.recommendations.isEmpty { break }
            for card in response.recommendations {
                let row = engine.matcher.catalog.row(of: card.item.id)!
                let swipe = Swipe(swipeID: "\(id)-\(done)", cardID: card.item.id, action: member.swipe(row: row, using: &answers),
                                  timestamp: Int64(done))
                _ = try session.recordSwipe(swipe)
                done += 1
            }
        }
        engine.matcher.catalog.scores(weights: session.weights, terms: session.student.terms, into: &scores)
        return (cold, scores.map(Double.init))
    }

    /// Summaries with bootstrap 95% intervals (1,000 resamples over groups).
    ///
    /// - Parameters:
    ///   - outcomes: What `run` returned.
    ///   - decks: The same decks.
    ///   - seed: The bootstrap's seed.
    /// - Returns: One summary per deck.
    public static func summarize(_ outcomes: [[Outcome]], decks: [Deck], seed: UInt64) -> [Summary] {
        var rng = SplitMix64(seed: seed)
        return zip(decks, outcomes).map { deck, results in
            let swipes = results.map { $0.swipes.map(Double.init) ?? .infinity }
            let matched = results.filter { $0.swipes != nil }
            func stat(_ values: [Double], _ statistic: ([Double]) -> Double) -> (value: Double, lower: Double, upper: Double) {
                guard !values.isEmpty else { return (.nan, .nan, .nan) }
                let ci = Bootstrap.interval(values, statistic: statistic, using: &rng)
                return (statistic(values), ci.lower, ci.upper)
            }
            return Summary(deck: deck, groups: results.count, matchRate: Double(matched.count) / Double(max(1, results.count)),
                           medianSwipes: stat(swipes, Bootstrap.median),
                           meanUtility: stat(matched.map { $0.meanUtility! }, Bootstrap.mean),
                           leastUtility: stat(matched.map { $0.leastUtility! }, Bootstrap.mean))
        }
    }
}
