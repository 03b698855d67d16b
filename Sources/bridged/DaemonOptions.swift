import ArgumentParser
import Foundation
import BridgeBrowser
import BridgeProtocol
import BridgeServer
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every command-line option of the daemon (contract section 1, plus transport tuning), parsed
/// and validated. Reusable by any command through `@OptionGroup`.
struct DaemonOptions: ParsableArguments {
    @Option(help: "Address to listen on. Non-loopback addresses require a token.")
    var host: String = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one; the first stdout line shows it).")
    var port: Int = 8787

    @Option(help: "Token controllers must present (also BRIDGED_TOKEN). Required on non-loopback hosts.")
    var token: String?

    @Option(name: .customLong("static"), help: ArgumentHelp("Directory served under /app/.", valueName: "dir"))
    var staticDirectory: String?

    @Option(name: .customLong("foreground-timeout-ms"), help: "Fallback timer of a foreground, in milliseconds.")
    var foregroundTimeoutMs: Int = 1000

    @Option(name: .customLong("max-message-bytes"), help: "Largest WebSocket message accepted (bigger: close 1009).")
    var maxMessageBytes: Int = 65536

    @Option(name: .customLong("session-idle-s"), help: "A session without any connection for this many seconds is discarded.")
    var sessionIdleS: Int = 300

    @Option(name: .customLong("max-sessions"), help: "Most sessions at once.")
    var maxSessions: Int = 10000

    @Option(name: .customLong("max-stack-depth"), help: "Most items on one session's stack.")
    var maxStackDepth: Int = 256

    @Option(name: .customLong("max-url-bytes"), help: "Longest url or title (UTF-8 bytes) a request or event may carry; longer ones get invalid-params.")
    var maxURLBytes: Int = 8192

    @Option(name: .customLong("max-session-bytes"), help: "Most bytes of urls and titles one session may hold (64 more per item); more gets limit-exceeded.")
    var maxSessionBytes: Int = 1 << 20

    @Option(name: .customLong("allow-controller-origin"), help: ArgumentHelp(
        "A browser origin (scheme://host[:port]) whose pages may be controllers without --token; repeatable. Without it, a controller hello from a browser page (one that sent an Origin header) needs the token.",
        valueName: "origin"))
    var allowControllerOrigin: [String] = []

    @Option(name: .customLong("allow-origin"), help: ArgumentHelp(
        "An extra origin (scheme://host[:port]) allowed to open WebSockets; repeatable; '*' allows every origin. Loopback origins are always allowed.",
        valueName: "origin"))
    var allowOrigin: [String] = []

    @Option(name: .customLong("log-level"), help: "Log level; debug and trace also log every transition of every stack.")
    var logLevel: Logger.Level = .info

    @Option(name: .customLong("log-format"), help: "text (for people) or json (one JSON object per line). Client-supplied values are escaped either way.")
    var logFormat: LogFormat = .text

    @Flag(inversion: .prefixedNo, help: "Serve Prometheus metrics at GET /metrics.")
    var metrics: Bool = true

    @Option(help: ArgumentHelp("Route configuration file (YAML).", valueName: "path"))
    var config: String?

    @Option(name: .customLong("allow-host"), help: ArgumentHelp(
        "An extra name accepted in the Host header (name or name:port); repeatable; '*' accepts any. localhost, IP addresses, --host and the hosts of --allow-origin are always accepted; other Hosts get 421 (DNS rebinding).",
        valueName: "host"))
    var allowHost: [String] = []

    @Option(name: .customLong("max-connections"), help: "Most connections open at once (0: the open-file limit, raised to its hard maximum at start, minus 32). Beyond it new connections are closed at once.")
    var maxConnections: Int = 0

    @Option(name: .customLong("slow-reader-ms"), help: "How long a client's unsent bytes (behind the message being written) may stay over --max-send-queue-bytes before it is closed with 1008.")
    var slowReaderMs: Int = 10000

    @Option(name: .customLong("max-send-queue-bytes"), help: "Unsent bytes one connection may queue before it is closed with 1008.")
    var maxSendQueueBytes: Int = 8 << 20

    @Option(name: .customLong("ping-interval-s"), help: "Seconds of silence from a client before it is pinged.")
    var pingIntervalS: Int = 30

    @Option(name: .customLong("ping-timeout-s"), help: "Seconds of silence (no pong either) before a client is dropped.")
    var pingTimeoutS: Int = 60

    @Option(name: .customLong("shutdown-timeout-ms"), help: "How long SIGINT/SIGTERM waits for clients to get their 1001 close.")
    var shutdownTimeoutMs: Int = 2000

    @Option(name: .customLong("event-loop"), help: ArgumentHelp("What the service thread waits in: epoll (libuv; a round costs what is ready) or poll (lws's own poll() over every connection; slower with thousands of connections).", valueName: "epoll|poll"))
    var eventLoop: TransportConfiguration.EventLoop = .epoll

    @Option(help: ArgumentHelp("Name of this daemon in a farm behind a proxy: session ids become s-NAME-RANDOM ([a-z0-9], 1 to 16 characters).", valueName: "name"))
    var instance: String?

    @Option(name: .customLong("drain-ms"), help: "On SIGTERM, how long /healthz and /readyz answer 503 (a proxy stops sending new sessions) before every connection is closed; 0 closes at once. SIGINT never drains.")
    var drainMs: Int = 1000

    @Option(help: ArgumentHelp("Chromium for browser sessions: a name on PATH or a path (Debian package 'chromium').", valueName: "path"))
    var chromium: String = "chromium"

    @Option(name: .customLong("user-agent-suffix"), help: "Appended to Chromium's user agent in browser sessions' tabs.")
    var userAgentSuffix: String = "Astro App/1.0"

    @Option(help: ArgumentHelp("The phone screen browser sessions' tabs emulate, in CSS pixels (mobile).", valueName: "WxH"))
    var viewport: String = "390x844"

    @Flag(help: "Chromium starts with the daemon and also listens for DevTools on a loopback port of its own (Playwright's connect_over_cdp, Puppeteer's connect): GET /api/devtools names it, and so does the line `devtools ws://…` on stdout. Any local process can then drive every tab: see docs/SECURITY.md.")
    var devtools: Bool = false

    @Flag(name: .customLong("spare-tabs"), inversion: .prefixedNo, help: "Each browser session keeps one spare tab, dressed before it is needed, for its next classic web view (about 18 MiB of Chromium's memory per session). Default: on, off with --devtools (a DevTools client would see the spare as a page of the session): docs/BROWSER.md.")
    var spareTabs: Bool?

    @Option(name: .customLong("max-snapshot-bytes"), help: "Most bytes of placeholder snapshots (JPEG) kept per browser session; the oldest go first.")
    var maxSnapshotBytes: Int = 8 << 20

    @Option(name: .customLong("max-tabs-per-session"), help: "Most live tabs a browser session may have (a tab costs about 140 MiB of Chromium's memory); a navigation past it is refused with a session.limit event (1...256; default: an eighth of this machine's memory in tabs, between 4 and 64).")
    var maxTabsPerSession: Int?

    /// `--token`, else a non-empty `BRIDGED_TOKEN`.
    var resolvedToken: String? {
        if let token { return token }
        if let env = getenv("BRIDGED_TOKEN"), env.pointee != 0 { return String(cString: env) }
        return nil
    }

    /// One validation path: the flags build the daemon's configuration and the configuration
    /// checks itself; its error names the setting, mapped back onto the flag here.
    func validate() throws {
        func check(_ ok: Bool, _ message: @autoclosure () -> String) throws {
            if !ok { throw ValidationError(message()) }
        }
        try check((64...(64 << 20)).contains(maxURLBytes),
                  "--max-url-bytes must be between 64 and \(64 << 20) (got \(maxURLBytes))")
        try check(maxSessionBytes >= 2 * maxURLBytes + 256 && maxSessionBytes <= 1 << 40,
                  "--max-session-bytes must be at least twice --max-url-bytes plus 256 (\(2 * maxURLBytes + 256)) and at most \(1 << 40) (got \(maxSessionBytes))")
        for origin in allowControllerOrigin {
            try check(OriginPolicy.isValidEntry(origin) && origin != "*",
                      "--allow-controller-origin '\(origin)' is not an origin of the form scheme://host[:port]")
        }
        try check(!chromium.isEmpty, "--chromium must not be empty")
        try check(BrowserOptions.parseViewport(viewport) != nil,
                  "--viewport must be WIDTHxHEIGHT, each between 100 and 4000 (got '\(viewport)')")
        try check(maxSnapshotBytes >= 0, "--max-snapshot-bytes must be at least 0 (got \(maxSnapshotBytes))")
        if let maxTabsPerSession {
            try check((1...256).contains(maxTabsPerSession), "--max-tabs-per-session must be between 1 and 256 (got \(maxTabsPerSession))")
        }
        if let instance {
            try check(BridgeConfiguration.isValidInstance(instance),
                      "--instance '\(instance)' must be 1 to 16 characters from a-z and 0-9 (session ids become s-NAME-RANDOM)")
        }
        try check((0...600_000).contains(drainMs), "--drain-ms must be between 0 and 600000 (got \(drainMs))")
        if let config {
            var st = stat()
            guard stat(config, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && access(config, R_OK) == 0 else {
                throw ValidationError("--config '\(config)' is not a readable file")
            }
        }
        do {
            try daemonConfiguration.validate()
        } catch {
            throw ValidationError("\(DaemonOptions.flag(for: error.setting)) \(error.problem)")
        }
    }

    /// The flag that sets `setting`.
    static func flag(for setting: ConfigurationError.Setting) -> String {
        switch setting {
        case .host: "--host"
        case .port: "--port"
        case .token: "--token"
        case .maxMessageBytes: "--max-message-bytes"
        case .maxSendQueueBytes: "--max-send-queue-bytes"
        case .allowedOrigins: "--allow-origin"
        case .allowedHosts: "--allow-host"
        case .maxConnections: "--max-connections"
        case .slowReaderTimeout: "--slow-reader-ms"
        case .staticDirectory: "--static"
        case .pingInterval: "--ping-interval-s"
        case .pingTimeout: "--ping-timeout-s"
        case .shutdownTimeout: "--shutdown-timeout-ms"
        case .foregroundTimeout: "--foreground-timeout-ms"
        case .sessionIdle: "--session-idle-s"
        case .maxSessions: "--max-sessions"
        case .maxStackDepth: "--max-stack-depth"
        }
    }

    var transportConfiguration: TransportConfiguration {
        var c = TransportConfiguration()
        c.host = host
        c.port = port
        c.token = resolvedToken
        c.maxMessageBytes = maxMessageBytes
        c.maxSendQueueBytes = maxSendQueueBytes
        c.allowedOrigins = allowOrigin
        c.allowedHosts = allowHost
        c.maxConnections = maxConnections
        c.slowReaderTimeout = .milliseconds(Int64(clamping: slowReaderMs).clampedForDuration)
        c.staticDirectory = staticDirectory
        c.pingInterval = .seconds(Int64(clamping: pingIntervalS).clampedForDuration)
        c.pingTimeout = .seconds(Int64(clamping: pingTimeoutS).clampedForDuration)
        c.shutdownTimeout = .milliseconds(Int64(clamping: shutdownTimeoutMs).clampedForDuration)
        c.eventLoop = eventLoop
        return c
    }
}

/// `--log-format` values: text, json.
extension LogFormat: ExpressibleByArgument {}

/// `--event-loop` values: epoll, poll.
extension TransportConfiguration.EventLoop: ExpressibleByArgument {}

/// `--log-level` values: trace, debug, info, notice, warning, error, critical (any case).
extension Logger.Level: @retroactive ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.lowercased())
    }
}

extension DaemonOptions {
    /// The whole daemon's configuration from the flags.
    var daemonConfiguration: DaemonConfiguration {
        var bridge = BridgeConfiguration()
        bridge.engine = EngineConfiguration(foregroundTimeoutMs: foregroundTimeoutMs, maxStackDepth: maxStackDepth)
        bridge.maxSessions = maxSessions
        bridge.sessionIdleSeconds = sessionIdleS
        bridge.controllerToken = resolvedToken
        bridge.maxURLBytes = maxURLBytes
        bridge.maxSessionBytes = maxSessionBytes
        bridge.controllerOrigins = allowControllerOrigin
        bridge.trace = logLevel <= .debug
        bridge.instance = instance
        bridge.countStats = metrics
        var daemon = DaemonConfiguration(transport: transportConfiguration, bridge: bridge)
        daemon.metricsEnabled = metrics
        daemon.browser.options.chromium = chromium
        daemon.browser.options.userAgentSuffix = userAgentSuffix
        if let size = BrowserOptions.parseViewport(viewport) {
            daemon.browser.options.viewportWidth = size.width
            daemon.browser.options.viewportHeight = size.height
        }
        daemon.bridge.snapshotBytesPerSession = maxSnapshotBytes
        daemon.bridge.maxTabsPerSession = maxTabsPerSession ?? BridgeConfiguration.defaultMaxTabs(physicalMemory: ProcessInfo.processInfo.physicalMemory)
        daemon.browser.options.devtools = devtools
        daemon.browser.options.spareTabsSetting = spareTabs
        daemon.browser.injectTemplate = String(decoding: EmbeddedAssets.bytes(named: "inject.js") ?? [], as: UTF8.self)
        for asset in ProfileRegistry.standard.scriptAssets {
            daemon.browser.profileScripts[asset] = String(decoding: EmbeddedAssets.bytes(named: asset) ?? [], as: UTF8.self)
        }
        daemon.browser.bridgeJS = String(decoding: EmbeddedAssets.bytes(named: "bridge.js") ?? [], as: UTF8.self)
        return daemon
    }
}

extension Int64 {
    /// Out-of-range flag values stay out of range (and are refused by validation) without
    /// overflowing `Duration`.
    var clampedForDuration: Int64 { Swift.min(Swift.max(self, -1), 1 << 40) }
}
