import SwipeRank

extension SchoolMatcher {
    /// The cold-start weights for a student: what the profile says before any swipe.
    ///
    /// Mapping (weights on z-scored or 0/1 columns; every other weight starts at 0):
    ///
    /// | profile | weights |
    /// |---|---|
    /// | home | `distance` term 1.0 |
    /// | annual budget | `budget` term 1.2; `net_price` −0.2 |
    /// | SAT | `academic_fit` term 0.8 |
    /// | intended majors | `major_fit` term 1.5; `programs_<family>` +2.0 for each of their featured families |
    /// | size small / medium / large | +0.8 on that `size=` column, −0.4 on the opposite extreme (medium: −0.2 on both) |
    /// | control public / private | +0.6 on `control=public` / `control=private_nonprofit` |
    /// | setting city / suburb / town / rural | +0.4 on each `locale=` column of that group |
    /// | academic priority a | `selectivity` 0.6a, `completion_rate` 0.3 + 0.3a |
    /// | earnings priority e | `earnings` 0.5e |
    /// | always | `control=private_for_profit` −0.3 (lower completion and earnings nationally) |
    ///
    /// - Parameter student: The resolved student.
    /// - Returns: d feature weights and 4 term weights.
    public func coldStartWeights(for student: MatchStudent) -> PreferenceWeights {
        let catalog = schools.catalog
        var w = [Float](repeating: 0, count: catalog.dimension)
        func add(_ name: String, _ value: Float) {
            guard let j = columnIndex[name] else { return }
            w[j] += value
        }
        let profile = student.profile
        // The expanded basis's extra terms start at 0: the learner finds their weights.
        var terms = [Float](repeating: 0, count: student.terms.names.count)
        if profile.home != nil { terms[0] = 1.0 }
        if profile.annualBudget != nil { terms[1] = 1.2; add("net_price", -0.2) }
        if profile.sat != nil { terms[2] = 0.8 }
        if !student.majors.isEmpty {
            terms[3] = 1.5
            let families = Set(student.majors.flatMap { $0.cipCodes.map { String($0.prefix(2)) } })
            for family in families { add("programs_\(family)", 2.0) }
        }
        switch profile.sizePreference {
        case .small: add("size=small", 0.8); add("size=large", -0.4)
        case .medium: add("size=medium", 0.8); add("size=small", -0.2); add("size=large", -0.2)
        case .large: add("size=large", 0.8); add("size=small", -0.4)
        case .any: break
        }
        switch profile.controlPreference {
        case .public: add("control=public", 0.6)
        case .private: add("control=private_nonprofit", 0.6)
        case .any: break
        }
        add("control=private_for_profit", -0.3)
        if profile.settingPreference != .any {
            for locale in SchoolCatalog.locales where locale.hasPrefix(profile.settingPreference.rawValue) {
                add("locale=\(locale)", 0.4)
            }
        }
        let a = Float(profile.academicPriority), e = Float(profile.earningsPriority)
        add("selectivity", 0.6 * a)
        add("completion_rate", 0.3 + 0.3 * a)
        add("earnings", 0.5 * e)
        return PreferenceWeights(features: w, terms: terms)
    }
}
