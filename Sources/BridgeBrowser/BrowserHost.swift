import BridgeProtocol
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The native shell around Chromium: one browser process shared by every browser session, a
/// browser context per session (cookies and storage never cross), a tab per web view.
///
/// An actor that performs: what its tabs are and what an event of Chromium calls for is the
/// `TabMachine`'s to decide (a pure state machine, TabMachine.swift); the host makes the
/// DevTools calls it returns and feeds the answers back (BrowserHost+Events.swift). Its state is
/// touched by one task at a time, never by the WebSocket service thread. Events from Chromium
/// are handled in arrival order by one job; `events` receives what the owner must act on. Work
/// in the background (spare tabs, close retries, retired Chromiums) runs in `tasks`, one
/// long-lived task (TaskRunner.swift).
///
/// Files: the process (here), sessions and tabs (+Tabs), spare tabs and the context ahead
/// (+Spares), acting on a page (+Page), events (+Events), the shell's duties (+Shell), history
/// (+History), fetches (+Fetch), a web directory (+WebDir).
public actor BrowserHost {
    typealias Tab = TabMachine.Tab

    /// A tab made before it is needed, one per session (`BrowserOptions.spareTabs`): created
    /// in the session's browser context, attached and dressed (user agent, viewport, touch,
    /// service workers bypassed, request interception, lifecycle events) on `about:blank`. The
    /// session's next web view takes it: its injected client is added as its url loads (the
    /// load's document request waits for it). It is no web view's tab until then (no
    /// `targetId` names it).
    struct Spare {
        var targetId: TargetID
        var cdpSession: CDPSessionID
        /// The user agent it was dressed with (a tab that needs another sets its own).
        var userAgent: String
    }

    struct Browser: Sendable {
        var process: any BrowserProcess
        var cdp: CDPConnection
        var generation: Int
        var userAgent: String
        /// Chromium's own user agent (`HeadlessChrome` → `Chrome`), without the suffix.
        var baseUserAgent: String
        /// `ws://127.0.0.1:PORT/devtools/browser/ID` with `options.devtools`.
        var devtoolsURL: String?
    }

    /// A start of Chromium under way: those who need the browser meanwhile wait for it.
    final class Start: @unchecked Sendable {
        let done = Completion()
        var result: Result<Browser, any Error>?
    }

    /// A browser context made ahead, with its spare tab, for the next browser session.
    struct FreeContext {
        var id: BrowserContextID
        var spare: Spare
    }

    public let options: BrowserOptions
    let emit: @Sendable (BrowserEvent) -> Void
    /// The owner's debug log (what went wrong where nothing else needs to know).
    let debug: @Sendable (String) -> Void
    private let launcher: BrowserLauncher
    /// Where the host's background work runs (and the owner's, `BrowserSide`'s lanes): one
    /// long-lived task.
    public nonisolated let tasks = TaskRunner()
    /// The tabs, and what Chromium's events about them call for.
    var machine: TabMachine
    var browser: Browser?
    private var generation = 0
    private var starting: Start?
    /// The injected client of a spare taken for a web view, being added as its load starts
    /// (`Tab.clientPending`): the load's document request waits for it.
    var clients: [TabKey: CDPPendingReply] = [:]
    var freeContext: FreeContext?
    var makingFreeContext: Completion?
    /// The context ahead is wanted and waits for the browser to be quiet
    /// (`options.contextAheadQuietSeconds` without a web view's tab opening or reporting).
    var freeContextWaiting: Completion?
    /// Counts the waits for quiet started and called off: a wait called off ends by itself.
    var freeContextWaits = 0
    /// session → its spare tab, ready.
    var spares: [String: Spare] = [:]
    /// session → the spare tab being made.
    var makingSpares: [String: Completion] = [:]
    /// session → the user agent of its last tab (its spare is dressed with it).
    var sessionUserAgents: [String: String] = [:]
    /// Each session's position for `navigator.geolocation`, applied to every new tab.
    var geolocations: [String: Geolocation] = [:]
    /// How often and how many times a close Chromium did not carry out is sent again.
    static let closeRetryNanoseconds: UInt64 = 250_000_000
    static let closeRetries = 20
    var shuttingDown = false
    /// Chromiums that crashed or closed, being stopped and their profiles removed; `shutdown`
    /// waits for them.
    private var retiring: [Int: Completion] = [:]
    /// The running Chromium's DevTools url (`options.devtools`), readable from any thread.
    private nonisolated let devtoolsURLBox = SharedValue<String?>(nil)

    /// `launcher` starts the browser (Chromium on its pipe; tests pass a fake that plays
    /// Chromium's side by script). `events` receives what the owner must act on; `debug`, lines
    /// for the owner's debug log.
    public init(options: BrowserOptions = BrowserOptions(), launcher: @escaping BrowserLauncher = BrowserHost.chromium,
                debug: @escaping @Sendable (String) -> Void = { _ in },
                events: @escaping @Sendable (BrowserEvent) -> Void) {
        self.options = options
        self.launcher = launcher
        self.emit = events
        self.debug = debug
        self.machine = TabMachine(settings: TabMachine.Settings(
            decidesNavigationsEarly: options.decidesNavigationsEarly, decidedNavigationSeconds: options.decidedNavigationSeconds,
            spareTabs: options.spareTabs))
        signal(SIGPIPE, SIG_IGN)
    }

    // MARK: the process

    /// The running browser, started on first use.
    func ensureBrowser() async throws -> Browser {
        if let browser { return browser }
        if shuttingDown { throw BrowserError.disconnected }
        if let starting {
            await starting.done.wait()
            return try starting.result!.get()
        }
        let start = Start()
        starting = start
        generation += 1
        let result: Result<Browser, any Error>
        do { result = .success(try await launch(generation: generation)) } catch { result = .failure(error) }
        starting = nil
        if case .success(let started) = result {
            browser = started
            devtoolsURLBox.value = started.devtoolsURL
        }
        start.result = result
        start.done.complete()
        return try result.get()
    }

    /// Starts Chromium: its events are handled by one job of `tasks`, in order, until its side
    /// closes (then `browserClosed`).
    private func launch(generation gen: Int) async throws -> Browser {
        let launched = try launcher(options)
        let process = launched.process
        let cdp = CDPConnection(transport: launched.transport) {}
        tasks.run { [weak self] in
            for await event in cdp.events { await self?.handle(event, generation: gen) }
            await self?.browserClosed(generation: gen)
        }
        do {
            let version = try await cdp.call(.getVersion, timeout: options.startTimeoutSeconds)
            _ = try await cdp.call(.discoverTargets)
            var ua = BrowserOptions.userAgent(chromium: version["userAgent"]?.stringValue ?? "Mozilla/5.0", phone: options.isPhone)
            let base = ua
            if !options.userAgentSuffix.isEmpty { ua += " " + options.userAgentSuffix }
            var devtoolsURL: String?
            if options.devtools {
                devtoolsURL = try await process.devToolsURL(timeout: options.startTimeoutSeconds)
            }
            return Browser(process: process, cdp: cdp, generation: gen, userAgent: ua, baseUserAgent: base, devtoolsURL: devtoolsURL)
        } catch {
            process.terminate(graceSeconds: 0)
            throw error
        }
    }

    /// Starts Chromium now rather than with the first browser session (`--devtools`: the
    /// DevTools url exists from the daemon's start). Returns that url (nil without
    /// `options.devtools`).
    public func start() async throws -> String? {
        try await ensureBrowser().devtoolsURL
    }

    /// `ws://127.0.0.1:PORT/devtools/browser/ID` of the running Chromium when it listens for
    /// DevTools on a port (`options.devtools`); nil when it does not or no Chromium runs.
    /// Readable from any thread.
    public nonisolated var devtoolsURL: String? { devtoolsURLBox.value }

    /// Chromium's pid, when it runs.
    public var chromiumPID: Int32? { browser?.process.pid }
    public var tabCount: Int { machine.tabs.count }
    /// Tabs asked to close whose end Chromium has not reported yet.
    public var closingTabCount: Int { machine.closing.count }
    public var sessionCount: Int { machine.contexts.count }

    private func browserClosed(generation gen: Int) {
        guard let b = browser, b.generation == gen else { return }
        let sessions = Array(machine.contexts.keys).sorted()
        forgetBrowser()
        retire(b.process, generation: gen, graceSeconds: 1)
        if !shuttingDown {
            emit(.browserCrashed(sessions: sessions))
            // With a DevTools port, a Chromium is always there for a framework to attach to
            // (a new one, on a new port: `devtoolsURL` names it).
            if options.devtools { tasks.run { await self.restartAfterCrash() } }
        }
    }

    /// The browser is gone: so are its contexts, tabs and spares.
    private func forgetBrowser() {
        browser = nil
        devtoolsURLBox.value = nil
        machine.reset()
        clients.removeAll()
        spares.removeAll()
        freeContext = nil
        sessionUserAgents.removeAll()
    }

    /// `options.devtools`: a new Chromium after one went away, so that a DevTools client has one
    /// to attach to. When it cannot start, the owner hears `.restartFailed` (the daemon logs it);
    /// the next browser session tries again.
    private func restartAfterCrash() async {
        do {
            _ = try await ensureBrowser()
        } catch {
            if !shuttingDown { emit(.restartFailed(reason: "\(error)")) }
        }
    }

    /// Stops `process` on a thread of its own (it blocks) and removes its profile directory.
    private func retire(_ process: any BrowserProcess, generation gen: Int, graceSeconds: Double) {
        let done = Completion()
        retiring[gen] = done
        tasks.run { [weak self] in
            await withCheckedContinuation { (stopped: CheckedContinuation<Void, Never>) in
                Thread.detachNewThread {
                    process.terminate(graceSeconds: graceSeconds)
                    stopped.resume()
                }
            }
            await self?.retired(gen)
            done.complete()
        }
    }

    private func retired(_ gen: Int) { retiring[gen] = nil }

    /// The profile directory of the running Chromium, when one runs.
    public var profileDirectory: String? { browser?.process.profileDirectory }

    /// Closes every tab and context and stops Chromium; waits until it is gone and its profile
    /// directory removed, and so are those of Chromiums that crashed before. The host can be used
    /// again afterwards (a new Chromium starts).
    public func shutdown() async {
        shuttingDown = true
        defer { shuttingDown = false }
        cancelFreeContextWait()
        if let starting { await starting.done.wait() }
        if let b = browser {
            // Closing the browser closes every context and tab at once.
            _ = try? await b.cdp.call(.close, timeout: 2)
            if let current = browser, current.generation == b.generation {
                forgetBrowser()
                retire(b.process, generation: b.generation, graceSeconds: 2)
            }
        }
        for done in Array(retiring.values) { await done.wait() }
    }

    /// Stops Chromium at once from any context (the daemon's exit path): kills its process group
    /// and removes the profile. Blocking; meant for the last moments of the process.
    nonisolated public func killNow(_ pid: Int32?) {
        guard let pid else { return }
        kill(-pid, SIGKILL)
    }
}
