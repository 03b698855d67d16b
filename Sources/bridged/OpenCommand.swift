import ArgumentParser
import BridgeConfig
import BridgeServer
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `bridged open URL`: serves as `serve` does and starts a browser session on URL (a real
/// Chromium tab per web view; see docs/BROWSER.md).
struct OpenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Serve, and open URL in a browser session: Chromium, driven by the daemon, plays the app's web views.",
        discussion: """
            Takes every option of `serve`. The first line on stdout is `listening on URL`; the next \
            ones name the dashboard, where the session's stack shows. Needs Chromium (Debian \
            package 'chromium', or --chromium PATH).
            """)

    @Argument(help: "The page to open, e.g. http://127.0.0.1:8787/app/astro.html.")
    var url: String

    @OptionGroup var options: DaemonOptions

    func validate() throws {
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
            throw ValidationError("URL must be an http:// or https:// address (got '\(url)')")
        }
    }

    func run() throws {
        let level = options.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "bridged")
        var config = options.daemonConfiguration
        if let path = options.config {
            let depth = options.maxStackDepth
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
        let url = self.url
        daemon.onStart = { [unowned daemon] port in
            let origin = config.transport.displayURL(port: port)
            Stdout.writeLine("listening on \(origin)")
            Stdout.writeLine("dashboard \(origin)/")
            Stdout.writeLine("opening \(url) in a browser session")
            daemon.openBrowserSession(url: url)
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
