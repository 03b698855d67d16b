import ArgumentParser
import BridgeProtocol
import BridgeServer
import Logging

/// `bridged open URL`: serves as `serve` does and starts a browser session on URL (a real
/// Chromium tab per web view; see docs/BROWSER.md).
struct OpenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Serve, and open URL in a browser session: Chromium, driven by the daemon, plays the app's web views.",
        discussion: """
            Takes every option of `serve`. The first line on stdout is `listening on URL`; the next \
            ones name the dashboard, where the session's stack shows. Needs Chromium (Debian \
            package 'chromium', or --chromium PATH). With --devtools, a line `devtools ws://…` \
            follows the dashboard's (docs/PLAYWRIGHT.md). When the session cannot be opened (URL \
            longer than --max-url-bytes, --max-sessions reached, its tab cannot open: no Chromium), it \
            says why and exits with status 1.
            """)

    @Argument(help: "The page to open, e.g. http://127.0.0.1:8787/app/astro.html.")
    var url: String

    @OptionGroup var profile: ProfileOptions

    @OptionGroup var options: DaemonOptions

    func validate() throws {
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
            throw ValidationError("URL must be an http:// or https:// address (got '\(url)')")
        }
        _ = try profile.sessionProfile()
    }

    func run() throws {
        let webDirectory = profile.shell.webDirectory
        let (daemon, config, logger) = try options.makeDaemon { $0.browser.webDirectory = webDirectory }
        let url = self.url
        let sessionProfile = try profile.sessionProfile()
        let failure = StartupFailure()
        daemon.onOpenFailure = { [unowned daemon] _, reason in
            // The session's root tab could not open: nothing is open, so nothing is served for it.
            failure.message = "cannot open \(url): \(reason)"
            daemon.remote.stop()
        }
        daemon.onStart = { [unowned daemon, options] port in
            options.whenReady(daemon, failure: failure) { devtools in
                let origin = config.transport.displayURL(port: port)
                Stdout.writeLine("listening on \(origin)")
                Stdout.writeLine("dashboard \(origin)/")
                if let devtools { Stdout.writeLine("devtools \(devtools)") }
                let what = sessionProfile.isPlain ? "a browser session" : "a \(sessionProfile.name) browser session"
                Stdout.writeLine("opening \(url) in \(what)")
                do throws(ProtocolError) {
                    try daemon.openBrowserSession(url: url, profile: sessionProfile)
                } catch {
                    // Logged by the daemon; `run` says it on stderr and exits with status 1.
                    failure.message = "cannot open \(url): \(error.message)"
                    daemon.remote.stop()
                }
            }
        }
        try options.run(daemon, logger: logger, startupFailure: failure)
    }
}
