import ArgumentParser
import BridgeConfig
import BridgeServer
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `bridged serve` (also `bridged` with no subcommand): runs the daemon until SIGINT/SIGTERM.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the daemon: WebSocket endpoint, /bridge.js, the dashboard and the static app.",
        discussion: "The first line on stdout is `listening on URL` once connections are accepted (with --port 0 it names the port chosen).")

    @OptionGroup var options: DaemonOptions

    @Option(help: ArgumentHelp("Record a trace of this run (every frame in and out, every input of the protocol state machine, every stack) into a new file in this directory; see `bridged replay` and `bridged diagram`.", valueName: "dir"))
    var record: String?

    func run() throws {
        let level = options.logLevel, format = options.logFormat
        LoggingSystem.bootstrap { label in BridgedLogHandler(label: label, format: format, level: level) }
        let logger = Logger(label: "bridged")
        var config = options.daemonConfiguration
        if let path = options.config {
            let depth = options.maxStackDepth
            // Checked now, so a bad file stops the daemon before it listens; made again with the
            // real origin once the port is known.
            do {
                _ = try RouterConfigFile.loadRouter(path: path, maxStackDepth: depth, origin: "http://127.0.0.1:8787")
            } catch {
                throw ValidationError("--config: \(error.description)")
            }
            config.router = { origin in try RouterConfigFile.loadRouter(path: path, maxStackDepth: depth, origin: origin) }
        }
        guard let bridgeJS = EmbeddedAssets.bytes(named: "bridge.js") else {
            fatalError("bridge.js is not embedded: Sources/BridgeServer/Assets/bridge.js must link to js-client/bridge.js")
        }
        let daemon = try Daemon(configuration: config, bridgeJS: bridgeJS, logger: logger)
        if let record { try TraceRecording.start(daemon, directory: record, configPath: options.config) }
        // Called on the service thread once the listener accepts connections.
        daemon.onStart = { port in
            Stdout.writeLine("listening on \(config.transport.displayURL(port: port))")
        }
        // SIGINT stops at once; SIGTERM drains first (--drain-ms; a second SIGTERM stops at once).
        let interrupt = SignalHandlers(signals: [SIGINT]) { [remote = daemon.remote] in remote.stop() }
        let terminate = SignalHandlers(signals: [SIGTERM]) { [remote = daemon.remote, ms = options.drainMs] in remote.drain(milliseconds: ms) }
        try withExtendedLifetime((interrupt, terminate)) {
            try daemon.run()
        }
        logger.info("bye")
    }
}
