import Foundation
import Testing

/// Runs the built `swiperank` binary, as a user would, and captures its output.
struct CLI {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The binary sits next to the test bundle in the build products folder.
    static var binary: URL {
        var dir = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("swiperank")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir.deleteLastPathComponent()
        }
        return Bundle.main.bundleURL.appendingPathComponent("swiperank")
    }

    static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
                    directory: URL = root) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.currentDirectoryURL = directory
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    static func temporaryFile(_ contents: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-\(UUID().uuidString).json")
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}

@Suite("swiperank command line", .serialized)
struct CLITests {
    @Test("the shipped datasets are found from any working directory (next to the binary), an explicit missing file is named")
    func anyWorkingDirectory() throws {
        let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("cwd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let result = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json", "--count", "2"], directory: elsewhere)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"match_score\""))
        let missing = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json", "--catalog", "nowhere/schools.csv"],
                                  directory: elsewhere)
        #expect(missing.status != 0 && missing.stderr.contains("nowhere/schools.csv"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty, "nothing written where it ran")
    }

    @Test("recommend prints the app's JSON for the sample profile")
    func recommend() throws {
        let result = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json", "--count", "4"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        let cards = json["recommendations"] as! [[String: Any]]
        #expect(cards.count == 4)
        #expect(json["total_swipes"] as? Int == 0)
        let first = cards[0]
        #expect((first["school"] as! [String: Any])["name"] is String)
        #expect((first["match_score"] as! Double) <= 1)
        #expect(["A", "B", "C", "D", "F"].contains(first["grade"] as! String))
        #expect((first["distance"] as! Double) >= 0)
        #expect(!(first["explanations"] as! [String]).isEmpty)
    }

    @Test("a bad profile is a clear error naming the field, not a crash")
    func badProfile() throws {
        let path = try CLI.temporaryFile("{\"sat\": 1700}")
        let result = try CLI.run(["recommend", "--profile", path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("Error: \(path): sat: must be in 400...1600, got 1700.0"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("an unknown major and a missing file are clear errors")
    func otherErrors() throws {
        let path = try CLI.temporaryFile("{\"intended_majors\": [\"Underwater Basket Weaving\"]}")
        let unknown = try CLI.run(["recommend", "--profile", path])
        #expect(unknown.status == 1 && unknown.stderr.contains("unknown major \"Underwater Basket Weaving\""))
        let missing = try CLI.run(["recommend", "--profile", "/nonexistent/profile.json"])
        #expect(missing.status == 1 && missing.stderr.contains("/nonexistent/profile.json: cannot read the profile: no such file"), "\(missing.stderr)")
        let catalog = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json", "--catalog", "/nonexistent.csv"])
        #expect(catalog.status == 1 && catalog.stderr.contains("/nonexistent.csv: cannot read the CSV file: no such file"), "\(catalog.stderr)")
    }

    @Test("profiles come from standard input with - or /dev/stdin")
    func standardInput() throws {
        let profile = try String(contentsOfFile: CLI.root.appendingPathComponent("datasets/sample-profile.json").path, encoding: .utf8)
        let file = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json", "--count", "3"])
        for path in ["-", "/dev/stdin"] {
            let piped = try CLI.run(["recommend", "--profile", path, "--count", "3"], stdin: profile)
            #expect(piped.status == 0, "\(path): \(piped.stderr)")
            #expect(piped.stdout == file.stdout)
        }
    }

    @Test("the issue's crashing inputs are clear errors", arguments: [
        ("{\"annual_budget\":1e-300}", "annual_budget"),
        ("{\"max_distance_miles\":1e300}", "max_distance_miles"),
        ("{\"annual_budgett\": 30000}", "annual_budgett"),
        ("{\"sat\": 1200, \"sat\": 1300}", "sat: key given twice"),
        ("{\n  \"sat\": 1200,\n}", ":3:1: malformed JSON"),
    ])
    func crashingInputs(json: String, message: String) throws {
        let path = try CLI.temporaryFile(json)
        for command in [["demo", "--swipes", "3"], ["recommend"]] {
            let result = try CLI.run(command + ["--profile", path])
            #expect(result.status == 1, "\(command): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"))
        }
    }

    @Test("demo on an empty catalog and unwritable outputs are one-line errors")
    func emptyAndUnwritable() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let schools = try String(contentsOfFile: CLI.root.appendingPathComponent("datasets/schools.csv").path, encoding: .utf8)
        let majors = try String(contentsOfFile: CLI.root.appendingPathComponent("datasets/school_majors.csv").path, encoding: .utf8)
        try (String(schools.prefix { $0 != "\n" }) + "\n").write(to: folder.appendingPathComponent("s.csv"), atomically: true, encoding: .utf8)
        try (String(majors.prefix { $0 != "\n" }) + "\n").write(to: folder.appendingPathComponent("m.csv"), atomically: true, encoding: .utf8)
        let demo = try CLI.run(["demo", "--catalog", folder.appendingPathComponent("s.csv").path,
                                "--majors", folder.appendingPathComponent("m.csv").path])
        #expect(demo.status == 1 && demo.stderr.contains("no schools"), "\(demo.stderr)")
        let file = folder.appendingPathComponent("s.csv").path
        let generate = try CLI.run(["generate", "--students", "2", "--swipes", "2", "--output", file + "/out"])
        #expect(generate.status == 1, "\(generate.stderr)")
        #expect(generate.stderr.contains("is a file, not a folder") && !generate.stderr.contains("NSCocoaErrorDomain"), "\(generate.stderr)")
        let evaluate = try CLI.run(["evaluate", "--limit", "2", "--swipes", "2", "--export", file])
        #expect(evaluate.status == 1 && evaluate.stderr.contains("is a file, not a folder"), "\(evaluate.stderr)")
    }

    @Test("--count is validated")
    func count() throws {
        let result = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json", "--count", "0"])
        #expect(result.status != 0 && result.stderr.contains("--count must be in 1…500"))
    }
}

@Suite("swiperank demo", .serialized)
struct DemoTests {
    @Test("40 swipes: phases change at 10/11 and 30/31, probes at every 4th card, 50/30/20 bands")
    func demo() throws {
        let result = try CLI.run(["demo", "--seed", "3", "--swipes", "40"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = result.stdout.split(separator: "\n").filter { $0.first == " " && Int($0.prefix(5).trimmingCharacters(in: .whitespaces)) != nil }
        #expect(rows.count == 40)
        for row in rows {
            let position = Int(row.prefix(5).trimmingCharacters(in: .whitespaces))!
            #expect(row.contains("PROBE") == (position % 4 == 0), "\(row)")
            let phase = position <= 10 ? "discovery" : position <= 30 ? "refinement" : "stable"
            #expect(row.contains(" \(phase) "), "\(row)")
        }
        #expect(result.stdout.contains("after 10 swipes") && result.stdout.contains("bands 5/3/2"))
        #expect(result.stdout.contains("after 40 swipes") && result.stdout.contains("bands 20/12/8"))
        // The same seed prints the same run.
        #expect(try CLI.run(["demo", "--seed", "3", "--swipes", "40"]).stdout == result.stdout)
        // Three students summarised, each cosine move stated, the reason it can fall given, and
        // the grades of the first student's 40 cards spread over at least three letters.
        #expect(result.stdout.contains("Summary over 3 students"))
        let summaries = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  seed ") }
        #expect(summaries.count == 3 && summaries.allSatisfy { $0.contains("cosine ") && $0.contains(" → ") && $0.contains("grades ") })
        #expect(result.stdout.contains("It can fall: the prior is the profile's own cold start"))
        let grades = Set(rows.map { row in row.split(separator: " ", omittingEmptySubsequences: true).first { ["A", "B", "C", "D", "F"].contains(String($0)) } })
        #expect(grades.count >= 3, "\(grades)")
    }
}

@Suite("swiperank generate", .serialized)
struct GenerateTests {
    @Test("the same seed writes byte-identical files")
    func deterministic() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-gen-\(UUID().uuidString)")
        var outputs: [[Data]] = []
        for run in 0..<2 {
            let folder = base.appendingPathComponent("\(run)").path
            let result = try CLI.run(["generate", "--seed", "11", "--students", "3", "--swipes", "6", "--output", folder])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("wrote 3 students") && result.stdout.contains("wrote 18 swipes"))
            outputs.append(try ["students.csv", "swipes.csv"].map { try Data(contentsOf: URL(fileURLWithPath: folder).appendingPathComponent($0)) })
        }
        #expect(outputs[0] == outputs[1])
        let bad = try CLI.run(["generate", "--students", "0"])
        #expect(bad.status != 0 && bad.stderr.contains("--students must be in"))
    }
}

@Suite("swiperank evaluate", .serialized)
struct EvaluateTests {
    @Test("prints NDCG@10 curves and metrics for the engine and every baseline")
    func evaluate() throws {
        let result = try CLI.run(["evaluate", "--limit", "4", "--swipes", "10"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("4 students × 10 swipes × 15 policies"))
        #expect(result.stdout.contains("NDCG@10 of the cards served next"))
        for policy in ["engine", "engine_no_probes", "engine_boundary_probes", "engine_no_geo_mix", "profile_only", "popularity", "random", "naive_sgd",
                       "naive_sgd_engine_serving", "engine_student_bias", "engine_no_learning", "linear_oracle"] {
            #expect(result.stdout.contains("\n\(policy) "), "\(policy)")
        }
        #expect(result.stdout.contains("Replay of 160 logged swipes"), "4 students × 40 logged swipes")
        #expect(result.stdout.contains("ndcg@10") && result.stdout.contains("IPS likes") && result.stdout.contains("swipe_auc"))
        // The paired comparisons behind the learning targets, each with an interval.
        for pair in ["engine − popularity", "engine_population_prior − population_prior", "engine_population_prior_bias − population_prior"] {
            let line = result.stdout.split(separator: "\n").first { $0.contains(pair) }
            #expect(line.map { $0.contains("precision@10 ") && $0.contains("swipe_auc ") && $0.contains("[") } == true, "\(pair)")
        }
        let bad = try CLI.run(["evaluate", "--students", "/nonexistent.csv"])
        #expect(bad.status == 1 && bad.stderr.contains("/nonexistent.csv: cannot read the CSV file"))
    }

    @Test("--skip-simulation, --skip-replay, --train-fraction and --k choose what runs; bad combinations are errors naming the option")
    func runOptions() throws {
        let replayOnly = try CLI.run(["evaluate", "--limit", "4", "--skip-simulation", "--train-fraction", "0.5", "--k", "5"])
        #expect(replayOnly.status == 0, "\(replayOnly.stderr)")
        #expect(!replayOnly.stdout.contains("Simulation ("))
        #expect(replayOnly.stdout.contains("first 50% of each student's swipes") && replayOnly.stdout.contains("precision@5"))
        let simulationOnly = try CLI.run(["evaluate", "--limit", "3", "--swipes", "10", "--skip-replay"])
        #expect(simulationOnly.status == 0, "\(simulationOnly.stderr)")
        #expect(simulationOnly.stdout.contains("3 students × 10 swipes") && !simulationOnly.stdout.contains("Replay of"))
        #expect(simulationOnly.stdout.contains("general") && simulationOnly.stdout.contains("\nlinear_oracle "))
        for (arguments, message) in [(["--train-fraction", "1"], "--train-fraction must be in (0, 1)"),
                                     (["--train-fraction", "0"], "--train-fraction must be in (0, 1)"),
                                     (["--k", "0"], "--k must be in 1…1000"),
                                     (["--skip-simulation", "--skip-replay"], "--skip-simulation leaves only the replay"),
                                     (["--skip-simulation", "--interactions", ""], "--skip-simulation leaves only the replay"),
                                     (["--skip-simulation", "--export", "/tmp/x"], "--export writes the simulation's report")] {
            let bad = try CLI.run(["evaluate"] + arguments)
            #expect(bad.status != 0 && bad.stderr.contains(message), "\(arguments): \(bad.stderr)")
        }
    }

    @Test("fit-factors writes a model file that serve checks at start; errors name the option or the file")
    func factors() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-factors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("factors.json").path
        let restaurants = ["--interactions", "datasets/restaurants/swipes.csv", "--schema", "datasets/restaurants/restaurants.schema.json",
                           "--catalog", "datasets/restaurants/restaurants.csv"]
        let fit = try CLI.run(["fit-factors", "--output", file, "--dimension", "8", "--iterations", "4"] + restaurants)
        #expect(fit.status == 0 && fit.stdout.contains("fitted 80 item factors") && fit.stdout.contains("on 1200 swipes"), "\(fit.stderr)")
        let model = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        #expect(model?["version"] as? Int == 1 && model?["dimension"] as? Int == 8 && (model?["item_factors"] as? [[Double]])?.count == 80)
        let again = dir.appendingPathComponent("again.json").path
        #expect(try CLI.run(["fit-factors", "--output", again, "--dimension", "8", "--iterations", "4"] + restaurants).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(contentsOf: URL(fileURLWithPath: again)), "deterministic for a seed")
        let chosen = try CLI.run(["fit-factors", "--output", again, "--choose", "--students", "datasets/restaurants/users.csv"] + restaurants)
        #expect(chosen.status == 0 && chosen.stdout.contains("chosen on the last 30%"), "\(chosen.stderr)")
        // The app's dwell times and reactions from a CSV: read, weighing the answers, offered to the choice.
        // student_id,item_id,… per swipe: the first 300 swipes, every fifth with a reaction, the rest a dwell time.
        let swipeLines = try String(contentsOfFile: "datasets/restaurants/swipes.csv", encoding: .utf8).split(separator: "\n").dropFirst().prefix(300)
        let signalLines = swipeLines.enumerated().map { n, line in
            let fields = line.split(separator: ",")
            return "\(fields[0]),\(fields[1])," + (n % 5 == 0 ? "reaction,♥" : "dwell_ms,\(500 + 37 * n)")
        }
        let signalsFile = dir.appendingPathComponent("signals.csv").path
        try (["student_id,item_id,kind,value"] + signalLines).joined(separator: "\n").appending("\n")
            .write(toFile: signalsFile, atomically: true, encoding: .utf8)
        let weighed = try CLI.run(["fit-factors", "--output", again, "--dimension", "8", "--iterations", "4", "--signals", signalsFile,
                                   "--reaction-boost", "1", "--dwell-boost", "0.5"] + restaurants)
        #expect(weighed.status == 0 && weighed.stdout.contains("read 300 dwell times and reactions") && weighed.stdout.contains("reactions×2.0"),
                "\(weighed.stdout) \(weighed.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) != Data(contentsOf: URL(fileURLWithPath: again)), "the signals moved the factors")
        let offered = try CLI.run(["fit-factors", "--output", again, "--choose", "--students", "datasets/restaurants/users.csv",
                                   "--signals", signalsFile] + restaurants)
        // 27 settings, plain and weighed, × 12 weights γ; and the rule's evidence for γ = 0 or not.
        #expect(offered.status == 0 && offered.stdout.contains("648 settings × weights") && offered.stdout.contains("the best γ > 0 against none: "),
                "\(offered.stdout) \(offered.stderr)")
        try "student_id,item_id,kind,value\nu01,r024,dwell_ms,12\nu01,r065,dwell_ms,soon\n".write(toFile: signalsFile, atomically: true, encoding: .utf8)
        let badSignal = try CLI.run(["fit-factors", "--output", again, "--signals", signalsFile] + restaurants)
        #expect(badSignal.status != 0 && badSignal.stderr.contains("signals.csv:3:") && badSignal.stderr.contains("dwell_ms \"soon\""), "\(badSignal.stderr)")
        for (bad, option) in [(["--dimension", "0"], "--dimension"), (["--confidence", "0"], "--confidence"), (["--weight", "-1"], "--weight"),
                              (["--reaction-boost", "1"], "--reaction-boost"), (["--dwell-boost", "-1"], "--dwell-boost")] {
            let refused = try CLI.run(["fit-factors", "--output", again] + bad + restaurants)
            #expect(refused.status != 0 && refused.stderr.contains(option), "\(refused.stderr)")
        }
        // The restaurants' model on the school catalog: refused at start, naming the file.
        let wrong = try CLI.run(["serve", "--port", "0", "--database", dir.appendingPathComponent("db.sqlite").path, "--factors", file])
        #expect(wrong.status != 0 && wrong.stderr.contains(file) && wrong.stderr.contains("feature_names"), "\(wrong.stderr)")
        try Data("{\"version\": 1,".utf8).write(to: URL(fileURLWithPath: again))
        let corrupt = try CLI.run(["serve", "--port", "0", "--database", dir.appendingPathComponent("db.sqlite").path, "--factors", again] + restaurants.dropFirst(2))
        #expect(corrupt.status != 0 && corrupt.stderr.contains(again), "\(corrupt.stderr)")
    }

    @Test("evaluate --families prints each family's served NDCG and paired differences; it refuses --schema and --export")
    func families() throws {
        let run = try CLI.run(["evaluate", "--families", "--limit", "4", "--swipes", "10", "--population-students", "12"])
        #expect(run.status == 0, "\(run.stderr)")
        for family in ["peer_groups", "herd", "noisy", "drifting"] { #expect(run.stdout.contains("Family \(family): 4 students × 10 swipes"), "\(family)") }
        #expect(run.stdout.contains("engine_collaborative − naive_sgd at n=10"))
        let items = try CLI.run(["evaluate", "--families", "--schema", "datasets/restaurants/restaurants.schema.json",
                                 "--catalog", "datasets/restaurants/restaurants.csv", "--interactions", "datasets/restaurants/swipes.csv"])
        #expect(items.status != 0 && items.stderr.contains("--families"))
        let none = try CLI.run(["evaluate", "--families", "--limit", "2", "--population-students", "0"])
        #expect(none.status != 0 && none.stderr.contains("--population-students"))
        // --signals is a part of --families (its run is tested through FamilyEvaluation.runSignals:
        // 24 choices over the school catalog take minutes in a debug build).
        let alone = try CLI.run(["evaluate", "--signals"])
        #expect(alone.status != 0 && alone.stderr.contains("--signals"))
    }

    @Test("fit-prior writes a prior that evaluate loads; without one the policy is fitted on other students or left out; errors name the file")
    func populationPrior() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-prior-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fit = try CLI.run(["fit-prior", "--output", file])
        #expect(fit.status == 0, "\(fit.stderr)")
        #expect(fit.stdout.contains("fitted on 200 students, 8000 swipes"))
        let prior = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        #expect(prior?["students"] as? Int == 200 && (prior?["item_effects"] as? [Double])?.count == 2_294 && prior?["version"] as? Int == 1)
        let loaded = try CLI.run(["evaluate", "--limit", "3", "--swipes", "10", "--skip-replay", "--population-prior", file])
        #expect(loaded.status == 0 && loaded.stdout.contains("\nengine_population_prior "), "\(loaded.stderr)")
        let fitted = try CLI.run(["evaluate", "--limit", "3", "--swipes", "10", "--skip-replay", "--population-students", "5"])
        #expect(fitted.status == 0 && fitted.stdout.contains("\nengine_population_prior "), "\(fitted.stderr)")
        let without = try CLI.run(["evaluate", "--limit", "3", "--swipes", "10", "--skip-replay", "--population-students", "0"])
        #expect(without.status == 0 && without.stdout.contains("× 14 policies") && !without.stdout.contains("engine_population_prior"))
        let otherCatalog = try CLI.run(["evaluate", "--population-prior", file, "--interactions", "datasets/restaurants/swipes.csv",
                                        "--schema", "datasets/restaurants/restaurants.schema.json", "--catalog", "datasets/restaurants/restaurants.csv"])
        #expect(otherCatalog.status != 0 && otherCatalog.stderr.contains(file) && otherCatalog.stderr.contains("catalog_fingerprint"),
                "\(otherCatalog.stderr)")
        let missing = try CLI.run(["evaluate", "--population-prior", "/nonexistent/prior.json"])
        #expect(missing.status != 0 && missing.stderr.contains("/nonexistent/prior.json"))
        let precision = try CLI.run(["fit-prior", "--output", file, "--item-precision", "0"])
        #expect(precision.status != 0 && precision.stderr.contains("--item-precision"))
        let items = try CLI.run(["fit-prior", "--output", file, "--interactions", "datasets/restaurants/swipes.csv",
                                 "--schema", "datasets/restaurants/restaurants.schema.json", "--catalog", "datasets/restaurants/restaurants.csv"])
        #expect(items.status == 0 && items.stdout.contains("fitted on 60 students, 1200 swipes"), "\(items.stderr)")
        // --exposure-weight: a number writes a version 2 prior with one exposure effect per item;
        // auto prints the procedure's table; evaluate's replay takes it too; bad values are errors.
        let restaurants = ["--interactions", "datasets/restaurants/swipes.csv", "--schema", "datasets/restaurants/restaurants.schema.json",
                           "--catalog", "datasets/restaurants/restaurants.csv"]
        let exposed = try CLI.run(["fit-prior", "--output", file, "--exposure-weight", "1.5"] + restaurants)
        #expect(exposed.status == 0 && exposed.stdout.contains("exposure weight β = 1.5"), "\(exposed.stderr)")
        let v2 = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        #expect(v2?["version"] as? Int == 2 && v2?["exposure_weight"] as? Double == 1.5 && (v2?["exposure_effects"] as? [Double])?.count == 80)
        let auto = try CLI.run(["fit-prior", "--output", file, "--exposure-weight", "auto"] + restaurants)
        #expect(auto.status == 0 && auto.stdout.contains("exposure weight chosen on") && auto.stdout.contains("β=0.0 "), "\(auto.stderr)")
        let replay = try CLI.run(["evaluate", "--skip-simulation", "--exposure-weight", "auto"] + restaurants)
        #expect(replay.status == 0 && replay.stdout.contains("exposure weight β chosen on the training swipes"), "\(replay.stderr)")
        for bad in ["-1", "x", "nan"] {
            let refused = try CLI.run(["fit-prior", "--output", file, "--exposure-weight", bad])
            #expect(refused.status != 0 && refused.stderr.contains("exposure-weight"), "\(bad): \(refused.stderr)")
        }
        // The app's reactions weigh the prior's answers: a reaction on every like of the first 300
        // swipes moves the prior; the same file without a boost, or boosts without signals, do not.
        let plainFile = file + ".plain.json"
        #expect(try CLI.run(["fit-prior", "--output", plainFile] + restaurants).status == 0)
        let swipeCSV = try String(contentsOfFile: "datasets/restaurants/swipes.csv", encoding: .utf8)
        let firstRows: [[Substring]] = swipeCSV.split(separator: "\n").dropFirst().prefix(300).map { $0.split(separator: ",") }
        let likes = firstRows.filter { row in row.count > 2 && row[2] == "like" }
        let signalsFile = file + ".signals.csv"
        try (["student_id,item_id,kind,value"] + likes.map { "\($0[0]),\($0[1]),reaction,CTFO" }).joined(separator: "\n").appending("\n")
            .write(toFile: signalsFile, atomically: true, encoding: .utf8)
        let unweighed = try CLI.run(["fit-prior", "--output", file, "--signals", signalsFile] + restaurants)
        #expect(unweighed.status == 0 && unweighed.stdout.contains("read \(likes.count) dwell times and reactions"), "\(unweighed.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(contentsOf: URL(fileURLWithPath: plainFile)), "no boost: the plain prior")
        let weighed = try CLI.run(["fit-prior", "--output", file, "--signals", signalsFile, "--reaction-boost", "1"] + restaurants)
        #expect(weighed.status == 0, "\(weighed.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) != Data(contentsOf: URL(fileURLWithPath: plainFile)), "the reactions moved the prior")
        let chosen = try CLI.run(["fit-prior", "--output", file, "--signals", signalsFile, "--choose-signals"] + restaurants)
        #expect(chosen.status == 0 && chosen.stdout.contains("signals chosen on the last 30% of each student's swipes")
                && chosen.stdout.contains("plain ") && chosen.stdout.contains("reactions×2.0 dwell^0.5"), "\(chosen.stdout) \(chosen.stderr)")
        let chosenPrior = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(chosenPrior == (chosen.stdout.contains(": plain") ? try Data(contentsOf: URL(fileURLWithPath: plainFile)) : chosenPrior))
        for (bad, option) in [(["--reaction-boost", "1"], "--reaction-boost"), (["--dwell-boost", "-1"], "--dwell-boost"),
                              (["--choose-signals"], "--choose-signals"), (["--store", "sqlite", "--signals", signalsFile], "--signals")] {
            let refused = try CLI.run(["fit-prior", "--output", file] + bad + restaurants)
            #expect(refused.status != 0 && refused.stderr.contains(option), "\(bad): \(refused.stderr)")
        }
    }

    @Test("--term-basis: expanded serves the same cold start and fits a prior over six terms; bad values and --schema are errors")
    func termBasis() throws {
        let standard = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json", "--count", "5"])
        let expanded = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json", "--count", "5", "--term-basis", "expanded"])
        #expect(standard.status == 0 && expanded.status == 0, "\(expanded.stderr)")
        #expect(expanded.stdout == standard.stdout, "the extra terms start at weight 0")
        let viaEnvironment = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json", "--count", "5"],
                                         environment: ["SWIPERANK_TERM_BASIS": "expanded"])
        #expect(viaEnvironment.status == 0 && viaEnvironment.stdout == standard.stdout)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-prior-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let fit = try CLI.run(["fit-prior", "--output", file, "--term-basis", "expanded"])
        #expect(fit.status == 0, "\(fit.stderr)")
        let prior = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        #expect(prior?["term_names"] as? [String] == ["distance", "budget", "academic_fit", "major_fit", "budget_over", "distance_near"])
        // A prior fitted for six terms does not load into the standard basis's engine.
        let mismatch = try CLI.run(["evaluate", "--limit", "2", "--swipes", "5", "--skip-replay", "--population-prior", file])
        #expect(mismatch.status != 0 && mismatch.stderr.contains("feature_count") && mismatch.stderr.contains("budget_over"), "\(mismatch.stderr)")
        let bad = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json", "--term-basis", "cubic"])
        #expect(bad.status != 0 && bad.stderr.contains("term-basis"))
        let badEnvironment = try CLI.run(["recommend", "--profile", "datasets/sample-profile.json"], environment: ["SWIPERANK_TERM_BASIS": "cubic"])
        #expect(badEnvironment.status != 0 && badEnvironment.stderr.contains("SWIPERANK_TERM_BASIS") && badEnvironment.stderr.contains("cubic"))
        let items = try CLI.run(["recommend", "--profile", "-", "--schema", "datasets/restaurants/restaurants.schema.json",
                                 "--catalog", "datasets/restaurants/restaurants.csv", "--term-basis", "expanded"], stdin: "{}")
        #expect(items.status != 0 && items.stderr.contains("--term-basis is for the school catalog"))
    }

    @Test("tune runs the procedure over a grid, reports the current configuration and a choice; bad grids are errors")
    func tune() throws {
        let result = try CLI.run(["tune", "--tuning-students", "4", "--swipes", "10", "--prior-precisions", "1,3",
                                  "--forgettings", "0.97", "--bias", "off", "--interactions", ""])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Tuning: 4 hidden students (seed 7) × 10 swipes × 2 candidates"))
        #expect(result.stdout.contains("τ=3.0 λ=0.97 bias=off (current)") && result.stdout.contains("τ=1.0 λ=0.97 bias=off"))
        #expect(result.stdout.contains("\nchosen: "))
        for (arguments, message) in [(["--forgettings", "1.5"], "--forgettings"), (["--prior-precisions", "x"], "--prior-precisions"),
                                     (["--bias", "maybe"], "--bias"), (["--swipes", "5"], "--swipes"),
                                     (["--schema", "datasets/restaurants/restaurants.schema.json"], "--schema")] {
            let bad = try CLI.run(["tune"] + arguments)
            #expect(bad.status != 0 && bad.stderr.contains(message), "\(arguments): \(bad.stderr)")
        }
    }

    @Test("--student-model hidden simulates students outside the engine's model class; the report carries both models")
    func hiddenStudents() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-hidden-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CLI.run(["evaluate", "--limit", "4", "--swipes", "10", "--interactions", "", "--student-model", "hidden",
                                  "--export", folder])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Simulation (hidden): 4 students × 10 swipes × 15 policies"))
        #expect(result.stdout.contains("Simulation (logistic): 4 students × 10 swipes × 15 policies"))
        let report = try String(contentsOfFile: folder + "/report.md", encoding: .utf8)
        #expect(report.contains("## Students outside the engine's model class"))
        #expect(report.contains("Where the engine loses here"))
        #expect(FileManager.default.fileExists(atPath: folder + "/outside_model.csv"))
        let items = try CLI.run(["evaluate", "--student-model", "hidden", "--schema", "datasets/restaurants/restaurants.schema.json",
                                 "--catalog", "datasets/restaurants/restaurants.csv"])
        #expect(items.status != 0 && items.stderr.contains("--student-model hidden"))
        let unknown = try CLI.run(["evaluate", "--student-model", "psychic"])
        #expect(unknown.status != 0 && unknown.stderr.contains("student-model"))
    }
}

@Suite("swiperank on a second catalog (restaurants, --schema)", .serialized)
struct GenericCatalogCLITests {
    static let catalog = ["--schema", "datasets/restaurants/restaurants.schema.json", "--catalog", "datasets/restaurants/restaurants.csv",
                          "--region-attribute", "neighborhood"]

    @Test("evaluate runs simulation and replay on any catalog and writes the report")
    func evaluate() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-items-\(UUID().uuidString)").path
        let result = try CLI.run(["evaluate", "--students", "datasets/restaurants/users.csv",
                                  "--interactions", "datasets/restaurants/swipes.csv", "--swipes", "20", "--popularity-column", "reviews",
                                  "--export", folder] + Self.catalog)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("60 students × 20 swipes × 13 policies"))
        #expect(result.stdout.contains("cover: distinct items served / 80"))
        #expect(result.stdout.contains("Replay of 1200 logged swipes"))
        for policy in ["engine", "engine_no_probes", "engine_boundary_probes", "engine_no_geo_mix", "profile_only", "popularity", "random", "naive_sgd",
                       "naive_sgd_engine_serving", "engine_student_bias", "engine_no_learning", "linear_oracle"] {
            #expect(result.stdout.contains("\n\(policy) "), "\(policy)")
        }
        let report = try String(contentsOfFile: folder + "/report.md", encoding: .utf8)
        #expect(report.contains("datasets/restaurants/restaurants.csv") && report.contains("every item not swiped"))
        #expect(FileManager.default.fileExists(atPath: folder + "/learning_curves.svg"))
    }

    @Test("without a popularity the popularity baseline is left out; bad options are clear errors")
    func options() throws {
        let result = try CLI.run(["evaluate", "--students", "datasets/restaurants/users.csv", "--interactions", "",
                                  "--swipes", "10", "--limit", "5"] + Self.catalog)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("5 students × 10 swipes × 12 policies") && !result.stdout.contains("\npopularity "))
        let column = try CLI.run(["evaluate", "--students", "datasets/restaurants/users.csv", "--popularity-column", "stars"] + Self.catalog)
        #expect(column.status == 1 && column.stderr.contains("--popularity-column \"stars\" is not a numeric attribute"), "\(column.stderr)")
        let schools = try CLI.run(["evaluate", "--popularity-column", "reviews"])
        #expect(schools.status != 0 && schools.stderr.contains("--popularity-column needs --schema"))
        let wrongUsers = try CLI.run(["evaluate", "--students", "datasets/students.csv"] + Self.catalog)
        #expect(wrongUsers.status == 1 && wrongUsers.stderr.contains("datasets/students.csv:1:"), "\(wrongUsers.stderr)")
    }

    @Test("without --students the users are everyone in the log, with no stated preferences")
    func usersFromLog() throws {
        let result = try CLI.run(["evaluate", "--interactions", "datasets/restaurants/swipes.csv", "--swipes", "10", "--limit", "6"]
                                 + Self.catalog)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("6 students × 10 swipes × 13 policies"))
        #expect(result.stdout.contains("Replay of 120 logged swipes"), "6 users × 20 logged swipes")
        // The same users with their stated preferences read from the file give a different cold start.
        let stated = try CLI.run(["evaluate", "--students", "datasets/restaurants/users.csv", "--interactions", "datasets/restaurants/swipes.csv",
                                  "--swipes", "10", "--limit", "6", "--skip-simulation"] + Self.catalog)
        let anonymous = try CLI.run(["evaluate", "--interactions", "datasets/restaurants/swipes.csv", "--limit", "6", "--skip-simulation"]
                                    + Self.catalog)
        #expect(stated.status == 0 && anonymous.status == 0)
        func line(_ text: String, _ policy: String) -> Substring? { text.split(separator: "\n").first { $0.hasPrefix(policy + " ") } }
        #expect(line(stated.stdout, "profile_only") != nil && line(stated.stdout, "profile_only") != line(anonymous.stdout, "profile_only"))
        let none = try CLI.run(["evaluate", "--interactions", ""] + Self.catalog)
        #expect(none.status != 0 && none.stderr.contains("with --schema and no --students"), "\(none.stderr)")
    }

    @Test("recommend and generate work with --schema")
    func recommendAndGenerate() throws {
        let profile = try CLI.temporaryFile(#"{"home": {"latitude": 40.0, "longitude": -75.0}, "max_distance_miles": 3, "preferences": {"cuisine=thai": 1}}"#)
        let result = try CLI.run(["recommend", "--profile", profile, "--count", "3"] + Self.catalog)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        let cards = json["recommendations"] as! [[String: Any]]
        #expect(cards.count == 3 && cards.allSatisfy { ($0["school"] as! [String: Any])["cuisine"] is String })
        let bad = try CLI.run(["recommend", "--profile", try CLI.temporaryFile(#"{"preferences": {"stars": 1}}"#)] + Self.catalog)
        #expect(bad.status == 1 && bad.stderr.contains("preferences.stars: not a feature column"), "\(bad.stderr)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-gen-items-\(UUID().uuidString)").path
        let generated = try CLI.run(["generate", "--users", "datasets/restaurants/users.csv", "--swipes", "20", "--seed", "7",
                                     "--output", folder] + Self.catalog)
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/swipes.csv"))
                == Data(contentsOf: CLI.root.appendingPathComponent("datasets/restaurants/swipes.csv")))
    }
}

@Suite("swiperank serve and evaluate-groups options", .serialized)
struct ServeOptionTests {
    // A database path that cannot open: if an option were wrongly accepted, the command fails
    // on the store instead of serving (and the message check fails), never hangs.
    static let unopenable = ["--database", "/nonexistent-swiperank-dir/db.sqlite", "--port", "0"]

    @Test("bad service options stop the command and name the option", arguments: [
        (["--snapshot-spacing", "2"], "--snapshot-spacing"),
        (["--snapshot-spacing", "nan"], "--snapshot-spacing"),
        (["--snapshot-interval", "0"], "--snapshot-interval"),
        (["--group-max-members", "1"], "--group-max-members"),
        (["--group-joins-per-minute", "0"], "--group-joins-per-minute"),
        (["--group-strategy", "dictator"], "--group-strategy"),
    ])
    func badOptions(arguments: [String], option: String) throws {
        let result = try CLI.run(["serve"] + Self.unopenable + arguments)
        #expect(result.status != 0 && result.stderr.contains(option), "\(result.stderr)")
    }

    @Test("evaluate-groups prints every deck, writes the same files for the same seed, and checks its options")
    func evaluateGroups() throws {
        let a = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-groups-a-\(UUID().uuidString)").path
        let b = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-groups-b-\(UUID().uuidString)").path
        defer { for dir in [a, b] { try? FileManager.default.removeItem(atPath: dir) } }
        let first = try CLI.run(["evaluate-groups", "--groups", "12", "--solo-swipes", "3", "--seed", "4", "--export", a])
        #expect(first.status == 0, "\(first.stderr)")
        for deck in ["learned (average)", "learned (least_misery)", "learned (average_without_misery)",
                     "cold start (average_without_misery)", "shared shuffle", "member shuffles", "popularity"] {
            #expect(first.stdout.contains(deck), "\(deck)")
        }
        let second = try CLI.run(["evaluate-groups", "--groups", "12", "--solo-swipes", "3", "--seed", "4", "--export", b])
        #expect(second.status == 0)
        for file in ["groups.md", "groups.csv"] {
            let x = try Data(contentsOf: URL(fileURLWithPath: a + "/" + file)), y = try Data(contentsOf: URL(fileURLWithPath: b + "/" + file))
            #expect(x == y && !x.isEmpty, "\(file)")
        }
        let csv = try String(contentsOfFile: a + "/groups.csv", encoding: .utf8)
        #expect(csv.split(separator: "\n").count == 1 + 7 * 12)
        let bad = try CLI.run(["evaluate-groups", "--groups", "5"])
        #expect(bad.status != 0 && bad.stderr.contains("--groups"))
    }
}
