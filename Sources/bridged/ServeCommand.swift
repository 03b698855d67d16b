import ArgumentParser
import Foundation
import BridgeServer
import Logging

/// `bridged serve` (also `bridged` with no subcommand): runs the daemon until SIGINT/SIGTERM.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the daemon: WebSocket endpoint, /bridge.js, the dashboard and the static app.",
        discussion: "The first line on stdout is `listening on URL` once connections are accepted (with --port 0 it names the port chosen). With --devtools, it comes once Chromium listens for DevTools too, and the next line is `devtools ws://127.0.0.1:PORT/devtools/browser/ID`.")

    @OptionGroup var options: DaemonOptions

    @Option(help: ArgumentHelp("Record a trace of this run (every frame in and out, every input of the protocol state machine, every stack) into a new file in this directory; see `bridged replay` and `bridged diagram`.", valueName: "dir"))
    var record: String?

    /// The app's built web assets for capacitor browser sessions (served at the profile's
    /// origin, as `bridged open --web-dir`); a session asks for them with `webDir: true`. Also
    /// how `bridged check --web-dir` hands them to the daemon it starts.
    @Option(name: .customLong("web-dir"),
            help: ArgumentHelp("The built web assets of a Capacitor app (e.g. dist/), served to capacitor browser sessions created with \"webDir\": true at the origin the app has on the device (https://localhost/; docs/CAPACITOR.md).", valueName: "dir"))
    var webDir: String?

    func validate() throws {
        if let webDir {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: webDir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--web-dir \(webDir): not a directory")
            }
        }
    }

    func run() throws {
        let webDirectory = webDir.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        let (daemon, config, logger) = try options.makeDaemon { $0.browser.webDirectory = webDirectory }
        if let record { try TraceRecording.start(daemon, directory: record, configPath: options.config) }
        let failure = StartupFailure()
        // Called on the service thread once the listener accepts connections.
        daemon.onStart = { [unowned daemon, options] port in
            options.whenReady(daemon, failure: failure) { devtools in
                Stdout.writeLine("listening on \(config.transport.displayURL(port: port))")
                if let devtools { Stdout.writeLine("devtools \(devtools)") }
            }
        }
        try options.run(daemon, logger: logger, startupFailure: failure)
    }
}
