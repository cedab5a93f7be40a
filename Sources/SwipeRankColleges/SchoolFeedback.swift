import SwipeRank

extension SchoolMatcher {
    /// The options worth offering for a school: the features that stand out for this student,
    /// most salient first, at most five. Dislikes get reasons to avoid, likes reasons to seek.
    ///
    /// - Parameters:
    ///   - row: The swiped school.
    ///   - action: The swipe.
    ///   - student: The student.
    /// - Returns: At most five options.
    public func feedbackOptions(row: Int, action: SwipeAction, student: MatchStudent) -> [FeedbackOption] {
        let profile = student.profile
        func number(_ name: String) -> Double? {
            schools.catalog.numericValues[schools.catalog.numericAttribute(named: name)!][row]
        }
        let cost = schools.estimatedCost(row: row, homeState: profile.homeState)
        let distance = row < student.distances.count ? Double(student.distances[row]) : nil
        let enrollment = number("undergrad_enrollment"), admission = number("admission_rate")
        let matched = !student.majors.isEmpty && student.majorMatches.offersAny(row: row)
        var options: [FeedbackOption] = []
        switch action {
        case .dislike:
            if let cost, cost > (profile.annualBudget.map { 0.8 * $0 } ?? 25_000) { options.append(.tooExpensive) }
            if let distance, distance > 0.75 * profile.maxDistanceMiles { options.append(.tooFar) }
            if let enrollment, enrollment > 15_000 { options.append(.tooBig) }
            if let enrollment, enrollment < 3_000 { options.append(.tooSmall) }
            if !student.majors.isEmpty && !matched { options.append(.noMajor) }
            if let admission, admission > 0.75 { options.append(.notSelectiveEnough) }
            if let admission, admission < 0.25 { options.append(.tooSelective) }
            if !schools.catalog.textValues[schools.catalog.textAttribute(named: "locale")!][row].isEmpty {
                options.append(.wrongSetting)
            }
        case .like:
            if let cost, let budget = profile.annualBudget, cost <= budget { options.append(.greatValue) }
            if matched { options.append(.strongMajor) }
            if let distance, distance <= profile.maxDistanceMiles { options.append(.rightDistance) }
            if enrollment != nil { options.append(.rightSize) }
            if let admission, admission < 0.5 { options.append(.academicallyStrong) }
        }
        return Array(options.prefix(5))
    }

    /// The prior shift an answer applies for a school, over the combined vector
    /// `[features, terms]` (the table on `FeedbackOption`).
    ///
    /// - Parameters:
    ///   - option: The answer.
    ///   - row: The school's catalog row (some answers depend on its locale or size).
    /// - Returns: D = d + k values (k terms of `termBasis`).
    public func feedbackAdjustment(for option: FeedbackOption, row: Int) -> [Double] {
        let catalog = schools.catalog
        let termNames = self.termNames
        var delta = [Double](repeating: 0, count: catalog.dimension + termNames.count)
        func feature(_ name: String, _ value: Double) {
            if let j = columnIndex[name] { delta[j] += value }
        }
        func term(_ name: String, _ value: Double) {
            delta[catalog.dimension + termNames.firstIndex(of: name)!] += value
        }
        func cardCategory(_ prefix: String) -> String? {
            catalog.columns.indices.first { catalog.columns[$0].name.hasPrefix(prefix) && catalog.featureRows[row, $0] == 1 }
                .map { catalog.columns[$0].name }
        }
        switch option {
        case .tooExpensive: term("budget", 0.5); feature("net_price", -0.4)
        case .tooFar: term("distance", 0.5)
        case .tooBig: feature("enrollment", -0.4); feature("size=large", -0.4)
        case .tooSmall: feature("enrollment", 0.4); feature("size=small", -0.4)
        case .notSelectiveEnough: feature("selectivity", 0.4); feature("sat_avg", 0.2)
        case .tooSelective: feature("selectivity", -0.4); term("academic_fit", 0.3)
        case .noMajor: term("major_fit", 0.5)
        case .wrongSetting: if let column = cardCategory("locale=") { feature(column, -0.5) }
        case .greatValue: term("budget", 0.25); feature("net_price", -0.2)
        case .rightDistance: term("distance", 0.25)
        case .rightSize: if let column = cardCategory("size=") { feature(column, 0.3) }
        case .strongMajor: term("major_fit", 0.25)
        case .academicallyStrong: feature("selectivity", 0.25)
        }
        return delta
    }
}
