import BridgeProtocol
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The native shell around Chromium: one browser process shared by every browser session, a
/// browser context per session (cookies and storage never cross), a tab per web view.
///
/// An actor: its state is touched by one task at a time, never by the WebSocket service thread.
/// Events from Chromium are handled in arrival order by one task; `events` receives what the
/// owner must act on.
public actor BrowserHost {
    struct Tab {
        var session: String
        var webview: ItemID
        var targetId: String
        var cdpSession: String
        /// The tab's own load (the first navigation, or a reload the host asked for) is let
        /// through the request interception; a POST override is applied to it.
        var ownLoadPending = true
        var ownLoadPost: NavigationRequest?
        /// A spare's injected client being added while its own load starts: that load's
        /// document request is let through once it is in place (failed when it could not be).
        var clientReady: CDPPendingReply?
        /// The last navigation type the main frame started (`historyDifferentDocument`, …).
        var lastNavigationType: String?
        /// The page asked for the navigation that starts next (`Page.frameRequestedNavigation`:
        /// a link, a form, a `location` change, a meta refresh). Chromium reports none for a
        /// navigation another DevTools client started (Playwright's `page.goto`).
        var pageRequestedNavigation = false
        /// Navigations of the page already handed to the owner when the page asked for them
        /// (`Page.frameRequestedNavigation`, see `decidedEarly`), oldest first: the document
        /// request each one reaches the interception with is aborted and reported no more, within
        /// `BrowserOptions.decidedNavigationSeconds` (`DispatchTime` nanoseconds: when handed over).
        var decidedNavigations: [(url: String, at: UInt64)] = []
        /// The main frame's current navigation was started by another DevTools client, not by
        /// the page: the host loading a url into the web view, let through.
        var foreignLoad = false
        /// Once its page has loaded, the session gets a spare tab (when it has none): made
        /// after the load, its renderer does not compete with the page the user waits for.
        var spareAfterLoad = false
        /// The main frame committed Chromium's error page for this url (a load that failed: a
        /// refused port, a DNS failure): reported once that page has loaded, with its net error.
        var failedLoad: String?
        /// The root's first load is watched with the Network domain (enabled for it only, then
        /// disabled once its page has loaded): its document request (the main frame's) and,
        /// when that failed, Chromium's `errorText` (`net::ERR_CONNECTION_REFUSED`).
        var watchingNetwork = false
        var documentRequest: String?
        var netError: String?
        /// Its place among the session's tabs (they are opened in stack order: the highest is
        /// the right-most in the session's window).
        var order = 0
    }

    /// A tab made before it is needed, one per session (`BrowserOptions.spareTabs`): created
    /// in the session's browser context, attached and dressed (user agent, viewport, touch,
    /// service workers bypassed, request interception, lifecycle events) on `about:blank`. The
    /// session's next web view takes it: its injected client is added as its url loads (the
    /// load's document request waits for it). It is no web view's tab until then (no
    /// `targetId` names it).
    struct Spare {
        var targetId: String
        var cdpSession: String
        /// The user agent it was dressed with (a tab that needs another sets its own).
        var userAgent: String
    }

    struct Browser {
        var process: any BrowserProcess
        var cdp: CDPConnection
        var generation: Int
        var userAgent: String
        /// Chromium's own user agent (`HeadlessChrome` → `Chrome`), without the suffix.
        var baseUserAgent: String
        /// `ws://127.0.0.1:PORT/devtools/browser/ID` with `options.devtools`.
        var devtoolsURL: String?
    }

    public let options: BrowserOptions
    let emit: @Sendable (BrowserEvent) -> Void
    /// The owner's debug log (what went wrong where nothing else needs to know).
    let debug: @Sendable (String) -> Void
    private let launcher: BrowserLauncher
    var browser: Browser?
    private var generation = 0
    private var starting: Task<Browser, any Error>?
    /// session id → browser context id
    var contexts: [String: String] = [:]
    var tabs: [TabKey: Tab] = [:]
    /// CDP session id → tab key
    private var tabsByCDPSession: [String: TabKey] = [:]
    /// target id → tab key
    var tabsByTarget: [String: TabKey] = [:]
    /// A browser context made ahead, with its spare tab, for the next browser session.
    struct FreeContext {
        var id: String
        var spare: Spare
    }
    private var freeContext: FreeContext?
    private var makingFreeContext: Task<Void, Never>?
    /// The context ahead is wanted and waits for the browser to be quiet
    /// (`options.contextAheadQuietSeconds` without a web view's tab opening or reporting).
    private var freeContextWaiting: Task<Void, Never>?
    /// When a web view's tab last opened or reported an event (`DispatchTime` nanoseconds).
    private var lastTabActivity: UInt64 = 0
    /// Counts the tabs opened (`Tab.order`).
    private var tabsOpened = 0
    /// session → its spare tab, ready.
    private var spares: [String: Spare] = [:]
    /// session → the spare tab being made.
    private var makingSpares: [String: Task<Void, Never>] = [:]
    /// session → the user agent of its last tab (its spare is dressed with it).
    private var sessionUserAgents: [String: String] = [:]
    /// The app files each session's tabs are served (BrowserHost+WebDir.swift).
    var webDirectories: [String: WebDirectory] = [:]
    /// Popups (`window.open`) waiting for their url: target id → the opener's tab key.
    private var popups: [String: TabKey] = [:]
    /// Tabs asked to close and not destroyed yet: CDP session id → target id. Chromium drops a
    /// close that lands while the tab is between two documents (say, during its page's own
    /// `history.back()` to the `about:blank` below it); such a tab is closed again once its
    /// document commits.
    private var closing: [String: String] = [:]
    /// Web views whose tab is being opened (`openTab` not returned yet), with how many opens.
    private var opening: [TabKey: Int] = [:]
    /// Web views closed (`closeTab`) while their tab was being opened: the open closes the tab
    /// it made and fails with `BrowserError.closedWhileOpening`. Without it the close of a tab
    /// not made yet (its spare still being made, `Target.createTarget` not answered) did
    /// nothing, and the tab, opened in front, stayed: the web view below drew no frames (no
    /// `requestAnimationFrame`, so Turbo rendered nothing there).
    private var closedWhileOpening: Set<TabKey> = []
    /// Sessions whose context is being made (`createSession`), and those of them closed
    /// meanwhile: the context is disposed of once made, and the creation fails.
    private var creatingSessions: Set<String> = []
    /// Each session's tab last brought to the front by the host (opened, brought forward,
    /// pictured), when known: closing a tab that is not in front brings nothing forward.
    private var fronts: [String: TabKey] = [:]
    private var closedWhileCreating: Set<String> = []
    /// Each web view's open file chooser: the `<input type=file>`'s backend node
    /// (BrowserHost+Shell.swift).
    var fileChoosers: [TabKey: Int64] = [:]
    /// Each session's position for `navigator.geolocation`, applied to every new tab.
    var geolocations: [String: Geolocation] = [:]
    /// How often and how many times a close Chromium did not carry out is sent again.
    static let closeRetryNanoseconds: UInt64 = 250_000_000
    static let closeRetries = 20
    private var shuttingDown = false
    /// Chromiums that crashed or closed, being stopped and their profiles removed; `shutdown`
    /// waits for them.
    private var retiring: [Int: Task<Void, Never>] = [:]
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
        signal(SIGPIPE, SIG_IGN)
    }

    // MARK: the process

    /// The running browser, started on first use.
    private func ensureBrowser() async throws -> Browser {
        if let browser { return browser }
        if shuttingDown { throw BrowserError.disconnected }
        if let starting { return try await starting.value }
        generation += 1
        let gen = generation
        let options = self.options
        let launcher = self.launcher
        let task = Task<Browser, any Error> {
            let launched = try launcher(options)
            let process = launched.process
            let cdp = CDPConnection(transport: launched.transport) { [weak self] in
                Task { await self?.browserClosed(generation: gen) }
            }
            Task { [weak self] in
                for await event in cdp.events { await self?.handle(event, generation: gen) }
            }
            do {
                let version = try await cdp.call("Browser.getVersion", timeout: options.startTimeoutSeconds)
                _ = try await cdp.call("Target.setDiscoverTargets", ["discover": true])
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
        starting = task
        defer { starting = nil }
        let started = try await task.value
        browser = started
        devtoolsURLBox.value = started.devtoolsURL
        return started
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
    public var tabCount: Int { tabs.count }
    /// Spare tabs ready (at most one per session).
    public var spareTabCount: Int { spares.count }
    /// Chromium's target id of the spare tab of `session` (once the one being made, if any, is
    /// ready or failed); nil when it has none.
    public func spareTargetId(session: String) async -> String? {
        if let making = makingSpares[session] { await making.value }
        return spares[session]?.targetId
    }
    /// The browser context made ahead for the next session and its tab's target id (once the
    /// one being made, if any, is ready or failed); nil when there is none.
    public func contextAhead() async -> (context: String, target: String)? {
        if let waiting = freeContextWaiting { await waiting.value }
        if let making = makingFreeContext { await making.value }
        return freeContext.map { ($0.id, $0.spare.targetId) }
    }
    /// Whether the context ahead is wanted and waits for the browser to be quiet.
    public var contextAheadWaits: Bool { freeContextWaiting != nil }
    /// Tabs asked to close whose end Chromium has not reported yet.
    public var closingTabCount: Int { closing.count }
    public var sessionCount: Int { contexts.count }

    private func browserClosed(generation gen: Int) {
        guard let b = browser, b.generation == gen else { return }
        browser = nil
        devtoolsURLBox.value = nil
        let sessions = Array(contexts.keys).sorted()
        contexts.removeAll()
        tabs.removeAll()
        spares.removeAll()
        freeContext = nil
        sessionUserAgents.removeAll()
        tabsByCDPSession.removeAll()
        tabsByTarget.removeAll()
        popups.removeAll()
        closing.removeAll()
        fronts.removeAll()
        retire(b.process, generation: gen, graceSeconds: 1)
        if !shuttingDown {
            emit(.browserCrashed(sessions: sessions))
            // With a DevTools port, a Chromium is always there for a framework to attach to
            // (a new one, on a new port: `devtoolsURL` names it).
            if options.devtools { Task { await self.restartAfterCrash() } }
        }
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
        let task = Task<Void, Never> {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                Thread.detachNewThread {
                    process.terminate(graceSeconds: graceSeconds)
                    done.resume()
                }
            }
        }
        retiring[gen] = task
        Task { [weak self] in
            await task.value
            await self?.retired(gen)
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
        freeContextWaiting?.cancel()
        freeContextWaiting = nil
        if let starting { _ = try? await starting.value }
        if let b = browser {
            // Closing the browser closes every context and tab at once.
            _ = try? await b.cdp.call("Browser.close", timeout: 2)
            if let current = browser, current.generation == b.generation {
                browser = nil
                devtoolsURLBox.value = nil
                contexts.removeAll(); tabs.removeAll(); tabsByCDPSession.removeAll(); tabsByTarget.removeAll(); popups.removeAll()
                spares.removeAll(); freeContext = nil; sessionUserAgents.removeAll()
                closing.removeAll(); fronts.removeAll()
                retire(b.process, generation: b.generation, graceSeconds: 2)
            }
        }
        for task in Array(retiring.values) { await task.value }
    }

    /// Stops Chromium at once from any context (the daemon's exit path): kills its process group
    /// and removes the profile. Blocking; meant for the last moments of the process.
    nonisolated public func killNow(_ pid: Int32?) {
        guard let pid else { return }
        kill(-pid, SIGKILL)
    }

    // MARK: sessions and tabs

    /// A new browser context for `session` (idempotent); returns Chromium's id of it
    /// (`browserContextId`, which a DevTools client such as Playwright sees).
    @discardableResult
    public func createSession(_ session: String) async throws -> String {
        // A close of the session while its context is being made (Chromium starting, the
        // context ahead or a new one not there yet) found nothing to close: it is carried out
        // here, and the creation fails.
        creatingSessions.insert(session)
        defer { creatingSessions.remove(session); closedWhileCreating.remove(session) }
        func stillWanted() throws {
            if closedWhileCreating.contains(session) { throw BrowserError.closedWhileOpening(session) }
        }
        let b = try await ensureBrowser()
        try stillWanted()
        if let id = contexts[session] { return id }
        // The context made ahead, with its spare tab for the root (one being made is waited for:
        // it started earlier than a new one would).
        if options.spareTabs {
            if freeContext == nil, let making = makingFreeContext { await making.value }
            try stillWanted()
            if let id = contexts[session] { return id }
            if let free = freeContext, browser?.generation == b.generation {
                freeContext = nil
                contexts[session] = free.id
                spares[session] = free.spare
                return free.id
            }
        }
        let reply = try await b.cdp.call("Target.createBrowserContext", ["disposeOnDetach": true], timeout: options.callTimeoutSeconds)
        guard let id = reply["browserContextId"]?.stringValue else { throw BrowserError.browser("no browserContextId") }
        if closedWhileCreating.contains(session) {
            _ = try? await b.cdp.call("Target.disposeBrowserContext", ["browserContextId": .string(id)], timeout: options.callTimeoutSeconds)
            throw BrowserError.closedWhileOpening(session)
        }
        contexts[session] = id
        return id
    }

    /// Chromium's id of the browser context of `session`, when it has one.
    public func browserContextId(session: String) -> String? { contexts[session] }

    /// Chromium's target id of the tab of `webview` (what `Target.getTargetInfo` on a DevTools
    /// session of that page answers), when it has one.
    public func targetId(session: String, webview: ItemID) -> String? { tabs[TabKey(session, webview)]?.targetId }

    /// Closes every tab of `session` and its context (its cookies and storage go with it).
    public func closeSession(_ session: String) async {
        if creatingSessions.contains(session) { closedWhileCreating.insert(session) }
        fronts[session] = nil
        guard let context = contexts.removeValue(forKey: session), let b = browser else { return }
        for (key, tab) in tabs where tab.session == session { forget(key, tab) }
        // Disposing of the context closes its spare too (one being made closes itself: its
        // session is gone when its calls come back).
        spares[session] = nil
        sessionUserAgents[session] = nil
        webDirectories[session] = nil
        geolocations[session] = nil
        _ = try? await b.cdp.call("Target.disposeBrowserContext", ["browserContextId": .string(context)], timeout: options.callTimeoutSeconds)
    }

    private func forget(_ key: TabKey, _ tab: Tab) {
        fileChoosers[key] = nil
        tabs[key] = nil
        tabsByCDPSession[tab.cdpSession] = nil
        tabsByTarget[tab.targetId] = nil
    }

    public func hasTab(session: String, webview: ItemID) -> Bool { tabs[TabKey(session, webview)] != nil }

    /// Opens a tab for `webview` of `session` on `url`, dressed as a phone web view of the app:
    /// the user agent, the viewport, touch, the script run before every document's own
    /// (`script`), document requests of the main frame stopped for the owner to decide. With
    /// `post`, the first load is that POST (method, body and headers kept).
    /// Returns once the navigation is under way. A tab starts on `about:blank`, which stands for
    /// the web view below (a page's own `history.back()` to it is a back of the host); the tab of
    /// a `root` web view (the session's first, nothing below it) keeps no entry before its page.
    /// Returns the tab's target id (Chromium's, as DevTools clients see it). `userAgent`, when
    /// given, makes the tab's user agent from Chromium's own (a profile's, e.g. Hotwire Native's)
    /// instead of the configured suffix.
    /// A web view closed (`closeTab`) before this returns gets no tab: the one made is closed
    /// and the open fails with `BrowserError.closedWhileOpening`.
    @discardableResult
    public func openTab(session: String, webview: ItemID, url: String, script: String?, post: NavigationRequest? = nil, root: Bool = false,
                        userAgent: (@Sendable (String) -> String)? = nil) async throws -> String {
        let key = TabKey(session, webview)
        lastTabActivity = DispatchTime.now().uptimeNanoseconds
        opening[key, default: 0] += 1
        defer {
            opening[key]! -= 1
            if opening[key] == 0 {
                opening[key] = nil
                closedWhileOpening.remove(key)
            }
        }
        let targetId = try await openTabNow(session: session, webview: webview, url: url, script: script, post: post, root: root, userAgent: userAgent)
        if closedWhileOpening.contains(key) {
            await closeTabNow(session: session, webview: webview)
            throw BrowserError.closedWhileOpening("\(session) \(webview)")
        }
        return targetId
    }

    private func openTabNow(session: String, webview: ItemID, url: String, script: String?, post: NavigationRequest?, root: Bool,
                            userAgent: (@Sendable (String) -> String)?) async throws -> String {
        let b = try await ensureBrowser()
        guard let context = contexts[session] else { throw BrowserError.unknownTarget("session \(session)") }
        let key = TabKey(session, webview)
        if tabs[key] != nil { throw BrowserError.browser("web view \(webview) already has a tab") }
        let tabUserAgent = userAgent?(b.baseUserAgent) ?? b.userAgent
        sessionUserAgents[session] = tabUserAgent
        let t = options.callTimeoutSeconds
        // The session's spare tab, when it has one (a root's: its context was made ahead).
        if let spare = await takeSpare(session: session, context: context) {
            guard tabs[key] == nil else {
                // Another open of the same web view came first (while the spare was being made).
                _ = try? await b.cdp.call("Target.closeTarget", ["targetId": .string(spare.targetId)], timeout: t)
                throw BrowserError.browser("web view \(webview) already has a tab")
            }
            register(key, Tab(session: session, webview: webview, targetId: spare.targetId, cdpSession: spare.cdpSession), url: url, post: post)
            let s = spare.cdpSession
            // The injected client and the load start together: the client is sent first, so
            // Chromium hands it to the spare's renderer before the load begins (once a load
            // has begun, calls for the renderer wait until its document commits). A fetched
            // url's document request waits at the interception until the client is in place
            // (`clientReady`), so the page's first document runs it; an unfetched one (data:)
            // waits for it here.
            let client = script.map { clientCall(b, cdpSession: s, script: $0) }
            // In front, as a new tab opens (the spare was made in the background).
            let front = b.cdp.start("Page.bringToFront", session: s, timeout: t)
            if contexts[session] != nil { fronts[session] = key }
            do {
                if spare.userAgent != tabUserAgent {
                    // Before the load: its document request carries it.
                    _ = try await b.cdp.call("Emulation.setUserAgentOverride", userAgentParams(tabUserAgent), session: s, timeout: t)
                }
                if let client {
                    if tabs[key]?.ownLoadPending == true {
                        tabs[key]?.clientReady = client
                    } else {
                        _ = try await client.value
                    }
                }
            } catch {
                return try await replaceDeadSpare(b, key: key, context: context, url: url, script: script, post: post, root: root, userAgent: tabUserAgent)
            }
            var loadError: (any Error)?
            do {
                // (A client already refused: the spare is gone, no load for it.)
                if client?.failed == true { throw BrowserError.disconnected }
                try await load(b, cdpSession: s, url: url, root: root)
            } catch {
                loadError = error
            }
            // The client could not be added (its document request was failed, not let
            // through): the spare is not there any more.
            var clientFailed = false
            if let client { clientFailed = (try? await client.value) == nil }
            // Settled: the tab's later document requests pass as any tab's.
            tabs[key]?.clientReady = nil
            if clientFailed {
                return try await replaceDeadSpare(b, key: key, context: context, url: url, script: script, post: post, root: root, userAgent: tabUserAgent)
            }
            if let loadError {
                await closeTabNow(session: session, webview: webview)
                throw loadError
            }
            // A failed `Page.bringToFront` alone does not make the spare dead: its page loads
            // and runs; the next screenshot or back brings a tab forward again.
            if (try? await front.value) == nil { debug("\(session) \(webview): its tab was not brought to front") }
            return spare.targetId
        }
        return try await openNewTab(b, key: key, context: context, url: url, script: script, post: post, root: root, userAgent: tabUserAgent)
    }

    /// The spare taken for `key` is not there any more (its renderer died, say): a new tab
    /// instead, unless the web view was closed meanwhile.
    private func replaceDeadSpare(_ b: Browser, key: TabKey, context: String, url: String, script: String?, post: NavigationRequest?,
                                  root: Bool, userAgent: String) async throws -> String {
        await closeTabNow(session: key.session, webview: key.webview)
        if closedWhileOpening.contains(key) { throw BrowserError.closedWhileOpening("\(key.session) \(key.webview)") }
        return try await openNewTab(b, key: key, context: context, url: url, script: script, post: post, root: root, userAgent: userAgent)
    }

    private func userAgentParams(_ userAgent: String) -> JSONObject {
        var params: JSONObject = ["userAgent": .string(userAgent)]
        if options.isPhone { params["userAgentMetadata"] = BrowserOptions.phoneClientHints(userAgent: userAgent) }
        return params
    }

    /// A navigation the page asks for (`Page.frameRequestedNavigation` of the main frame, an
    /// http(s) url) is handed to the owner at once when its document request is sure to
    /// follow as a plain GET in the same tab: a link, a GET form, a `location` assignment, a
    /// refresh, with no fragment (a `#` may be a same-document change, which is never
    /// stopped). A POST form (its body is only in the request), a reload, a new tab or window, a
    /// download and a url with a fragment go the usual way: decided at their paused request.
    static func decidedEarly(url: String, reason: String?, disposition: String?) -> Bool {
        guard disposition == nil || disposition == "currentTab", !url.contains("#") else { return false }
        switch reason {
        case "anchorClick", "formSubmissionGet", "scriptInitiated", "metaTagRefresh", "httpHeaderRefresh": return true
        default: return false
        }
    }

    /// At most this many navigations decided early wait for their request per tab (a page
    /// that asks for more before any reaches the network: the oldest is forgotten, and its
    /// request, if it still comes, is decided again as any other).
    public static let decidedNavigationsLimit = 4

    /// The tab's state and its lookups, before its first call: its events are routed to it.
    private func register(_ key: TabKey, _ tab: Tab, url: String, post: NavigationRequest?) {
        var tab = tab
        // Only network loads pass the request interception (a data: url does not).
        tab.ownLoadPending = url.hasPrefix("http:") || url.hasPrefix("https:")
        tab.ownLoadPost = post
        tab.spareAfterLoad = options.spareTabs
        tabsOpened += 1
        tab.order = tabsOpened
        tabs[key] = tab
        tabsByCDPSession[tab.cdpSession] = key
        tabsByTarget[tab.targetId] = key
        if let g = geolocations[key.session], let cdp = browser?.cdp {
            _ = cdp.start("Emulation.setGeolocationOverride", Self.geolocationParams(g), session: tab.cdpSession, timeout: options.callTimeoutSeconds)
        }
    }

    /// The calls that dress a new tab as the app's web view (sent at once; each answered by the
    /// tab's renderer once it runs), then its injected client (`script`).
    private func dress(_ b: Browser, cdpSession s: String, userAgent: String, script: String?) async throws {
        let t = options.callTimeoutSeconds
        async let page = b.cdp.call("Page.enable", session: s, timeout: t)
        async let fetch = b.cdp.call("Fetch.enable", ["patterns": .array(fetchPatterns(session: tabsByCDPSession[s]?.session))], session: s, timeout: t)
        async let ua = b.cdp.call("Emulation.setUserAgentOverride", userAgentParams(userAgent), session: s, timeout: t)
        async let metrics = b.cdp.call("Emulation.setDeviceMetricsOverride", [
            "width": .int(Int64(options.viewportWidth)), "height": .int(Int64(options.viewportHeight)),
            "deviceScaleFactor": 1, "mobile": true,
        ], session: s, timeout: t)
        async let touch = b.cdp.call("Emulation.setTouchEmulationEnabled", ["enabled": true, "maxTouchPoints": 5], session: s, timeout: t)
        async let sw = b.cdp.call("Network.setBypassServiceWorker", ["bypass": true], session: s, timeout: t)
        async let lifecycle = b.cdp.call("Page.setLifecycleEventsEnabled", ["enabled": true], session: s, timeout: t)
        // A file chooser is the app's to answer (`webview.fileChooser`), never a window.
        async let chooser = b.cdp.call("Page.setInterceptFileChooserDialog", ["enabled": true], session: s, timeout: t)
        _ = try await (page, fetch, ua, metrics, touch, sw, lifecycle, chooser)
        try await inject(b, cdpSession: s, script: script)
    }

    /// `script` run before every document's own, from the next document on (and in the
    /// current one, which skips it unless it has an http(s) origin).
    private func inject(_ b: Browser, cdpSession s: String, script: String?) async throws {
        guard let script else { return }
        _ = try await clientCall(b, cdpSession: s, script: script).value
    }

    /// The call that adds the injected client, sent now.
    private func clientCall(_ b: Browser, cdpSession s: String, script: String) -> CDPPendingReply {
        b.cdp.start("Page.addScriptToEvaluateOnNewDocument", ["source": .string(script), "runImmediately": true], session: s, timeout: options.callTimeoutSeconds)
    }

    /// A new tab in `context`, dressed, loading `url`.
    private func openNewTab(_ b: Browser, key: TabKey, context: String, url: String, script: String?, post: NavigationRequest?, root: Bool,
                            userAgent: String) async throws -> String {
        let t = options.callTimeoutSeconds
        let created = try await b.cdp.call("Target.createTarget", ["url": "about:blank", "browserContextId": .string(context)], timeout: t)
        guard let targetId = created["targetId"]?.stringValue else { throw BrowserError.browser("no targetId") }
        let attached = try await b.cdp.call("Target.attachToTarget", ["targetId": .string(targetId), "flatten": true], timeout: t)
        guard let cdpSession = attached["sessionId"]?.stringValue else { throw BrowserError.browser("no sessionId") }
        register(key, Tab(session: key.session, webview: key.webview, targetId: targetId, cdpSession: cdpSession), url: url, post: post)
        // (Created in the foreground.)
        if contexts[key.session] != nil { fronts[key.session] = key }
        do {
            try await dress(b, cdpSession: cdpSession, userAgent: userAgent, script: script)
            try await load(b, cdpSession: cdpSession, url: url, root: root)
        } catch {
            await closeTabNow(session: key.session, webview: key.webview)
            throw error
        }
        return targetId
    }

    /// Starts the tab's load of `url`.
    private func load(_ b: Browser, cdpSession s: String, url: String, root: Bool) async throws {
        let t = options.callTimeoutSeconds
        if root {
            // Why the root's page fails to load, if it does, is Network.loadingFailed's
            // `errorText` (location.replace reports none): the Network domain is on for that
            // load only (its events cost a JSON message per request event of the page).
            if url.hasPrefix("http:") || url.hasPrefix("https:") {
                if let key = tabsByCDPSession[s] { tabs[key]?.watchingNetwork = true }
                _ = try await b.cdp.call("Network.enable", session: s, timeout: t)
            }
            // The page replaces the `about:blank` entry: nothing is below the root, so its
            // own `history.back()` at its first entry does nothing, as the host's back does
            // on a stack of one.
            let replaced = try await b.cdp.call("Runtime.evaluate", [
                "expression": .string("location.replace(\(JSONValue.string(url).jsonString)); true"),
            ], session: s, timeout: t)
            if let details = replaced["exceptionDetails"] {
                throw BrowserError.loadFailed(url: url, reason: details["exception"]?["description"]?.stringValue ?? "cannot be loaded")
            }
        } else {
            let nav = try await b.cdp.call("Page.navigate", ["url": .string(url)], session: s, timeout: t)
            // Aborted: no document came (a download, which the shell reports, or a 204): the tab
            // stays as it was, as a native web view does.
            if let error = nav["errorText"]?.stringValue, !error.isEmpty, error != "net::ERR_ABORTED" {
                throw BrowserError.loadFailed(url: url, reason: error)
            }
        }
    }

    // MARK: spare tabs

    /// The session's spare, taken (nil when it has none; one being made is waited for).
    private func takeSpare(session: String, context: String) async -> Spare? {
        guard options.spareTabs else { return nil }
        if spares[session] == nil, let making = makingSpares[session] { await making.value }
        guard contexts[session] == context, browser != nil else { return nil }
        return spares.removeValue(forKey: session)
    }

    /// Starts making a spare tab for `session` unless it has one or one is being made.
    private func makeSpare(session: String) {
        guard options.spareTabs, !shuttingDown, spares[session] == nil, makingSpares[session] == nil,
              let b = browser, let context = contexts[session] else { return }
        let userAgent = sessionUserAgents[session] ?? b.userAgent
        makingSpares[session] = Task { await self.buildSpare(b, session: session, context: context, userAgent: userAgent) }
    }

    private func buildSpare(_ b: Browser, session: String, context: String, userAgent: String) async {
        // Still wanted: the session (its context) and the browser are the same.
        do {
            spares[session] = try await newSpare(b, context: context, userAgent: userAgent,
                                                 wanted: { contexts[session] == context && browser?.generation == b.generation })
        } catch is CancellationError {
            debug("\(session): its spare tab was made for nothing (the session or the browser went away)")
        } catch {
            debug("\(session): no spare tab: \(error)")
        }
        // Made for nothing or failed half-way: closed (the session's next tab is made the usual
        // way and makes a new spare once its page has loaded).
        makingSpares[session] = nil
        makeFreeContext()
    }

    /// A tab in `context` on `about:blank`, attached and dressed, without an injected client.
    /// Closed again when a call fails or `wanted()` says no after one.
    private func newSpare(_ b: Browser, context: String, userAgent: String, wanted: () -> Bool) async throws -> Spare {
        let t = options.callTimeoutSeconds
        var targetId: String?
        do {
            // In the background: the session's top web view stays the tab in front.
            let created = try await b.cdp.call("Target.createTarget", ["url": "about:blank", "browserContextId": .string(context), "background": true], timeout: t)
            targetId = created["targetId"]?.stringValue
            guard let id = targetId, wanted() else { throw CancellationError() }
            let attached = try await b.cdp.call("Target.attachToTarget", ["targetId": .string(id), "flatten": true], timeout: t)
            guard let cdpSession = attached["sessionId"]?.stringValue, wanted() else { throw CancellationError() }
            try await dress(b, cdpSession: cdpSession, userAgent: userAgent, script: nil)
            guard wanted() else { throw CancellationError() }
            return Spare(targetId: id, cdpSession: cdpSession, userAgent: userAgent)
        } catch {
            if let targetId {
                _ = try? await b.cdp.call("Target.closeTarget", ["targetId": .string(targetId)], timeout: t)
            }
            throw error
        }
    }

    /// Makes a browser context with its spare tab for the next session, unless there is one or
    /// one is being made or waited for: once no web view's tab has opened or reported anything
    /// for `options.contextAheadQuietSeconds` (the pages the user waits for come first).
    private func makeFreeContext() {
        guard options.spareTabs, !shuttingDown, freeContext == nil, makingFreeContext == nil, freeContextWaiting == nil, browser != nil else { return }
        freeContextWaiting = Task { await self.makeFreeContextWhenQuiet() }
    }

    private func makeFreeContextWhenQuiet() async {
        let quiet = UInt64(max(0, options.contextAheadQuietSeconds) * 1_000_000_000)
        while true {
            let since = DispatchTime.now().uptimeNanoseconds &- lastTabActivity
            if since >= quiet || shuttingDown || browser == nil { break }
            try? await Task.sleep(nanoseconds: quiet - since)
            if Task.isCancelled { return }
        }
        freeContextWaiting = nil
        guard options.spareTabs, !shuttingDown, freeContext == nil, makingFreeContext == nil, let b = browser else { return }
        makingFreeContext = Task { await self.buildFreeContext(b) }
    }

    private func buildFreeContext(_ b: Browser) async {
        let t = options.callTimeoutSeconds
        var contextId: String?
        do {
            let reply = try await b.cdp.call("Target.createBrowserContext", ["disposeOnDetach": true], timeout: t)
            contextId = reply["browserContextId"]?.stringValue
            guard let id = contextId, browser?.generation == b.generation, !shuttingDown else { throw CancellationError() }
            let spare = try await newSpare(b, context: id, userAgent: b.userAgent, wanted: { browser?.generation == b.generation && !shuttingDown })
            freeContext = FreeContext(id: id, spare: spare)
        } catch {
            if let contextId {
                _ = try? await b.cdp.call("Target.disposeBrowserContext", ["browserContextId": .string(contextId)], timeout: t)
            }
        }
        makingFreeContext = nil
    }

    /// A spare tab Chromium reports crashed or gone is dropped (and closed).
    private func dropSpare(targetId: String, cdp: CDPConnection) async {
        if let free = freeContext, free.spare.targetId == targetId {
            // The context made ahead goes with it (the next session makes its own).
            freeContext = nil
            _ = try? await cdp.call("Target.disposeBrowserContext", ["browserContextId": .string(free.id)], timeout: options.callTimeoutSeconds)
            return
        }
        guard let (session, _) = spares.first(where: { $0.value.targetId == targetId }) else { return }
        spares[session] = nil
        _ = try? await cdp.call("Target.closeTarget", ["targetId": .string(targetId)], timeout: options.callTimeoutSeconds)
    }

    /// Closes the tab of `webview` (nothing when it has none); one being opened is closed once
    /// it is (see `openTab`).
    public func closeTab(session: String, webview: ItemID) async {
        let key = TabKey(session, webview)
        if opening[key] != nil { closedWhileOpening.insert(key) }
        await closeTabNow(session: session, webview: webview)
    }

    private func closeTabNow(session: String, webview: ItemID) async {
        let key = TabKey(session, webview)
        guard let tab = tabs[key] else { return }
        forget(key, tab)
        closing[tab.cdpSession] = tab.targetId
        guard let cdp = browser?.cdp else { return }
        // Closing the tab in front brings its right neighbour forward, else its left one: the
        // web view below, unless the session's spare sits right of it. Then the right-most web
        // view's tab is brought forward, as it would be without a spare.
        // Only when the tab is in front, or may be (`fronts` does not know), and no other tab was
        // opened or brought forward while the close was answered: closing a tab behind brings
        // nothing forward, in Chromium as here (a routed session's web view removed from a stack
        // not shown).
        if fronts[session] == key { fronts[session] = nil }
        let spareRight = spares[session] != nil || makingSpares[session] != nil
        _ = try? await cdp.call("Target.closeTarget", ["targetId": .string(tab.targetId)], timeout: options.callTimeoutSeconds)
        // Which tab that is, once the close is answered (a web view opened meanwhile, a back then
        // a push at once or a router's replace, is the session's top now, and in front).
        let below = tabs.values.filter { $0.session == session }.max { $0.order < $1.order }
        if spareRight, let below, below.order < tab.order, fronts[session] == nil {
            fronts[session] = TabKey(session, below.webview)
            _ = try? await cdp.call("Page.bringToFront", session: below.cdpSession, timeout: options.callTimeoutSeconds)
        }
        // Until Chromium reports the tab destroyed, the close is sent again now and then (a
        // dropped close is also sent again as soon as the tab commits its next document).
        let (s, targetId) = (tab.cdpSession, tab.targetId)
        Task { [weak self] in
            for _ in 0..<Self.closeRetries {
                try? await Task.sleep(nanoseconds: Self.closeRetryNanoseconds)
                guard let self, await self.closing[s] == targetId else { return }
                _ = try? await cdp.call("Target.closeTarget", ["targetId": .string(targetId)], timeout: self.options.callTimeoutSeconds)
            }
        }
    }

    /// A call to a tab, tried again for a while when it lands between two documents (a new
    /// document in another renderer answers "Not attached to an active page" until it commits).
    private func tabCall(_ cdp: CDPConnection, _ method: String, _ params: JSONObject = [:], session: String) async throws -> JSONValue {
        var attempt = 0
        while true {
            do {
                return try await cdp.call(method, params, session: session, timeout: options.callTimeoutSeconds)
            } catch BrowserError.browser(let message) where message.contains("Not attached to an active page") && attempt < 100 {
                attempt += 1
                try await Task.sleep(nanoseconds: 20_000_000)
            }
        }
    }

    func tab(_ session: String, _ webview: ItemID) throws -> (Tab, CDPConnection) {
        guard let b = browser else { throw BrowserError.disconnected }
        guard let tab = tabs[TabKey(session, webview)] else { throw BrowserError.unknownTarget("\(session) \(webview)") }
        return (tab, b.cdp)
    }

    // MARK: acting on a tab

    /// Brings the tab of `webview` to the front (a tab in the background draws no frames).
    public func bringToFront(session: String, webview: ItemID) async throws {
        let (tab, cdp) = try tab(session, webview)
        fronts[session] = TabKey(session, webview)
        _ = try await tabCall(cdp, "Page.bringToFront", session: tab.cdpSession)
    }

    /// The tab as it looks now, as a JPEG.
    public func screenshot(session: String, webview: ItemID) async throws -> [UInt8] {
        let (tab, cdp) = try tab(session, webview)
        // A tab in the background draws no frames.
        fronts[session] = TabKey(session, webview)
        _ = try await tabCall(cdp, "Page.bringToFront", session: tab.cdpSession)
        let shot = try await tabCall(cdp, "Page.captureScreenshot", ["format": "jpeg", "quality": .int(Int64(options.jpegQuality))], session: tab.cdpSession)
        guard let base64 = shot["data"]?.stringValue, let data = Data(base64Encoded: base64) else {
            throw BrowserError.browser("the screenshot had no image")
        }
        return [UInt8](data)
    }

    /// Evaluates `expression` in the page; a promise is awaited. Returns its value as JSON
    /// (`null` for `undefined` and values JSON cannot hold). A thrown exception is a
    /// `BrowserError.browser` with its message.
    public func evaluate(session: String, webview: ItemID, expression: String) async throws -> JSONValue {
        let (tab, cdp) = try tab(session, webview)
        let reply = try await tabCall(cdp, "Runtime.evaluate", [
            "expression": .string(expression), "returnByValue": true, "awaitPromise": true, "userGesture": true,
        ], session: tab.cdpSession)
        if let details = reply["exceptionDetails"] {
            let message = details["exception"]?["description"]?.stringValue ?? details["text"]?.stringValue ?? "the expression threw"
            throw BrowserError.browser(message)
        }
        return reply["result"]?["value"] ?? .null
    }

    /// The script that finds the element of `selector` for `click` and `type`: a CSS selector,
    /// or several joined by ` >>> `, each looked up in the open shadow root of the element the
    /// previous one found (`ion-item[href="/one/"] >>> a`).
    static func locate(_ selector: String) -> String {
        let sel = JSONValue.string(selector).jsonString
        return """
            const __sel = \(sel); const __parts = __sel.split(" >>> ");
            let __root = document, el = null;
            for (let i = 0; i < __parts.length; i++) {
              el = __root.querySelector(__parts[i]);
              if (!el) throw new Error("no element matches " + __sel);
              if (i < __parts.length - 1) { __root = el.shadowRoot; if (!__root) throw new Error(__parts[i] + " has no open shadow root (in " + __sel + ")"); }
            }
            """
    }

    /// The click's actionability check, as a user's tap needs it: the element is visible, has a
    /// size, is not disabled, sits inside the screen once scrolled to, and is what a tap at its
    /// middle reaches (not covered by another element). Returns the point, or throws saying which.
    static func actionable(_ selector: String) -> String {
        """
        (() => { \(locate(selector))
          const describe = (n) => n.localName + (n.id ? "#" + n.id : "") + (typeof n.className === "string" && n.className.trim() ? "." + n.className.trim().split(/\\s+/).join(".") : "");
          if (!el.isConnected) throw new Error(__sel + " is not visible (not in the document)");
          const st = getComputedStyle(el);
          if (st.display === "none" || (el.checkVisibility && !el.checkVisibility({checkVisibilityCSS: true}))) throw new Error(__sel + " is not visible (display:none, or inside a hidden element)");
          if (st.visibility === "hidden" || st.visibility === "collapse") throw new Error(__sel + " is not visible (visibility:" + st.visibility + ")");
          if (el.checkVisibility && !el.checkVisibility({checkOpacity: true})) throw new Error(__sel + " is not visible (opacity:0)");
          el.scrollIntoView({block: "center", inline: "center"});
          const r = el.getBoundingClientRect();
          if (r.width === 0 || r.height === 0) throw new Error(__sel + " has no size (" + r.width + "×" + r.height + ")");
          if (el.disabled === true || el.getAttribute("aria-disabled") === "true" || (el.closest && el.closest("fieldset:disabled") && /^(button|input|select|textarea)$/.test(el.localName))) throw new Error(__sel + " is disabled");
          const x = r.left + r.width / 2, y = r.top + r.height / 2;
          if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) throw new Error(__sel + " is outside the screen (its middle is at " + Math.round(x) + "," + Math.round(y) + ")");
          let hit = document.elementFromPoint(x, y);
          while (hit && hit.shadowRoot) { const inner = hit.shadowRoot.elementFromPoint(x, y); if (!inner || inner === hit) break; hit = inner; }
          const inside = (n) => { for (; n; n = n.parentNode || n.host) if (n === el) return true; return false; };
          if (!hit || !inside(hit)) throw new Error(__sel + " is covered by " + (hit ? describe(hit) : "nothing the page draws"));
          \(watchPress)
          return {x, y}; })()
        """
    }

    /// Most presses one `click` makes: a click the page lost between the press and the release
    /// (`clickLost`) is pressed again, on the element the selector finds then.
    public static let clickPresses = 3

    /// Watches the press about to be made (the page's window keeps the watcher, unenumerable,
    /// under `Symbol.for("bridged.click")`): the pressed node (the innermost, also in a shadow
    /// root), dropped when the page's own mousedown listeners removed it (a tap loses that click
    /// too); at the release, `lost` if that node has left the document, cleared by a click.
    public static let watchPress = """
        const __k = Symbol.for("bridged.click"); let __w = window[__k];
        if (!__w) { __w = {down: null, lost: false}; Object.defineProperty(window, __k, {value: __w});
          addEventListener("mousedown", (e) => { if (e.isTrusted) __w.down = e.composedPath()[0] || null; }, true);
          addEventListener("mousedown", () => { if (__w.down && !__w.down.isConnected) __w.down = null; }, false);
          addEventListener("mouseup", (e) => { if (e.isTrusted && __w.down) __w.lost = !__w.down.isConnected; __w.down = null; }, true);
          addEventListener("click", (e) => { if (e.isTrusted) __w.lost = false; }, true); }
        __w.down = null; __w.lost = false;
        """

    /// After the release: whether the click was lost, that is, whether the page removed the
    /// pressed element after the press was handled and before the release (a Turbo render of the
    /// response after a cached snapshot's): Chromium then dispatches no click at all, while a
    /// user's tap, one input, would have clicked the element there at the release.
    public static let clickLost = #"(() => { const w = window[Symbol.for("bridged.click")]; return !!(w && w.lost); })()"#

    /// The first line of a page exception's description, without `Error: `.
    static func pageMessage(_ error: any Error) -> any Error {
        guard case BrowserError.browser(let message) = error else { return error }
        var line = message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? message
        if line.hasPrefix("Error: ") { line.removeFirst(7) }
        return BrowserError.browser(line)
    }

    /// A real click (mouse press and release, trusted by the page) in the middle of the element
    /// `selector` finds (`a >>> b` pierces open shadow roots), scrolled into view first. An
    /// element a user could not tap fails, saying why: not visible, no size, disabled, outside
    /// the screen, covered (by what).
    ///
    /// The press and the release are two inputs, and the page runs its tasks between them: when
    /// it removed the pressed element in between (Turbo rendering a visit's response over the
    /// cached snapshot it showed first), Chromium dispatches no click, where a user's tap (one
    /// input) would have clicked the element found there. Such a lost click is pressed again on
    /// the element the selector finds then, at most `clickPresses` presses in all; then it fails.
    public func click(session: String, webview: ItemID, selector: String) async throws {
        let (tab, cdp) = try tab(session, webview)
        for _ in 1...Self.clickPresses {
            let point: JSONValue
            do { point = try await evaluate(session: session, webview: webview, expression: Self.actionable(selector)) } catch {
                throw Self.pageMessage(error)
            }
            guard let x = point["x"]?.doubleValue, let y = point["y"]?.doubleValue else { throw BrowserError.browser("no position for \(selector)") }
            for type in ["mousePressed", "mouseReleased"] {
                _ = try await cdp.call("Input.dispatchMouseEvent", [
                    "type": .string(type), "x": .double(x), "y": .double(y), "button": "left", "clickCount": 1,
                ], session: tab.cdpSession, timeout: options.callTimeoutSeconds)
            }
            // A page that went (the click navigated) or cannot say: the click was not lost.
            let lost = try? await evaluate(session: session, webview: webview, expression: Self.clickLost)
            if lost != .bool(true) { return }
        }
        throw BrowserError.browser("\(selector): the click was lost \(Self.clickPresses) times (the page removed the pressed element before the release)")
    }

    /// Focuses the element `selector` finds and types `text` into it, as a keyboard would.
    public func type(session: String, webview: ItemID, selector: String, text: String) async throws {
        let (tab, cdp) = try tab(session, webview)
        do {
            _ = try await evaluate(session: session, webview: webview, expression: "(() => { \(Self.locate(selector)) el.focus(); return true; })()")
        } catch {
            throw Self.pageMessage(error)
        }
        _ = try await cdp.call("Input.insertText", ["text": .string(text)], session: tab.cdpSession, timeout: options.callTimeoutSeconds)
    }

    // MARK: events

    private func handle(_ event: CDPEvent, generation gen: Int) async {
        guard let b = browser, b.generation == gen else { return }
        if let s = event.sessionId {
            guard let key = tabsByCDPSession[s], let tab = tabs[key] else {
                if event.method == "Fetch.requestPaused", let id = event.params["requestId"]?.stringValue {
                    // A tab being closed loads nothing more (a spare whose client failed: its page
                    // would run without it).
                    if closing[s] != nil {
                        _ = try? await b.cdp.call("Fetch.failRequest", ["requestId": .string(id), "errorReason": "Aborted"], session: s, timeout: options.callTimeoutSeconds)
                        return
                    }
                    _ = try? await b.cdp.call("Fetch.continueRequest", ["requestId": .string(id)], session: s, timeout: options.callTimeoutSeconds)
                } else if event.method == "Page.javascriptDialogOpening" {
                    answerStrayDialog(event, cdpSession: s, cdp: b.cdp)
                } else if event.method == "Page.frameNavigated", let targetId = closing[s],
                          event.params["frame"]?["parentId"] == nil {
                    // A tab being closed committed a document: the close may have been dropped.
                    _ = try? await b.cdp.call("Target.closeTarget", ["targetId": .string(targetId)], timeout: options.callTimeoutSeconds)
                }
                return
            }
            await handleTabEvent(event, key: key, tab: tab, cdp: b.cdp)
            return
        }
        switch event.method {
        case "Target.targetCreated", "Target.targetInfoChanged":
            guard let info = event.params["targetInfo"], let targetId = info["targetId"]?.stringValue,
                  info["type"]?.stringValue == "page", tabsByTarget[targetId] == nil else { return }
            if event.method == "Target.targetCreated" {
                guard let opener = info["openerId"]?.stringValue, let openerKey = tabsByTarget[opener] else { return }
                popups[targetId] = openerKey
            }
            guard let openerKey = popups[targetId], let url = info["url"]?.stringValue,
                  !url.isEmpty, url != "about:blank" else { return }
            popups[targetId] = nil
            _ = try? await b.cdp.call("Target.closeTarget", ["targetId": .string(targetId)], timeout: options.callTimeoutSeconds)
            if let opener = tabs[openerKey] {
                emit(.navigationRequested(session: opener.session, webview: opener.webview, request: NavigationRequest(url: url, kind: .windowOpen)))
            }
        case "Target.targetDestroyed":
            if let targetId = event.params["targetId"]?.stringValue {
                popups[targetId] = nil
                if let s = closing.first(where: { $0.value == targetId })?.key { closing[s] = nil }
                await dropSpare(targetId: targetId, cdp: b.cdp)
            }
        case "Target.targetCrashed":
            if let targetId = event.params["targetId"]?.stringValue { await dropSpare(targetId: targetId, cdp: b.cdp) }
            guard let targetId = event.params["targetId"]?.stringValue, let key = tabsByTarget[targetId], let tab = tabs[key] else { return }
            let status = event.params["status"]?.stringValue ?? "crashed"
            let code = event.params["errorCode"]?.intValue.map { ", code \($0)" } ?? ""
            emit(.shell(.crashed(session: tab.session, webview: tab.webview, reason: "the page's renderer process died (\(status)\(code))")))
        case "Browser.downloadWillBegin":
            downloadBegan(event)
        default:
            break
        }
    }

    private func handleTabEvent(_ event: CDPEvent, key: TabKey, tab: Tab, cdp: CDPConnection) async {
        let t = options.callTimeoutSeconds
        lastTabActivity = DispatchTime.now().uptimeNanoseconds
        if await handleShellEvent(event, tab: tab, cdp: cdp) { return }
        switch event.method {
        case "Page.frameStartedNavigating":
            guard event.params["frameId"]?.stringValue == tab.targetId else { return }
            let type = event.params["navigationType"]?.stringValue
            tabs[key]?.lastNavigationType = type
            tabs[key]?.foreignLoad = type == "differentDocument" && !tab.pageRequestedNavigation && !tab.ownLoadPending
            tabs[key]?.pageRequestedNavigation = false
            // A traversal to a document that is not fetched (the tab's first entry, about:blank,
            // which stands for the web view below) pauses nowhere: it is stopped here. Fetched
            // ones are stopped at `Fetch.requestPaused`.
            if type == "historyDifferentDocument", let url = event.params["url"]?.stringValue,
               !url.hasPrefix("http:"), !url.hasPrefix("https:") {
                _ = try? await cdp.call("Page.stopLoading", session: tab.cdpSession, timeout: t)
                emit(.historyBack(session: tab.session, webview: tab.webview))
            }
        case "Page.frameRequestedNavigation":
            guard event.params["frameId"]?.stringValue == tab.targetId, let url = event.params["url"]?.stringValue,
                  let scheme = url.split(separator: ":", maxSplits: 1).first?.lowercased() else { return }
            if ["http", "https"].contains(scheme) {
                tabs[key]?.pageRequestedNavigation = true
                if options.decidesNavigationsEarly, !tab.ownLoadPending, tab.clientReady == nil,
                   Self.decidedEarly(url: url, reason: event.params["reason"]?.stringValue, disposition: event.params["disposition"]?.stringValue) {
                    // Decided where a native shell decides (a web view's navigation action),
                    // not once the request reaches the network: the next web view's tab
                    // loads while this tab's own navigation starts. Its request is aborted
                    // when it comes (below).
                    var decided = tab.decidedNavigations
                    if decided.count == Self.decidedNavigationsLimit { decided.removeFirst() }
                    decided.append((url, DispatchTime.now().uptimeNanoseconds))
                    tabs[key]?.decidedNavigations = decided
                    emit(.navigationRequested(session: tab.session, webview: tab.webview, request: NavigationRequest(url: url)))
                }
                return
            }
            guard !["about", "data", "blob", "javascript", "file"].contains(scheme) else { return }
            emit(.navigationRequested(session: tab.session, webview: tab.webview, request: NavigationRequest(url: url, kind: .customScheme)))
        case "Fetch.requestPaused":
            guard let requestId = event.params["requestId"]?.stringValue else { return }
            let request = event.params["request"]
            let url = request?["url"]?.stringValue ?? ""
            let method = request?["method"]?.stringValue ?? "GET"
            // What the session's web directory serves (its subresources, its frames' documents).
            if !webDirectories.isEmpty, await serveSubresource(event.params, tab: tab, cdp: cdp) { return }
            // Frames inside the page load as they like.
            if event.params["frameId"]?.stringValue != tab.targetId {
                _ = try? await cdp.call("Fetch.continueRequest", ["requestId": .string(requestId)], session: tab.cdpSession, timeout: t)
                return
            }
            // The tab's own load, a reload, or a load another DevTools client started
            // (Playwright's `page.goto`: the host loading a url into this web view).
            if tab.ownLoadPending || tab.lastNavigationType == "reload" || (tab.foreignLoad && tab.lastNavigationType == "differentDocument") {
                tabs[key]?.ownLoadPending = false
                var params: JSONObject = ["requestId": .string(requestId)]
                if let post = tab.ownLoadPost, tab.ownLoadPending {
                    tabs[key]?.ownLoadPost = nil
                    params["method"] = .string(post.method)
                    if let body = post.postData { params["postData"] = .string(Data(body).base64EncodedString()) }
                    var headers = request?["headers"]?.objectValue ?? JSONObject()
                    for (name, value) in post.headers { headers[name] = .string(value) }
                    params["headers"] = .array(headers.map { .object(["name": .string($0.key), "value": $0.value]) })
                }
                // A load the browser will not let through stays paused for good: the web view is
                // told it failed (`webview.failed`), not left blank without a word.
                let emit = self.emit, (session, webview, cdpSession) = (tab.session, tab.webview, tab.cdpSession), continued = params
                // (Answered from the session's web directory when it serves the URL: `--web-dir`.)
                let served = webDirectories[tab.session].flatMap { $0.serves(url) ? $0 : nil }
                let letThrough: @Sendable () async -> Void = {
                    do {
                        if let served {
                            _ = try await cdp.call("Fetch.fulfillRequest", served.answer(requestId, url: url), session: cdpSession, timeout: t)
                        } else {
                            _ = try await cdp.call("Fetch.continueRequest", continued, session: cdpSession, timeout: t)
                        }
                    } catch {
                        emit(.loadFailed(session: session, webview: webview, url: url, reason: "the browser did not let the page's load through: \(error)"))
                    }
                }
                if let client = tab.clientReady {
                    // Not before the page's client is in place; meanwhile other events go on.
                    // (Kept until openTabNow has seen it settle: any document of the tab waits.)
                    let s = tab.cdpSession
                    Task {
                        if (try? await client.value) == nil {
                            _ = try? await cdp.call("Fetch.failRequest", ["requestId": .string(requestId), "errorReason": "Aborted"], session: s, timeout: t)
                        } else {
                            await letThrough()
                        }
                    }
                    return
                }
                await letThrough()
                return
            }
            if !tab.decidedNavigations.isEmpty {
                // Those that never came within the window are forgotten.
                let window = UInt64(max(0, options.decidedNavigationSeconds) * 1_000_000_000)
                let now = DispatchTime.now().uptimeNanoseconds
                tabs[key]?.decidedNavigations.removeAll { now &- $0.at > window }
            }
            if method == "GET", tab.lastNavigationType != "historyDifferentDocument",
               let decided = tabs[key]?.decidedNavigations.firstIndex(where: { $0.url == url }) {
                // Handed over when the page asked for it: aborted, not reported again (not
                // awaited: the next web view's own request, paused beside it, comes next).
                tabs[key]?.decidedNavigations.remove(at: decided)
                _ = cdp.start("Fetch.failRequest", ["requestId": .string(requestId), "errorReason": "Aborted"], session: tab.cdpSession, timeout: t)
                return
            }
            var postData: [UInt8]?
            if method != "GET", request?["hasPostData"]?.boolValue == true {
                if let inline = request?["postData"]?.stringValue {
                    postData = Array(inline.utf8)
                } else {
                    do {
                        let body = try await cdp.call("Fetch.getRequestPostData", ["requestId": .string(requestId)], session: tab.cdpSession, timeout: t)
                        if let text = body["postData"]?.stringValue {
                            postData = body["base64Encoded"]?.boolValue == true ? Data(base64Encoded: text).map { [UInt8]($0) } : Array(text.utf8)
                        }
                    } catch {
                        // Said, not swallowed: the new web view's POST goes without its body.
                        emit(.warning("\(tab.session) \(tab.webview): the body of the \(method) to \(url) could not be read (\(error)); its web view sends it without one"))
                    }
                }
            }
            var headers: [String: String] = [:]
            for (name, value) in request?["headers"]?.objectValue ?? JSONObject() {
                if let v = value.stringValue { headers[name] = v }
            }
            _ = try? await cdp.call("Fetch.failRequest", ["requestId": .string(requestId), "errorReason": "Aborted"], session: tab.cdpSession, timeout: t)
            if tab.lastNavigationType == "historyDifferentDocument" {
                emit(.historyBack(session: tab.session, webview: tab.webview))
            } else {
                emit(.navigationRequested(session: tab.session, webview: tab.webview,
                                          request: NavigationRequest(url: url, method: method, postData: postData, headers: headers)))
            }
        case "Page.navigatedWithinDocument":
            guard event.params["frameId"]?.stringValue == tab.targetId, let url = event.params["url"]?.stringValue else { return }
            emit(.urlChanged(session: tab.session, webview: tab.webview, url: url))
        case "Page.frameNavigated":
            guard let frame = event.params["frame"], frame["parentId"] == nil, frame["id"]?.stringValue == tab.targetId else { return }
            if let unreachable = frame["unreachableUrl"]?.stringValue, !unreachable.isEmpty {
                // A load that failed after it started (the root's, which `location.replace`
                // starts, or any later one): Chromium shows its error page instead.
                tabs[key]?.failedLoad = unreachable
                return
            }
            guard let url = frame["url"]?.stringValue, url.hasPrefix("http:") || url.hasPrefix("https:") else { return }
            emit(.urlChanged(session: tab.session, webview: tab.webview, url: url))
        case "Network.requestWillBeSent":
            guard tab.watchingNetwork, event.params["type"]?.stringValue == "Document", event.params["frameId"]?.stringValue == tab.targetId,
                  let id = event.params["requestId"]?.stringValue else { return }
            tabs[key]?.documentRequest = id
            tabs[key]?.netError = nil
        case "Network.loadingFailed":
            guard tab.watchingNetwork, let id = event.params["requestId"]?.stringValue, id == tab.documentRequest,
                  let text = event.params["errorText"]?.stringValue, !text.isEmpty else { return }
            tabs[key]?.netError = text
        case "Page.loadEventFired":
            if tab.watchingNetwork, tab.documentRequest != nil {
                // The root's first page (or Chromium's error page for it) has loaded.
                tabs[key]?.watchingNetwork = false
                // Not awaited: the browser's later events (this load's failure, the spare tab it
                // starts) do not wait for the answer; a network event that still comes is ignored.
                let (s, debug, label) = (tab.cdpSession, debug, "\(tab.session) \(tab.webview)")
                Task {
                    do { _ = try await cdp.call("Network.disable", session: s, timeout: t) } catch {
                        debug("\(label): Network.disable: \(error)")
                    }
                }
            }
            if let failed = tab.failedLoad {
                tabs[key]?.failedLoad = nil
                let reason: String
                if let net = tab.netError {
                    reason = net
                } else {
                    // Not watched (a later load): the error page names the net error (`ERR_CONNECTION_REFUSED`, …).
                    let code = try? await cdp.call("Runtime.evaluate", [
                        "expression": "(document.querySelector('.error-code') || {}).textContent || ''", "returnByValue": true,
                    ], session: tab.cdpSession, timeout: t)
                    let name = code?["result"]?["value"]?.stringValue ?? ""
                    reason = name.hasPrefix("ERR_") ? "net::" + name : "the page could not be loaded (Chromium shows its error page)"
                }
                tabs[key]?.netError = nil
                emit(.loadFailed(session: tab.session, webview: tab.webview, url: failed, reason: reason))
                return
            }
            if tab.spareAfterLoad {
                tabs[key]?.spareAfterLoad = false
                // The session's spare first, then (after it) a context for the next session.
                if spares[tab.session] == nil, makingSpares[tab.session] == nil { makeSpare(session: tab.session) } else { makeFreeContext() }
            }
        default:
            break
        }
    }
}
