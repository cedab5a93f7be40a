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
    init(indexed session: SwipeSession<M>, student: M.Student, weights: PreferenceWeights, count: Int) {
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
        // NaN (no location) is not far: such rows are scored one by one.
        func isFar(_ row: Int) -> Bool { shape.home == nil || distances[row] > far }
        let regions = engine.regions
        let bonusOn = pools == 3 && !regions.codeOfRow.isEmpty && session.regionShown.contains(false)
        let bonus = engine.configuration.discoveryNoveltyBonus
        let discovery = GeoBand.discovery.index
        var nearRows = 0
        // A near row: counted in its pool, and kept when its pool score ranks and it is unseen
        // (served and judged rows are taken off the counts afterwards).
        func scoreOne(_ row: Int) {
            nearRows += 1
            let p = session.poolIndex(row: row, distances: distances)
            counts[p] += 1
            var score = engine.rawScore(row: row, weights: weights, student: student)
            if bonusOn && p == discovery && !session.regionShown[Int(regions.codeOfRow[row])] { score = score + bonus }
            if lists[p].admits(score: score, row: row) && session.isUnseen(row: row) { lists[p].insert(score: score, row: row) }
        }
        if let home = shape.home {
            index.grid.forEachRow(within: Double(far), of: home) { row in
                if distances[row] <= far { scoreOne(row) }
            }
            // A row the index has no coordinates for may still have a distance (the matcher
            // places it another way); a far one is the blocks' to find, so it is never listed twice.
            for row in index.unlocatedRows where !isFar(row) { scoreOne(row) }
        }
        let farPool = pools == 3 ? discovery : 0
        counts[farPool] += engine.matcher.catalog.count - nearRows
        for row in session.servedIndexByRow.keys { counts[isFar(row) ? farPool : session.poolIndex(row: row, distances: distances)] -= 1 }
        for row in session.judgedRows { counts[isFar(row) ? farPool : session.poolIndex(row: row, distances: distances)] -= 1 }
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
