import Foundation
import Synchronization
import SwipeRank
import SwipeRankNumerics

/// Fits a collaborative model (`FactorModelFile`) from an interaction log: implicit alternating
/// least squares (Hu, Koren and Volinsky 2008), solved exactly per student and per item.
///
/// Objective, over every student u and every catalog item i:
/// `Σ wᵤᵢ (pᵤᵢ − vᵢ·uᵤ)² + λ(Σ‖uᵤ‖² + Σ‖vᵢ‖²)` with `p = 1` for a like and 0 otherwise, and
/// `w = 1 + α` for a like, `1 + α⁻` for a dislike (`dislikeConfidence`; the answer to a card
/// shown), `1 + α°` for a card served and never answered (`shownConfidence`; only where the
/// log says what was served: the service's own log, `serve --refit-every`), 1 for an item
/// never swiped (the implicit negatives). Each half-step is a ridge
/// solve per entity: `(G + λI + Σ c xxᵀ) y = Σ (1 + α) x` over its likes, with `G` the Gram
/// matrix of the other side (one `dsyrk`), Cholesky-solved; students and items are solved in
/// parallel chunks, each result written to its own slot, so the fit is the same for a seed on
/// any number of threads. The last answer counts where a student swiped an item twice.
///
/// Then a **feature embedding** `E` (d × f): the ridge regression of the fitted item factors on
/// the items' catalog features, so an item the log never saw (a new school, a new restaurant)
/// still gets a factor, `xᵢᵀE`, from its features alone.
///
/// The student's online update (`FactorPosterior`) uses the same objective with the items held
/// fixed, so a session reproduces this fit's solve for its student, one swipe at a time — without
/// the signal weights (`Options.reactionBoost`, `dwellBoost`), which a session never sees.
public enum FactorFit {
    /// The fit's settings.
    public struct Options: Sendable, Hashable {
        /// f, the number of factors (≥ 1).
        public var dimension = 32
        /// λ (> 0).
        public var regularization = 1.0
        /// α of a like (> 0).
        public var confidence = 10.0
        /// The confidence of a dislike (≥ 0).
        public var dislikeConfidence = 10.0
        /// The confidence of a card served and left unanswered (≥ 0; 0: as if never served).
        /// Weaker than a dislike: the student may simply have stopped. The student's online
        /// update does not use it (a card on screen is usually about to be answered).
        public var shownConfidence = 0.0
        /// Alternating iterations (≥ 1).
        public var iterations = 12
        /// Ridge λ of the feature embedding (> 0).
        public var embeddingRegularization = 1.0
        /// Whether an item's factor is shrunk toward what its features predict (`xᵢᵀE`, the
        /// feature embedding refitted after every item half-step) instead of toward 0, as
        /// LightFM's item representation is the sum of its features' embeddings: items with
        /// few swipes borrow from items like them.
        public var featureInformed = true
        /// How much more a reacted answer counts: its confidence × (1 + this) (≥ 0; 0: reactions
        /// ignored). See `AnswerStrengths`.
        public var reactionBoost = 0.0
        /// How much the time spent looking at a card moves its answer's confidence: × exp(±this ·
        /// z), z the log-ratio of the dwell to the log's median, clamped to ±2 (≥ 0; 0: dwell
        /// ignored). See `AnswerStrengths`.
        public var dwellBoost = 0.0
        /// Seeds the items' starting factors.
        public var seed: UInt64 = 1

        /// The defaults.
        public init() {}

        /// `"f=32 λ=1 α=10 α⁻=10 iterations=12"`.
        public var summary: String {
            "f=\(dimension) λ=\(regularization) α=\(confidence) α⁻=\(dislikeConfidence) iterations=\(iterations)"
                + (shownConfidence > 0 ? " α°=\(shownConfidence)" : "")
                + (reactionBoost > 0 ? " reactions×\(1 + reactionBoost)" : "")
                + (dwellBoost > 0 ? " dwell^\(dwellBoost)" : "")
                + (featureInformed ? " feature-informed" : "")
        }
    }

    /// Fits the model.
    ///
    /// - Parameters:
    ///   - catalog: The catalog (its ids and feature columns).
    ///   - interactions: The log, in any order.
    ///   - shown: Cards served and never answered, (student, item) in any order; pairs the
    ///     student also swiped are ignored (the answer counts). Used with
    ///     `Options.shownConfidence` > 0.
    ///   - signals: Reactions and dwell times (`EngagementSignal`), any order; they weigh the
    ///     answers they are about (`AnswerStrengths`) when `Options.reactionBoost` or
    ///     `Options.dwellBoost` > 0, and are ignored otherwise.
    ///   - options: The settings.
    ///   - weight: γ, written into the file (choose it with `chooseWeight`).
    ///   - progress: Called after each iteration with (done, total).
    /// - Returns: The file (factors for the items the log names, and the feature embedding).
    /// - Throws: `DataError` for an unknown item, or a solve that fails (a non-finite value).
    /// - Complexity: O(iterations × (swipes × f² + (students + items) × f³)).
    public static func fit(catalog: Catalog, interactions: [Interaction], shown: [(studentID: String, itemID: String)] = [],
                           signals: [EngagementSignal] = [], options: Options = Options(), weight: Double = 1,
                           progress: (Int, Int) -> Void = { _, _ in }) throws -> FactorModelFile {
        precondition(options.dimension >= 1 && options.regularization > 0 && options.confidence > 0
                     && options.dislikeConfidence >= 0 && options.shownConfidence >= 0 && options.iterations >= 1 && options.embeddingRegularization > 0
                     && options.reactionBoost >= 0 && options.reactionBoost.isFinite && options.dwellBoost >= 0 && options.dwellBoost.isFinite,
                     "invalid factor fit options")
        let f = options.dimension
        // Students in a fixed order; the last answer per (student, item) in time.
        var students: [String: Int] = [:]
        var latest: [Int: [Int: (Int64, String, Answer)]] = [:]
        for x in interactions {
            guard let row = catalog.row(of: x.itemID) else {
                throw DataError(.unknownReference, source: "interactions", detail: "unknown item \"\(x.itemID)\"")
            }
            let u = students[x.studentID] ?? { let id = students.count; students[x.studentID] = id; return id }()
            let key = (x.timestamp, x.itemID, x.action == .like ? Answer.like : .dislike)
            if let old = latest[u]?[row], (old.0, old.1) > (key.0, key.1) { continue }
            latest[u, default: [:]][row] = key
        }
        if options.shownConfidence > 0 {
            for x in shown {
                guard let row = catalog.row(of: x.itemID) else {
                    throw DataError(.unknownReference, source: "served cards", detail: "unknown item \"\(x.itemID)\"")
                }
                let u = students[x.studentID] ?? { let id = students.count; students[x.studentID] = id; return id }()
                if latest[u]?[row] == nil { latest[u, default: [:]][row] = (Int64.min, x.itemID, .shown) }
            }
        }
        // Renumber students by id so the fit does not depend on the log's order.
        let order = students.keys.sorted()
        // How strongly each answer was meant (1 everywhere without signals or boosts).
        var strengths: AnswerStrengths?
        if !signals.isEmpty && (options.reactionBoost > 0 || options.dwellBoost > 0) {
            var answers: [String: [String: Bool]] = [:]
            for id in order {
                for (_, value) in latest[students[id]!] ?? [:] where value.2 != .shown { answers[id, default: [:]][value.1] = value.2 == .like }
            }
            strengths = AnswerStrengths(signals: signals, answers: answers, reactionBoost: options.reactionBoost, dwellBoost: options.dwellBoost)
        }
        let byStudent: [[Entry]] = order.map { id in
            (latest[students[id]!] ?? [:]).map { row, value in
                Entry(row: row, answer: value.2,
                      strength: value.2 == .shown ? 1 : strengths?.factor(studentID: id, itemID: value.1) ?? 1)
            }.sorted { $0.row < $1.row }
        }
        var byItem = [[Entry]](repeating: [], count: catalog.count)
        for (u, log) in byStudent.enumerated() { for x in log { byItem[x.row].append(Entry(row: u, answer: x.answer, strength: x.strength)) } }
        let seen = byItem.indices.filter { !byItem[$0].isEmpty }

        var rng = SplitMix64(seed: options.seed)
        var items = [Double](repeating: 0, count: catalog.count * f)
        for row in seen { for j in 0..<f { items[row * f + j] = 0.1 * Double.random(in: -1...1, using: &rng) } }
        var users = [Double](repeating: 0, count: order.count * f)
        for iteration in 0..<options.iterations {
            try solve(into: &users, count: order.count, logs: byStudent, other: items, f: f, options: options, priorMeans: nil)
            let means = options.featureInformed && iteration > 0
                ? predicted(catalog: catalog, embedding: try featureEmbedding(catalog: catalog, items: items, rows: seen, f: f,
                                                                              ridge: options.embeddingRegularization), f: f)
                : nil
            try solve(into: &items, count: catalog.count, logs: byItem, other: users, f: f, options: options, priorMeans: means)
            progress(iteration + 1, options.iterations)
        }
        let embedding = try featureEmbedding(catalog: catalog, items: items, rows: seen, f: f, ridge: options.embeddingRegularization)
        // Feature-informed: every row has a fitted factor (an unswiped one, its shrunk feature
        // prediction); otherwise only swiped rows, the rest left to the embedding.
        let written = options.featureInformed ? Array(0..<catalog.count) : seen
        return FactorModelFile(dimension: f, confidence: options.confidence, dislikeConfidence: options.dislikeConfidence,
                               regularization: options.regularization, weight: weight,
                               itemIDs: written.map { catalog.ids[$0] }, itemFactors: written.map { Array(items[($0 * f)..<(($0 + 1) * f)]) },
                               featureNames: catalog.columns.map(\.name), featureEmbedding: embedding,
                               fittedOn: "swiperank fit-factors: \(order.count) students, \(interactions.count) swipes, "
                                   + (strengths == nil ? "" : "\(signals.count) signals, ") + options.summary)
    }

    /// What a student did with an item, as the objective weighs it.
    enum Answer: Sendable {
        case like, dislike, shown
    }

    /// One (student, item) pair of a half-step's log: `row` is the other side's index, the
    /// answer, and the factor its confidence is multiplied by (`AnswerStrengths`; 1 without).
    struct Entry: Sendable {
        var row: Int
        var answer: Answer
        var strength: Double
    }

    /// Every row's factor as its features predict it, `xᵢᵀE` (row-major N × f).
    private static func predicted(catalog: Catalog, embedding: [[Double]], f: Int) -> [Double] {
        var means = [Double](repeating: 0, count: catalog.count * f)
        let features = catalog.featureRows  // where they are stored: a refit builds no row-major copy
        for row in 0..<catalog.count {
            for (c, e) in embedding.enumerated() {
                let x = Double(features[row, c])
                if x != 0 { for j in 0..<f { means[row * f + j] += x * e[j] } }
            }
        }
        return means
    }

    /// One half-step: every entity's ridge solve against the other side's fixed factors, the
    /// ridge pulling toward `priorMeans` (row-major, one per entity) where given, else toward 0.
    private static func solve(into result: inout [Double], count: Int, logs: [[Entry]], other: [Double], f: Int,
                              options: Options, priorMeans: [Double]?) throws {
        var background = gramMatrix(rows: other, count: other.count / f, dimension: f)
        for j in 0..<f { background[j * f + j] += options.regularization }
        let gram = background
        let chunks = max(1, min(64, count / 32))
        let outcomes = Mutex([Result<[Double], NumericsError>?](repeating: nil, count: chunks))
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let range = (count * chunk / chunks)..<(count * (chunk + 1) / chunks)
            var out = [Double](repeating: 0, count: range.count * f)
            var b = [Double](repeating: 0, count: f)
            let outcome: Result<[Double], NumericsError>
            do throws(NumericsError) {
                for e in range where !logs[e].isEmpty || priorMeans != nil {
                    var a = gram
                    for j in 0..<f { b[j] = priorMeans.map { options.regularization * $0[e * f + j] } ?? 0 }
                    for x in logs[e] {
                        var c: Double
                        switch x.answer {
                        case .like: c = options.confidence
                        case .dislike: c = options.dislikeConfidence
                        case .shown: c = options.shownConfidence
                        }
                        if x.strength != 1 { c *= x.strength }
                        let base = x.row * f
                        if c > 0 {
                            for i in 0..<f {
                                let ci = c * other[base + i]
                                for j in 0...i { a[i * f + j] += ci * other[base + j] }
                            }
                        }
                        if x.answer == .like { for j in 0..<f { b[j] += (1 + c) * other[base + j] } }
                    }
                    for i in 0..<f { for j in 0..<i { a[j * f + i] = a[i * f + j] } }
                    let y = try CholeskyFactor(symmetric: a, dimension: f).solve(b)
                    let at = (e - range.lowerBound) * f
                    for j in 0..<f { out[at + j] = y[j] }
                }
                outcome = .success(out)
            } catch {
                outcome = .failure(error)
            }
            outcomes.withLock { $0[chunk] = outcome }
        }
        // Entities without a log get 0 (the ridge solve of an empty right-hand side).
        result = []
        result.reserveCapacity(count * f)
        for outcome in outcomes.withLock({ $0 }) {
            switch outcome! {
            case .success(let part): result += part
            case .failure(let error): throw DataError(.invalidValue, source: "interactions", detail: "factor fit: \(error.description)")
            }
        }
    }

    /// The ridge regression of the fitted item factors on the items' features.
    private static func featureEmbedding(catalog: Catalog, items: [Double], rows: [Int], f: Int, ridge: Double) throws -> [[Double]] {
        let d = catalog.dimension
        guard d > 0 else { return [] }
        var x = [Double](repeating: 0, count: rows.count * d)
        let features = catalog.featureRows
        for (i, row) in rows.enumerated() { for j in 0..<d { x[i * d + j] = Double(features[row, j]) } }
        var gram = gramMatrix(rows: x, count: rows.count, dimension: d)
        for j in 0..<d { gram[j * d + j] += ridge }
        let factor: CholeskyFactor
        do { factor = try CholeskyFactor(symmetric: gram, dimension: d) } catch {
            throw DataError(.invalidValue, source: "interactions", detail: "feature embedding: \(error.description)")
        }
        var embedding = [[Double]](repeating: [Double](repeating: 0, count: f), count: d)
        for k in 0..<f {
            var rhs = [Double](repeating: 0, count: d)
            for (i, row) in rows.enumerated() { for j in 0..<d { rhs[j] += x[i * d + j] * items[row * f + k] } }
            let column = factor.solve(rhs)
            for j in 0..<d { embedding[j][k] = column[j] }
        }
        return embedding
    }
}
