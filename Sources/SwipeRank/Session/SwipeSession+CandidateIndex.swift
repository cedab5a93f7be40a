import SwipeRankNumerics

extension BatchPools {
    /// The pools `init(session:student:raw:count:)` would build, from the engine's
    /// `CandidateIndex` instead of every item's score: the same best rows per pool, in the
    /// same order, and the same unseen counts.
    ///
    /// - The items within `CandidateIndex.farMiles` of home (from the grid; the distance term
    ///   still varies there, and the nearby and slightly-beyond bands lie inside) and the items
    ///   without a location are scored one by one, exactly as the scan does.
    /// - Every other item is far: its distance term is exactly −1 (0 for a student without a
    ///   home), so its score is its features' plus constants, plus its population offset and,
    ///   in discovery, the novelty bonus. The blocks' bounds find the best of them
    ///   (`LinearBlockIndex.search`), starting from the near rows of the same pool.
    /// - Counts: the near pools are counted while scoring; the far pool holds every far row
    ///   not served or judged.
    ///
    /// The session must qualify (`SwipeSession.usesCandidateIndex(student:)`).
    ///
    /// - Complexity: O(items near home × d + blocks × d + rows of the blocks visited × d).
    init(indexed session: SwipeSession<M>, student: M.Student, near cached: NearRows?, weights: PreferenceWeights, count: Int) {
        let engine = session.engine
        guard let index = engine.candidateIndex, let shape = engine.matcher.distanceTermShape(of: student) else {
            preconditionFailure("BatchPools(indexed:): the session does not qualify for the candidate index")
        }
        let pools = session.isBanded ? 3 : 1
        let keep = count + engine.probes.exploration(for: session.phase).window
        var lists = (0..<pools).map { _ in BoundedTopList(capacity: keep) }
        var counts = [Int](repeating: 0, count: pools)
        let distances = student.distances
        let far = shape.home == nil ? Float.infinity : CandidateIndex.farMiles(preferred: shape.preferredMiles,
                                                                                expansion: engine.configuration.expansion)
        let regions = engine.regions
        let bonusOn = pools == 3 && !regions.codeOfRow.isEmpty && session.regionShown.contains(false)
        let bonus = engine.configuration.discoveryNoveltyBonus
        let discovery = GeoBand.discovery.index
        var nearRows = 0
        // The distance term as stored, from a distance (the shape's contract: `distanceFit`, 0
        // for no location): each near row's distance is read once, as on a large catalog
        // each read computes it.
        let preferred = Float(shape.preferredMiles)
        // A near row: counted in its pool, and kept when its pool score ranks and it is unseen
        // (served and judged rows are taken off the counts afterwards).
        func scoreOne(_ row: Int, distance d: Float, featureSum: Float) {
            nearRows += 1
            let p = session.poolIndex(distance: d)
            counts[p] += 1
            var score = engine.rawScore(featureSum: featureSum, row: row, weights: weights, termCount: 1) { _ in
                RelativeTerms.distanceFitUnits(miles: d, preferred: preferred)
            }
            if bonusOn && p == discovery && !session.regionShown[Int(regions.codeOfRow[row])] { score = score + bonus }
            if lists[p].admits(score: score, row: row) && session.isUnseen(row: row) { lists[p].insert(score: score, row: row) }
        }
        // The rows scored one by one: those within `far` (the distance not above it: NaN, no
        // location, is not far either), listed when the student was resolved (unless another
        // configuration's radius). A row the index has no coordinates for may still have a
        // distance (the matcher places it another way); a far one is the blocks' to find, so it
        // is never listed twice. Every other row is far.
        let near = shape.home.map { home in
            cached.flatMap { $0.far == far ? $0 : nil } ?? index.nearRows(of: home, distances: distances, far: far)
        }
        if let near {
            // The feature sums first, all together (`FeatureRows.dots`: the near rows are
            // scattered over the catalog's storage, and one at a time each waited on memory).
            let sums = engine.matcher.catalog.featureRows.dots(rows: near.rows, weights.features)
            for i in near.rows.indices { scoreOne(Int(near.rows[i]), distance: near.distances[i], featureSum: sums[i]) }
        }
        // Whether a row is far: not listed near (a binary search; its distance, computed, cost
        // more — the search asks this of every row that would rank).
        func isFar(_ row: Int) -> Bool { near.map { !$0.contains(row) } ?? true }
        let farPool = pools == 3 ? discovery : 0
        counts[farPool] += engine.matcher.catalog.count - nearRows
        func pool(_ row: Int) -> Int {
            guard shape.home != nil else { return farPool }
            let d = distances[row]
            return d > far ? farPool : session.poolIndex(distance: d)
        }
        for row in session.servedIndexByRow.keys { counts[pool(row)] -= 1 }
        for row in session.judgedRows { counts[pool(row)] -= 1 }
        // The far rows' distance term: the stored value of −1 (0 without a home), added as
        // `RelativeTerms.addWeighted` adds it.
        let farValue = shape.home == nil ? 0 : Float(RelativeTerms.quantize(-1))
        var constants: [Float] = []
        for k in student.terms.names.indices where weights.terms[k] != 0 {
            constants.append((weights.terms[k] / RelativeTerms.unit) * farValue)
        }
        let farBonus = bonusOn && farPool == discovery
            ? (amount: bonus, codes: index.regionCodesByPosition, eligible: session.regionShown.map { !$0 }) : nil
        index.blocks.search(weights: weights.features, constants: constants, offsets: engine.indexOffsets, bonus: farBonus,
                            into: &lists[farPool]) { row in isFar(row) && session.isUnseen(row: row) }
        self.best = lists.map(\.rows)
        self.cursor = [Int](repeating: 0, count: pools)
        self.remaining = counts
        self.poolOfRow = []
    }
}
