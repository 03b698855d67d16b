/// A browser the host started: its process and its DevTools transport.
public protocol BrowserProcess: AnyObject, Sendable {
    var pid: Int32 { get }
    /// The browser's profile directory (removed by `terminate`).
    var profileDirectory: String { get }
    /// `ws://127.0.0.1:PORT/devtools/browser/ID` once the browser listens on its DevTools port
    /// (started with `BrowserOptions.devtools`); throws after `timeout` seconds.
    func devToolsURL(timeout: Double) async throws -> String
    /// Waits up to `graceSeconds` for the process to exit on its own, then kills it and removes
    /// its profile directory. Blocking; idempotent.
    func terminate(graceSeconds: Double)
}

/// What a `BrowserLauncher` started.
public struct LaunchedBrowser: Sendable {
    public var process: any BrowserProcess
    public var transport: any CDPTransport

    public init(process: any BrowserProcess, transport: any CDPTransport) {
        self.process = process
        self.transport = transport
    }
}

/// Starts a browser for the host (blocking; run off the service thread). `BrowserHost.chromium`
/// starts Debian's Chromium on the DevTools pipe; tests pass a fake (docs/ARCHITECTURE.md).
/// Throws a `BrowserError` (`.notInstalled`, `.launchFailed`) when it cannot.
public typealias BrowserLauncher = @Sendable (_ options: BrowserOptions) throws -> LaunchedBrowser

extension BrowserHost {
    /// Chromium (`options.chromium`) on the DevTools pipe, with a DevTools port of its own when
    /// `options.devtools`.
    public static let chromium: BrowserLauncher = { options in
        let extra = options.extraArguments + (options.devtools ? DevToolsPort.arguments : [])
        let process = try ChromiumProcess.launch(executable: options.chromium, extraArguments: extra)
        return LaunchedBrowser(process: process, transport: CDPPipe(writeFD: process.commandFD, readFD: process.eventFD))
    }
}

extension ChromiumProcess: BrowserProcess {
    func devToolsURL(timeout: Double) async throws -> String {
        try await DevToolsPort.discover(profile: profileDirectory, timeout: timeout)
    }
}
