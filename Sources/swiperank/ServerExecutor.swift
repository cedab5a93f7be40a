import ArgumentParser
import NIOCore
import NIOPosix
import Synchronization

/// Where a server command's Swift concurrency work runs (`serve --executor`, `bare-route
/// --executor`).
///
/// `nio` installs NIO's event loops as Swift concurrency's global executor
/// (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`, as
/// Vapor's template does): a request's handler runs on the event loop thread that read it.
/// With `pool` every request is handed from that event loop to Swift's cooperative pool and its
/// answer handed back, two thread switches each. `auto` (the default) is `nio` over SQLite and
/// `pool` over PostgreSQL: measured on this project's 2-core VM (docs/benchmarks.md, "The HTTP
/// ceiling"), `nio` cut a re-scored deck's server CPU by a fifth to a third over SQLite, and
/// over PostgreSQL it lost a quarter of the decks and swipes a second (a query's answer resumes
/// the request on the event loop of the database connection, away from its own).
///
/// NIO asks for the hook to be installed once per process, from the main thread, so the choice
/// is read from the command line and the environment first thing in `SwipeRankCommand.main()`,
/// before the arguments are parsed; the commands' own `--executor` options then validate it
/// and report what runs.
enum ServerExecutor: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// `nio` over SQLite (and for `bare-route`), `pool` over PostgreSQL.
    case auto
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

    /// What `auto` means for a store (`--store`'s value; nil is SQLite): `pool` for PostgreSQL,
    /// else `nio`. `nio` and `pool` stay what they are.
    func resolved(store: String?) -> ServerExecutor {
        guard self == .auto else { return self }
        let postgres = store.map { $0.hasPrefix("postgres://") || $0.hasPrefix("postgresql://") } ?? false
        return postgres ? .pool : .nio
    }

    /// The executor `arguments` (the command line without the program name) ask for, resolved
    /// (`nio` or `pool`): nil when they do not run a server command, else the last `--executor V`
    /// / `--executor=V` before a `--`, else the environment's `SWIPERANK_EXECUTOR`, else `auto`,
    /// with `auto` resolved by `serve`'s `--store` (or `SWIPERANK_STORE`). A value that names no
    /// executor also gives nil: the command's own validation then refuses it with its message.
    static func requested(arguments: [String], environment: [String: String]) -> ServerExecutor? {
        guard let command = arguments.first, serverCommands.contains(command),
              let chosen = ServerExecutor(rawValue: lastValue(of: "--executor", in: arguments) ?? environment[environmentKey] ?? "auto")
        else { return nil }
        return chosen.resolved(store: command == "serve" ? lastValue(of: "--store", in: arguments) ?? environment["SWIPERANK_STORE"] : nil)
    }

    /// The value of the last `name V` or `name=V` before a `--` (a missing value is "").
    private static func lastValue(of name: String, in arguments: [String]) -> String? {
        var value: String?
        var i = 1
        while i < arguments.count, arguments[i] != "--" {
            if arguments[i] == name {
                value = i + 1 < arguments.count ? arguments[i + 1] : ""
                i += 1
            } else if arguments[i].hasPrefix(name + "=") {
                value = String(arguments[i].dropFirst(name.count + 1))
            }
            i += 1
        }
        return value
    }

    /// Installs NIO as the global executor when `requested(arguments:environment:)` says `nio`.
    /// Call once, first thing in `main` (NIO asks for the main thread, before other work).
    static func install(arguments: [String], environment: [String: String]) {
        guard requested(arguments: arguments, environment: environment) == .nio else { return }
        installed.store(NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor(), ordering: .relaxed)
    }

    /// The executor a command asked for, checked: its option, else the environment's value,
    /// which must name one (a typo is an error, not a silent default), else `auto`.
    ///
    /// - Throws: `ValidationError` naming the variable and the value.
    static func chosen(option: ServerExecutor?, environment: [String: String]) throws -> ServerExecutor {
        if let option { return option }
        guard let raw = environment[environmentKey] else { return .auto }
        guard let value = ServerExecutor(rawValue: raw) else {
            throw ValidationError("\(environmentKey) must be one of \(allCases.map(\.rawValue).joined(separator: ", ")), got \(raw.prefix(16))")
        }
        return value
    }

    /// What runs the handlers for a resolved choice, for the start-up log: `nio` only when the
    /// hook went in (NIO refuses it on platforms without the runtime's hook).
    var running: String {
        switch self {
        case .auto, .pool: "pool"
        case .nio: Self.installed.load(ordering: .relaxed) ? "nio" : "pool (NIO could not be installed as the global executor)"
        }
    }
}
