import ArgumentParser
import BridgeConfig
import BridgeServer
import Dispatch
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct BridgedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bridged",
        abstract: "The native side of a hybrid app: navigation stacks for web pages over WebSocket.")

    @OptionGroup var options: DaemonOptions

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
        let daemon = try Daemon(configuration: config, bridgeJS: Array(bridgeJSSource.utf8), logger: logger)
        // Called on the service thread once the listener accepts connections.
        daemon.onStart = { port in
            Stdout.writeLine("listening on \(config.transport.displayURL(port: port))")
        }
        let signals = SignalHandlers(signals: [SIGINT, SIGTERM]) { [remote = daemon.remote] in
            remote.stop()
        }
        try withExtendedLifetime(signals) {
            try daemon.run()
        }
        logger.info("bye")
    }
}

enum Stdout {
    /// Writes one line straight to fd 1 (unbuffered, so a reader of a pipe sees it at once).
    static func writeLine(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// SIGINT/SIGTERM through Dispatch sources (the default action is disabled first), so the handler
/// is ordinary code on a Dispatch queue, not an async-signal context.
final class SignalHandlers {
    private let sources: [DispatchSourceSignal]

    init(signals: [Int32], handler: @escaping @Sendable () -> Void) {
        sources = signals.map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}
