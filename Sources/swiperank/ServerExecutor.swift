import ArgumentParser
import NIOCore
import NIOPosix
import Synchronization

/// Where a server command's Swift concurrency work runs (`serve --executor`, `bare-route
/// --executor`).
///
/// `nio` (the default) installs NIO's event loops as Swift concurrency's global executor
/// (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`),
/// as Vapor's own template does: a request's handler then runs on the event loop thread that
/// read it. With `pool` every request is handed from the event loop that read it to Swift's
/// cooperative pool and its answer handed back, two thread switches each: on this project's
/// 2-core VM a re-scored deck cost a fifth to a third more server CPU that way
/// (docs/benchmarks.md, "The HTTP ceiling").
///
/// The hook can only be installed before other concurrency work and once per process, so the
/// choice is read from the command line and the environment in `SwipeRankCommand.main()`,
/// before the arguments are parsed; the commands' own `--executor` options then validate it
/// and report what was installed.
enum ServerExecutor: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// NIO's event loops run everything (one thread per core, no hand-off).
    case nio
    /// Swift's cooperative pool runs the handlers; the event loops only do I/O.
    case pool

    /// The environment variable both commands read when the option is absent.
    static let environmentKey = "SWIPERANK_EXECUTOR"
    /// The commands that run servers (the only ones that install anything).
    static let serverCommands: Set<String> = ["serve", "bare-route"]

    /// Whether `install(arguments:environment:)` installed NIO as the global executor: what the
    /// commands report at start.
    static let installed = Atomic<Bool>(false)

    /// The executor `arguments` (the command line without the program name) ask for: nil when
    /// they do not run a server command, else the last `--executor V` / `--executor=V` before
    /// a `--`, else the environment's `SWIPERANK_EXECUTOR`, else `nio`. A value that names no
    /// executor also gives nil: the command's own validation then refuses it with its message.
    static func requested(arguments: [String], environment: [String: String]) -> ServerExecutor? {
        guard let command = arguments.first, serverCommands.contains(command) else { return nil }
        var raw: String?
        var i = 1
        while i < arguments.count, arguments[i] != "--" {
            if arguments[i] == "--executor" {
                raw = i + 1 < arguments.count ? arguments[i + 1] : ""
                i += 1
            } else if arguments[i].hasPrefix("--executor=") {
                raw = String(arguments[i].dropFirst("--executor=".count))
            }
            i += 1
        }
        return ServerExecutor(rawValue: raw ?? environment[environmentKey] ?? ServerExecutor.nio.rawValue)
    }

    /// Installs NIO as the global executor when `requested(arguments:environment:)` says `nio`.
    /// Call once, first thing in `main` (NIO asks for the main thread, before other work).
    static func install(arguments: [String], environment: [String: String]) {
        guard requested(arguments: arguments, environment: environment) == .nio else { return }
        installed.store(NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor(), ordering: .relaxed)
    }

    /// The executor a command runs on, checked: its option, else the environment's value,
    /// which must name one (a typo is an error, not a silent default).
    ///
    /// - Throws: `ValidationError` naming the variable and the value.
    static func resolve(option: ServerExecutor?, environment: [String: String]) throws -> ServerExecutor {
        if let option { return option }
        guard let raw = environment[environmentKey] else { return .nio }
        guard let value = ServerExecutor(rawValue: raw) else {
            throw ValidationError("\(environmentKey) must be one of \(allCases.map(\.rawValue).joined(separator: ", ")), got \(raw.prefix(16))")
        }
        return value
    }

    /// What runs the handlers now, for the start-up log: `nio` only when the hook went in
    /// (NIO refuses it on platforms without the runtime's hook).
    static func running(_ chosen: ServerExecutor) -> String {
        switch chosen {
        case .pool: "pool"
        case .nio: installed.load(ordering: .relaxed) ? "nio" : "pool (NIO could not be installed as the global executor)"
        }
    }
}
