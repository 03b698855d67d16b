import ArgumentParser
import BridgeConfig
import BridgeServer
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What every command that runs the daemon (`serve`, `open`) does around it: logging, the
/// configuration with its router file, the daemon itself, and the signals that stop it.
extension DaemonOptions {
    /// Bootstraps logging (`--log-level`, `--log-format`) and builds the daemon from these
    /// options. A bad `--config` file stops here, before anything listens.
    func makeDaemon(_ adjust: (inout DaemonConfiguration) -> Void = { _ in }) throws -> (daemon: Daemon, configuration: DaemonConfiguration, logger: Logger) {
        let level = logLevel, format = logFormat
        LoggingSystem.bootstrap { label in BridgedLogHandler(label: label, format: format, level: level) }
        let logger = Logger(label: "bridged")
        var configuration = daemonConfiguration
        if let path = config {
            let depth = maxStackDepth
            // Checked now, so a bad file stops the daemon before it listens; made again with the
            // real origin once the port is known.
            do {
                _ = try RouterConfigFile.loadRouter(path: path, maxStackDepth: depth, origin: "http://127.0.0.1:8787")
            } catch {
                throw ValidationError("--config: \(error.description)")
            }
            configuration.router = { origin in try RouterConfigFile.loadRouter(path: path, maxStackDepth: depth, origin: origin) }
        }
        guard let bridgeJS = EmbeddedAssets.bytes(named: "bridge.js") else {
            fatalError("bridge.js is not embedded: Sources/BridgeServer/Assets/bridge.js must link to js-client/bridge.js")
        }
        adjust(&configuration)
        let daemon = try Daemon(configuration: configuration, bridgeJS: bridgeJS, logger: logger)
        return (daemon, configuration, logger)
    }

    /// Calls `ready` (on the service thread) when the daemon may say it is listening: at once;
    /// with `--devtools`, once Chromium, started now, listens for DevTools too, with its url
    /// (so that `GET /api/devtools` answers as soon as `listening on …` is printed). When
    /// Chromium cannot start, `ready` is not called, the daemon stops and `run` fails (exit
    /// status 1). Call from `onStart`.
    func whenReady(_ daemon: Daemon, failure: StartupFailure, _ ready: @escaping (_ devtools: String?) -> Void) {
        guard devtools else { return ready(nil) }
        let box = ServiceThreadOnly(ready)
        daemon.startDevTools { [remote = daemon.remote] result in
            switch result {
            case .success(let url):
                box.value(url)
            case .failure(let error):
                failure.message = "--devtools: \(error)"
                remote.stop()
            }
        }
    }

    /// Runs `daemon` until a signal ends it: SIGINT stops at once; SIGTERM drains first
    /// (`--drain-ms`; a second SIGTERM stops at once).
    func run(_ daemon: Daemon, logger: Logger, startupFailure: StartupFailure? = nil) throws {
        let interrupt = SignalHandlers(signals: [SIGINT]) { [remote = daemon.remote] in remote.stop() }
        let terminate = SignalHandlers(signals: [SIGTERM]) { [remote = daemon.remote, ms = drainMs] in remote.drain(milliseconds: ms) }
        try withExtendedLifetime((interrupt, terminate)) {
            try daemon.run()
        }
        if let message = startupFailure?.message {
            Stderr.writeLine("bridged: \(message)")
            throw ExitCode(1)
        }
        logger.info("bye")
    }
}

/// A value made on the service thread and used only there, carried through a `@Sendable` hop.
struct ServiceThreadOnly<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// Why the daemon stopped before it served what it was asked to (`--devtools` could not start
/// Chromium, `bridged open` could not open its session): set on the service thread, read after
/// it ends; `run` then exits with status 1, saying it on stderr.
final class StartupFailure: @unchecked Sendable {
    var message: String?
}
