import BridgeProtocol
import Foundation

/// Sessions (a browser context each) and their tabs: opened, dressed, loaded, closed.
extension BrowserHost {
    /// A new browser context for `session` (idempotent); returns Chromium's id of it
    /// (`browserContextId`, which a DevTools client such as Playwright sees).
    @discardableResult
    public func createSession(_ session: String) async throws -> BrowserContextID {
        // (Not ordered against a close of the session here: the caller orders its host work, the
        // daemon in its session lane, HostLanes.)
        let b = try await ensureBrowser()
        if let id = machine.contexts[session] { return id }
        // The context made ahead, with its spare tab for the root (one being made is waited for:
        // it started earlier than a new one would).
        if options.spareTabs {
            if freeContext == nil, let making = makingFreeContext { await making.wait() }
            if let id = machine.contexts[session] { return id }
            if let free = freeContext, browser?.generation == b.generation {
                freeContext = nil
                machine.contexts[session] = free.id
                spares[session] = free.spare
                return free.id
            }
        }
        let reply = try await b.cdp.call(.createBrowserContext, timeout: options.callTimeoutSeconds)
        guard let id = reply["browserContextId"]?.stringValue.map(BrowserContextID.init(_:)) else { throw BrowserError.browser("no browserContextId") }
        machine.contexts[session] = id
        return id
    }

    /// Chromium's id of the browser context of `session`, when it has one.
    public func browserContextId(session: String) -> BrowserContextID? { machine.contexts[session] }

    /// Chromium's target id of the tab of `webview` (what `Target.getTargetInfo` on a DevTools
    /// session of that page answers), when it has one.
    public func targetId(session: String, webview: ItemID) -> TargetID? { machine.tabs[TabKey(session, webview)]?.targetId }

    /// Closes every tab of `session` and its context (its cookies and storage go with it).
    public func closeSession(_ session: String) async {
        machine.fronts[session] = nil
        guard let context = machine.contexts.removeValue(forKey: session), let b = browser else { return }
        for key in machine.tabs.keys where key.session == session {
            machine.forget(key)
            clients[key] = nil
        }
        // Disposing of the context closes its spare too (one being made closes itself: its
        // session is gone when its calls come back).
        spares[session] = nil
        sessionUserAgents[session] = nil
        machine.webDirectories[session] = nil
        geolocations[session] = nil
        _ = try? await b.cdp.call(.disposeBrowserContext(context), timeout: options.callTimeoutSeconds)
    }

    public func hasTab(session: String, webview: ItemID) -> Bool { machine.tabs[TabKey(session, webview)] != nil }

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
    /// The host does not order its work against itself: a close of the web view (or of its
    /// session) must come after this returns, as the daemon's session lane has it (HostLanes),
    /// and closes what it made.
    @discardableResult
    public func openTab(session: String, webview: ItemID, url: String, script: String?, post: NavigationRequest? = nil, root: Bool = false,
                        userAgent: (@Sendable (String) -> String)? = nil) async throws -> TargetID {
        machine.lastTabActivity = DispatchTime.now().uptimeNanoseconds
        return try await openTabNow(session: session, webview: webview, url: url, script: script, post: post, root: root, userAgent: userAgent)
    }

    private func openTabNow(session: String, webview: ItemID, url: String, script: String?, post: NavigationRequest?, root: Bool,
                            userAgent: (@Sendable (String) -> String)?) async throws -> TargetID {
        let b = try await ensureBrowser()
        guard let context = machine.contexts[session] else { throw BrowserError.unknownTarget("session \(session)") }
        let key = TabKey(session, webview)
        if machine.tabs[key] != nil { throw BrowserError.browser("web view \(webview) already has a tab") }
        let tabUserAgent = userAgent?(b.baseUserAgent) ?? b.userAgent
        sessionUserAgents[session] = tabUserAgent
        let t = options.callTimeoutSeconds
        // The session's spare tab, when it has one (a root's: its context was made ahead).
        guard let spare = await takeSpare(session: session, context: context) else {
            return try await openNewTab(b, key: key, context: context, url: url, script: script, post: post, root: root, userAgent: tabUserAgent)
        }
        guard machine.tabs[key] == nil else {
            // Another open of the same web view came first (while the spare was being made).
            _ = try? await b.cdp.call(.closeTarget(spare.targetId), timeout: t)
            throw BrowserError.browser("web view \(webview) already has a tab")
        }
        register(Tab(session: session, webview: webview, targetId: spare.targetId, cdpSession: spare.cdpSession), url: url, post: post)
        let s = spare.cdpSession
        // The injected client and the load start together: the client is sent first, so
        // Chromium hands it to the spare's renderer before the load begins (once a load has
        // begun, calls for the renderer wait until its document commits). A fetched url's
        // document request waits at the interception until the client is in place
        // (`clientPending`), so the page's first document runs it; an unfetched one (data:)
        // waits for it here.
        let client = script.map { b.cdp.start(.addScript($0), session: s, timeout: t) }
        // In front, as a new tab opens (the spare was made in the background).
        let front = b.cdp.start(.bringToFront, session: s, timeout: t)
        if machine.contexts[session] != nil { machine.fronts[session] = key }
        do {
            if machine.webDirectories[session] != nil {
                // The spare was dressed before its session was known: its interception takes the
                // session's web directory too (else the app's own files would not be served).
                _ = try await b.cdp.call(DevToolsCall(.fetchEnable, ["patterns": .array(fetchPatterns(session: session))]), session: s, timeout: t)
            }
            if spare.userAgent != tabUserAgent {
                // Before the load: its document request carries it.
                _ = try await b.cdp.call(userAgentCall(tabUserAgent), session: s, timeout: t)
            }
            if let client {
                if machine.tabs[key]?.ownLoadPending == true {
                    machine.tabs[key]?.clientPending = true
                    clients[key] = client
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
        // The client could not be added (its document request was failed, not let through):
        // the spare is not there any more.
        var clientFailed = false
        if let client { clientFailed = (try? await client.value) == nil }
        // Settled: the tab's later document requests pass as any tab's.
        machine.tabs[key]?.clientPending = false
        clients[key] = nil
        if clientFailed {
            return try await replaceDeadSpare(b, key: key, context: context, url: url, script: script, post: post, root: root, userAgent: tabUserAgent)
        }
        if let client, let added = try? await client.value { machine.tabs[key]?.scriptIdentifier = added["identifier"]?.stringValue }
        if let loadError {
            await closeTabNow(session: session, webview: webview)
            throw loadError
        }
        // A failed `Page.bringToFront` alone does not make the spare dead: its page loads and
        // runs; the next screenshot or back brings a tab forward again.
        if (try? await front.value) == nil { debug("\(session) \(webview): its tab was not brought to front") }
        return spare.targetId
    }

    /// The spare taken for `key` is not there any more (its renderer died, say): a new tab
    /// instead.
    private func replaceDeadSpare(_ b: Browser, key: TabKey, context: BrowserContextID, url: String, script: String?, post: NavigationRequest?,
                                  root: Bool, userAgent: String) async throws -> TargetID {
        await closeTabNow(session: key.session, webview: key.webview)
        return try await openNewTab(b, key: key, context: context, url: url, script: script, post: post, root: root, userAgent: userAgent)
    }

    func userAgentCall(_ userAgent: String) -> DevToolsCall {
        var params: JSONObject = ["userAgent": .string(userAgent)]
        if options.isPhone { params["userAgentMetadata"] = BrowserOptions.phoneClientHints(userAgent: userAgent) }
        return DevToolsCall(.emulationSetUserAgentOverride, params)
    }

    /// At most this many navigations decided early wait for their request per tab (see
    /// `TabMachine.decidedNavigationsLimit`).
    public static let decidedNavigationsLimit = TabMachine.decidedNavigationsLimit

    /// The tab's state and its lookups, before its first call: its events are routed to it.
    private func register(_ tab: Tab, url: String, post: NavigationRequest?) {
        machine.register(tab, url: url, post: post)
        if let g = geolocations[tab.session], let cdp = browser?.cdp {
            _ = cdp.start(Self.geolocationCall(g), session: tab.cdpSession, timeout: options.callTimeoutSeconds)
        }
    }

    /// The calls that dress a new tab as the app's web view (sent at once; each answered by the
    /// tab's renderer once it runs), then its injected client (`script`).
    func dress(_ b: Browser, cdpSession s: CDPSessionID, userAgent: String, script: String?) async throws {
        let t = options.callTimeoutSeconds
        async let page = b.cdp.call(.pageEnable, session: s, timeout: t)
        async let fetch = b.cdp.call(DevToolsCall(.fetchEnable, ["patterns": .array(fetchPatterns(session: machine.tabsByCDPSession[s]?.session))]),
                                     session: s, timeout: t)
        async let ua = b.cdp.call(userAgentCall(userAgent), session: s, timeout: t)
        async let metrics = b.cdp.call(DevToolsCall(.emulationSetDeviceMetricsOverride, [
            "width": .int(Int64(options.viewportWidth)), "height": .int(Int64(options.viewportHeight)),
            "deviceScaleFactor": 1, "mobile": true,
        ]), session: s, timeout: t)
        async let touch = b.cdp.call(DevToolsCall(.emulationSetTouchEmulationEnabled, ["enabled": true, "maxTouchPoints": 5]), session: s, timeout: t)
        async let sw = b.cdp.call(DevToolsCall(.networkSetBypassServiceWorker, ["bypass": true]), session: s, timeout: t)
        async let lifecycle = b.cdp.call(DevToolsCall(.pageSetLifecycleEventsEnabled, ["enabled": true]), session: s, timeout: t)
        // A file chooser is the app's to answer (`webview.fileChooser`), never a window.
        async let chooser = b.cdp.call(DevToolsCall(.pageSetInterceptFileChooserDialog, ["enabled": true]), session: s, timeout: t)
        _ = try await (page, fetch, ua, metrics, touch, sw, lifecycle, chooser)
        // `script` runs before every document's own, from the next document on (and in the
        // current one, which skips it unless it has an http(s) origin).
        if let script {
            let added = try await b.cdp.call(.addScript(script), session: s, timeout: t)
            if let key = machine.tabsByCDPSession[s] { machine.tabs[key]?.scriptIdentifier = added["identifier"]?.stringValue }
        }
    }

    /// A new tab in `context`, dressed, loading `url`.
    private func openNewTab(_ b: Browser, key: TabKey, context: BrowserContextID, url: String, script: String?, post: NavigationRequest?,
                            root: Bool, userAgent: String) async throws -> TargetID {
        let t = options.callTimeoutSeconds
        let created = try await b.cdp.call(.createTarget(context: context), timeout: t)
        guard let targetId = created["targetId"]?.stringValue.map(TargetID.init(_:)) else { throw BrowserError.browser("no targetId") }
        let attached = try await b.cdp.call(.attachToTarget(targetId), timeout: t)
        guard let cdpSession = attached["sessionId"]?.stringValue.map(CDPSessionID.init(_:)) else { throw BrowserError.browser("no sessionId") }
        register(Tab(session: key.session, webview: key.webview, targetId: targetId, cdpSession: cdpSession), url: url, post: post)
        // (Created in the foreground.)
        if machine.contexts[key.session] != nil { machine.fronts[key.session] = key }
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
    private func load(_ b: Browser, cdpSession s: CDPSessionID, url: String, root: Bool) async throws {
        let t = options.callTimeoutSeconds
        if root {
            // Why the root's page fails to load, if it does, is Network.loadingFailed's
            // `errorText` (location.replace reports none): the Network domain is on for that
            // load only (its events cost a JSON message per request event of the page).
            if TabMachine.isNetwork(url) {
                if let key = machine.tabsByCDPSession[s] { machine.tabs[key]?.watchingNetwork = true }
                _ = try await b.cdp.call(.networkEnable, session: s, timeout: t)
            }
            // The page replaces the `about:blank` entry: nothing is below the root, so its own
            // `history.back()` at its first entry does nothing, as the host's back does on a
            // stack of one.
            let replaced = try await b.cdp.call(.evaluate("location.replace(\(JSONValue.string(url).jsonString)); true"), session: s, timeout: t)
            if let details = replaced["exceptionDetails"] {
                throw BrowserError.loadFailed(url: url, reason: details["exception"]?["description"]?.stringValue ?? "cannot be loaded")
            }
        } else {
            let nav = try await b.cdp.call(.navigate(url), session: s, timeout: t)
            // Aborted: no document came (a download, which the shell reports, or a 204): the tab
            // stays as it was, as a native web view does.
            if let error = nav["errorText"]?.stringValue, !error.isEmpty, error != "net::ERR_ABORTED" {
                throw BrowserError.loadFailed(url: url, reason: error)
            }
        }
    }

    /// `openTab` for `webview` made of the tab of `kept`, a web view that closed while its tab
    /// was kept (`HostWork.keepTab`): the tab becomes `webview`'s (`TabMachine.handOver`), its
    /// injected client for later documents is `script` (the old one, which claims `kept`, is
    /// removed), it comes to the front, and its page's client claims `webview` with `token`
    /// (`InjectedClient.reclaimExpression`): the document and its scripts' state stay, as a
    /// native app's web view does between two screens. A page with no client to claim (it
    /// navigated away from the app, say) has the tab load `url`, whose document's client
    /// claims. When `kept` has no tab any more (it failed, or never opened) or a call fails, the
    /// kept tab is closed and `webview` gets a new tab as `openTab` makes it.
    @discardableResult
    public func reuseTab(session: String, webview: ItemID, kept: ItemID, url: String, script: String?, token: String,
                         userAgent: (@Sendable (String) -> String)? = nil) async throws -> TargetID {
        let old = TabKey(session, kept), key = TabKey(session, webview)
        if machine.tabs[key] != nil { throw BrowserError.browser("web view \(webview) already has a tab") }
        machine.lastTabActivity = DispatchTime.now().uptimeNanoseconds
        if let b = browser, let tab = machine.handOver(old, to: key) {
            clients[old] = nil
            let t = options.callTimeoutSeconds, s = tab.cdpSession
            do {
                if let id = tab.scriptIdentifier { _ = try await b.cdp.call(.removeScript(id), session: s, timeout: t) }
                machine.tabs[key]?.scriptIdentifier = nil
                if let script {
                    // (It runs in the current document too, where the client already there keeps it out.)
                    let added = try await b.cdp.call(.addScript(script), session: s, timeout: t)
                    machine.tabs[key]?.scriptIdentifier = added["identifier"]?.stringValue
                }
                try await bringToFront(session: session, webview: webview)
                let claimed = try await evaluate(session: session, webview: webview,
                                                 expression: InjectedClient.reclaimExpression(session: session, webview: webview, token: token))
                if claimed != .bool(true) {
                    debug("\(session) \(webview): the kept tab of \(kept) has no page client to claim it; it loads \(url)")
                    try await load(session: session, webview: webview, url: url)
                }
                return tab.targetId
            } catch {
                debug("\(session) \(webview): the kept tab of \(kept) cannot be reused (\(error)); a new tab instead")
                await closeTabNow(session: session, webview: webview)
            }
        } else if machine.tabs[old] != nil {
            await closeTabNow(session: session, webview: kept)
        }
        return try await openTab(session: session, webview: webview, url: url, script: script, userAgent: userAgent)
    }

    /// Closes the tab of `webview` (nothing when it has none).
    public func closeTab(session: String, webview: ItemID) async {
        await closeTabNow(session: session, webview: webview)
    }

    func closeTabNow(session: String, webview: ItemID) async {
        let key = TabKey(session, webview)
        clients[key] = nil
        // The machine decides (`TabMachine.closeTab`): the close, then what comes forward once
        // it is answered, and the close sent again until Chromium reports the tab destroyed.
        let commands = machine.closeTab(key, spareRight: spares[session] != nil || makingSpares[session] != nil)
        guard let b = browser else { return }
        await perform(commands, b)
    }
}
