import ArgumentParser
import Foundation
import Hummingbird

/// `swiperank bare-route`: the HTTP ceiling of this machine for a deck's bytes — a Hummingbird
/// server with no middleware that answers every GET with a fixed body. `scripts/load`'s
/// `ceiling` scenario runs it beside `serve`, with the same wrk script and the bytes of a real
/// deck, so the service's throughput is read as a share of what the framework alone does here.
/// Hidden from help: a measuring tool, not a feature.
struct BareRoute: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bare-route",
        abstract: "Serve one fixed body on every GET (loopback; the load script's HTTP ceiling).",
        shouldDisplay: false)

    @Option(help: "The file whose bytes every answer carries (Content-Type: application/json).")
    var body: String

    @Option(help: "The port on 127.0.0.1 (0: any free port, announced on standard output).")
    var port = 0

    @Option(help: "auto, nio or pool, as `serve --executor` (env SWIPERANK_EXECUTOR; auto, the default, is nio here): the load script measures the ceiling both ways.")
    var executor: ServerExecutor?

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be in 0…65535") }
    }

    func run() async throws {
        let executor = try ServerExecutor.chosen(option: executor, environment: ProcessInfo.processInfo.environment).resolved(store: nil)
        let bytes: Data
        do { bytes = try Data(contentsOf: URL(fileURLWithPath: body)) } catch {
            throw CLIError("\(body): cannot read (\(error.localizedDescription))")
        }
        let buffer = ByteBuffer(bytes: bytes)
        let router = Router()
        router.get("**") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: buffer))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                              onServerRunning: { channel in
            FileHandle.standardError.write(Data("bare-route: executor \(executor.running)\n".utf8))
            await Serve.announce(port: channel.localAddress?.port ?? 0)
        })
        try await app.runService()
    }
}
