import BridgeBrowser
import BridgeProtocol
import Foundation

/// Browser sessions' settings (docs/BROWSER.md).
public struct BrowserConfiguration: Sendable {
    public var options = BrowserOptions()
    /// js-client/inject.js, the page client injected into every tab.
    public var injectTemplate = ""
    /// js-client/bridge.js, which the injected client carries as a classic script.
    public var bridgeJS = ""
    /// The profiles' page scripts (`ProfilePageScript.asset`, e.g. js-client/hotwire/hotwire.js),
    /// by asset name: injected after the client in their sessions' tabs.
    public var profileScripts: [String: String] = [:]
    /// An app's built web assets (`bridged open --web-dir`), served to the sessions whose profile
    /// has a `servedOrigin` at that origin (BrowserHost+WebDir.swift).
    public var webDirectory: String?
    /// Starts the browser: Chromium on its DevTools pipe. Tests put a fake Chromium here
    /// (BridgeTesting's `FakeChromium`), which plays Chromium's side of the DevTools protocol by script.
    public var launcher: BrowserLauncher = BrowserHost.chromium

    public init() {}
}

/// Lets a reference to the daemon travel to other threads, to be used only on the service
/// thread (through `remote.enqueue`).
struct ServiceThreadRef<T: AnyObject>: @unchecked Sendable {
    unowned let value: T
}

/// The daemon's side of browser sessions; lives on the service thread. Chromium is driven by a
/// `BrowserHost` (its own tasks and threads).
///
/// The glue is thin: the Bridge asks for work (`BridgeEffect.host(HostWork)`), `perform(_:)`
/// starts it on the host, and what the host did comes back to the service thread (through the
/// transport's remote) as a typed input, `BridgeInput.host(HostResult)`, fed like any other.
final class BrowserSide {
    let host: BrowserHost
    let configuration: BrowserConfiguration
    /// inject.js with bridge.js in it, cut at its configuration (made once).
    let injected: InjectedClient.Template
    var bridgeURL = ""
    var moduleURL = ""
    /// Why no Chromium could be started after the last one went away (`--devtools`), until one
    /// runs again; `/api/devtools` says it.
    var restartFailure: String?
    /// The lanes host work runs in (HostLanes.swift): the session's tab lifecycle, each web
    /// view's page work; in the host's runner.
    let lanes: HostLanes

    init(configuration: BrowserConfiguration, debug: @escaping @Sendable (String) -> Void = { _ in },
         events: @escaping @Sendable (BrowserEvent) -> Void) {
        self.configuration = configuration
        self.host = BrowserHost(options: configuration.options, launcher: configuration.launcher, debug: debug, events: events)
        self.lanes = HostLanes(runner: host.tasks)
        self.injected = InjectedClient.Template(template: configuration.injectTemplate,
                                                classicBridge: InjectedClient.classicBridge(configuration.bridgeJS))
    }

    func script(session: String, webview: ItemID, token: String, profile: SessionProfile = .plain, pageScript: Bool = true) -> String {
        let client = injected.script(bridgeURL: bridgeURL, moduleURL: moduleURL, session: session, webview: webview, token: token,
                                     astro: profile.astroShim)
        guard pageScript, let page = profile.pageScript else { return client }
        return client + "\n" + InjectedClient.profileScript(template: configuration.profileScripts[page.asset] ?? "", page)
    }
}

extension Daemon {
    var browserRef: ServiceThreadRef<Daemon> { ServiceThreadRef(value: self) }

    /// The browser side, made on first use (the first browser session).
    func browserSide() -> BrowserSide {
        if let b = browser { return b }
        let ref = browserRef
        let remote = self.remote
        let logger = self.logger
        let b = BrowserSide(configuration: configuration.browser, debug: { logger.debug("\($0)") }) { event in
            remote.enqueue { ref.value.browserEvent(event) }
        }
        let origin = configuration.transport.displayURL(port: port)
        b.bridgeURL = origin.replacingOccurrences(of: "http://", with: "ws://").replacingOccurrences(of: "https://", with: "wss://") + "/bridge"
        b.moduleURL = origin + "/bridge.js"
        browser = b
        return b
    }

    /// Runs `body` on the host's tasks (a job of its runner, started at once: host work no lane
    /// orders, such as a dialog's answer or a fetch); its result comes back to the service thread
    /// as an input.
    func onHost(_ body: @escaping @Sendable (BrowserHost) async -> HostResult?) {
        let host = browserSide().host
        let ref = browserRef
        let remote = self.remote
        host.tasks.run {
            guard let result = await body(host) else { return }
            remote.enqueue { ref.value.feed(.host(result)) }
        }
    }

    /// Opens a web view's tab in the session's lane (HostLanes): after the opens before it; a
    /// root's first makes the session's context (and serves its web directory, applies its
    /// shell's settings). A close of the session or of the web view meanwhile is seen after each
    /// host call: the open ends there (`closedWhileOpening`), a root's creator hears that there
    /// is no tab, and the close, which runs after it, disposes of what it made.
    /// With `kept`, the tab is the one kept for that closed web view (`HostWork.reuseTab`), handed
    /// to `webview` (a new one when it is gone).
    func openTab(_ b: BrowserSide, session: String, webview: ItemID, url: String, token: String, post: NavigationStop?, root: Bool,
                 kept: ItemID? = nil) {
        let profile = bridge.sessionProfile(session) ?? .plain
        let script = b.script(session: session, webview: webview, token: token, profile: profile,
                              pageScript: bridge.injectsProfileScript(session: session, webview: webview))
        let tabUserAgent = profile.userAgent
        let loadable = url.hasPrefix("http://") || url.hasPrefix("https://")
        let target = root ? (url.isEmpty ? "about:blank" : url) : (loadable ? url : "about:blank")
        let request = post.map(Self.navigationRequest)
        let logger = self.logger
        let shell = root ? (bridge.shellSettings(session: session) ?? ShellSettings()) : nil
        let web: WebDirectory? = root ? profile.servedOrigin.flatMap { origin in
            b.configuration.webDirectory.map { WebDirectory(origin: origin, directory: $0) }
        } : nil
        let host = b.host, ref = browserRef, remote = self.remote
        b.lanes.open(session: session, webview: webview) { cancelled in
            func stillWanted() throws {
                if cancelled.now { throw BrowserError.closedWhileOpening("\(session) \(webview)") }
            }
            let result: HostResult?
            do {
                try stillWanted()
                if root {
                    if let web { await host.serve(session: session, web) }
                    try stillWanted()
                    try await host.createSession(session)
                    try stillWanted()
                    await host.applyShellSettings(session: session, shell ?? ShellSettings())
                    try stillWanted()
                }
                let targetId = if let kept {
                    try await host.reuseTab(session: session, webview: webview, kept: kept, url: target, script: script, token: token,
                                            userAgent: tabUserAgent)
                } else {
                    try await host.openTab(session: session, webview: webview, url: target, script: script, post: request, root: root,
                                           userAgent: tabUserAgent)
                }
                try stillWanted()
                let contextId = await host.browserContextId(session: session) ?? ""
                result = .tabOpened(session: session, webview: webview, targetId: targetId, browserContextId: contextId)
            } catch let error where cancelled.now || error.isClosedWhileOpening {
                // The web view went (its modal dismissed, say) or the session did before its tab
                // was there: the close after this job disposes of what it made. A root's creator
                // still waits for its tab: it hears that there is none.
                result = root ? .tabFailed(session: session, webview: webview, url: url, reason: "the session was closed before its tab opened") : nil
            } catch {
                let reason: String
                if case BrowserError.loadFailed(_, let why) = error { reason = why } else { reason = "\(error)" }
                if root {
                    await host.closeSession(session)
                    remote.enqueue { ref.value.rootTabFailed(session: session, reason: reason) }
                }
                logger.warning("\(session) \(webview): the tab cannot show \(url): \(reason)")
                result = .tabFailed(session: session, webview: webview, url: url, reason: reason)
            }
            guard let result else { return }
            remote.enqueue { ref.value.feed(.host(result)) }
        }
    }

    /// Closes a tab in the session's lane, after the opens and fronts before it, beside its other
    /// closes; its open, if not done, is cancelled (HostLanes).
    func closeTab(_ b: BrowserSide, session: String, webview: ItemID) {
        let host = b.host
        b.lanes.close(session: session, webview: webview) { await host.closeTab(session: session, webview: webview) }
    }

    /// Brings a web view's tab to the front, in the session's lane: after its opens, closes and
    /// fronts asked before, unless a tab is opened or another front is asked for first (HostLanes).
    func showTab(_ b: BrowserSide, session: String, webview: ItemID) {
        let host = b.host, logger = self.logger
        b.lanes.front(session: session) { dropped in
            guard !dropped else {
                logger.debug("\(session) \(webview): not brought to the front (another tab came forward since)")
                return
            }
            do {
                try await host.bringToFront(session: session, webview: webview)
            } catch BrowserError.unknownTarget {
                // Its tab did not open (the opens before the front are done), or it is gone.
                logger.debug("\(session) \(webview): no tab to bring to the front")
            } catch {
                // Nothing else to do: the tab stays where it is (behind, not drawing).
                logger.warning("\(session) \(webview): the tab cannot be brought to the front: \(error)")
            }
        }
    }

    /// Shows or removes a web view's overlay, in its page lane (HostLanes). A change that fails
    /// (the tab is gone, the page is navigating) is a debug line, not retried: the next page has
    /// no overlay, and the Bridge's state says what it shows.
    func changeOverlay(_ b: BrowserSide, session: String, webview: ItemID, expression: String) {
        let host = b.host, logger = self.logger
        b.lanes.change(session: session, webview: webview) {
            do {
                _ = try await host.evaluate(session: session, webview: webview, expression: expression)
            } catch {
                logger.debug("\(session) \(webview): its overlay was not changed: \(error)")
            }
        }
    }

    /// A look at a web view's page (snapshot, screenshot, evaluate, click, type), in its page
    /// lane: after the overlay changes asked before it (HostLanes). Its results come back to the
    /// service thread as inputs, in order.
    func look(_ b: BrowserSide, session: String, webview: ItemID, _ body: @escaping @Sendable (BrowserHost) async -> [HostResult]) {
        let host = b.host, ref = browserRef, remote = self.remote
        b.lanes.look(session: session, webview: webview) {
            let results = await body(host)
            guard !results.isEmpty else { return }
            remote.enqueue { for result in results { ref.value.feed(.host(result)) } }
        }
    }

    /// A `BridgeEffect.host`: starts the work on the browser.
    func performHost(_ work: HostWork) {
        let b = browserSide()
        switch work {
        case .openTab(let session, let webview, let url, let token, let post, let root):
            openTab(b, session: session, webview: webview, url: url, token: token, post: post, root: root)
        case .closeTab(let session, let webview):
            closeTab(b, session: session, webview: webview)
        case .keepTab(let session, let webview):
            // Nothing for the browser: the tab stays as it is until a web view reuses it (or the
            // session closes); the closed web view's page work not started is dropped.
            b.lanes.keep(session: session, webview: webview)
        case .reuseTab(let session, let webview, let kept, let url, let token):
            openTab(b, session: session, webview: webview, url: url, token: token, post: nil, root: false, kept: kept)
        case .closeSession(let session):
            // At once: the session's lanes are cancelled (an open under way sees it after its
            // current host call); the close runs after the jobs under way (HostLanes).
            let host = b.host
            b.lanes.closeSession(session) { await host.closeSession(session) }
        case .takeSnapshot(let session, let webview):
            let logger = self.logger
            look(b, session: session, webview: webview) { host in
                do {
                    return [.snapshotTaken(session: session, webview: webview, image: try await host.screenshot(session: session, webview: webview))]
                } catch {
                    // The placeholder has no image (its page still goes on).
                    logger.debug("\(session) \(webview): no snapshot: \(error)")
                    return [.snapshotTaken(session: session, webview: webview, image: nil)]
                }
            }
        case .showOverlay(let session, let webview, let image):
            let css = image.map { "url(data:image/jpeg;base64,\(Data($0).base64EncodedString()))" } ?? "none"
            let expression = """
                (() => { let d = document.getElementById("__bridged_foreground");
                  if (!d) { d = document.createElement("div"); d.id = "__bridged_foreground"; }
                  d.style.cssText = "position:fixed;left:0;top:0;width:100vw;height:100vh;z-index:2147483647;background:#fff center/cover no-repeat;pointer-events:none";
                  d.style.backgroundImage = \(JSONValue.string(css).jsonString);
                  document.documentElement.appendChild(d); return true; })()
                """
            changeOverlay(b, session: session, webview: webview, expression: expression)
        case .showTab(let session, let webview):
            showTab(b, session: session, webview: webview)
        case .removeOverlay(let session, let webview):
            changeOverlay(b, session: session, webview: webview, expression: "document.getElementById(\"__bridged_foreground\")?.remove(); true")
        case .evaluate(let request, let session, let webview, let expression):
            look(b, session: session, webview: webview) { host in
                await Self.pageAnswer(request, session: session, webview: webview) { .value(try await host.evaluate(session: session, webview: webview, expression: expression)) }
            }
        case .click(let request, let session, let webview, let selector):
            look(b, session: session, webview: webview) { host in
                await Self.pageAnswer(request, session: session, webview: webview) {
                    try await host.click(session: session, webview: webview, selector: selector)
                    return .done
                }
            }
        case .type(let request, let session, let webview, let selector, let text):
            look(b, session: session, webview: webview) { host in
                await Self.pageAnswer(request, session: session, webview: webview) {
                    try await host.type(session: session, webview: webview, selector: selector, text: text)
                    return .done
                }
            }
        case .shell(let work):
            performShell(work)
        case .screenshot(let request, let session, let target):
            look(b, session: session, webview: target) { host in
                [await Self.answer(request, session: session, target: target) { .image(try await host.screenshot(session: session, webview: target)) }]
            }
        case .fetchPathConfiguration(let session, let webview, let url):
            let options = b.configuration.options
            let logger = self.logger
            onHost { host in
                let fetched = await host.fetchJSON(session: session, webview: webview, url: url, maxBytes: options.pathConfigurationMaxBytes,
                                                   timeoutSeconds: options.pathConfigurationTimeoutSeconds)
                if case .failed(let why) = fetched { logger.warning("\(session): the path configuration \(url) cannot be used: \(why)") }
                return .pathConfigurationFetched(session: session, url: url, fetched)
            }
        case .readHistory(let session, let webview):
            // A look at the page's tab (after the overlay changes asked before it).
            look(b, session: session, webview: webview) { host in
                [.historyRead(session: session, webview: webview, canGoBack: await host.canGoBack(session: session, webview: webview))]
            }
        case .goBackInHistory(let session, let webview):
            let host = b.host, logger = self.logger
            b.lanes.change(session: session, webview: webview) {
                do {
                    try await host.goBackInHistory(session: session, webview: webview)
                } catch {
                    logger.debug("\(session) \(webview): did not go back in its history: \(error)")
                }
            }
        case .loadURL(let session, let webview, let url):
            let host = b.host, logger = self.logger
            b.lanes.change(session: session, webview: webview) {
                do {
                    try await host.load(session: session, webview: webview, url: url)
                } catch {
                    logger.warning("\(session) \(webview): \(url) was not loaded: \(error)")
                }
            }
        }
    }

    /// The answer to a request that runs in `webview`'s page (`evaluate`, `click`, `type`), and
    /// whether the page answers at all: a call the page did not answer in time is
    /// `page-unresponsive` and the web view is reported unresponsive; an answer reports it
    /// answering again.
    static func pageAnswer(_ request: HostRequest, session: String, webview: ItemID, _ body: () async throws -> HostAnswer) async -> [HostResult] {
        do {
            let answer = try await body()
            return [.shell(.unresponsive(session: session, webview: webview, false)), .answered(request, answer)]
        } catch BrowserError.timeout(let method) {
            return [.shell(.unresponsive(session: session, webview: webview, true)),
                    .answered(request, .unresponsive("\(webview) of session \(session) did not answer \(method) in time: its page is busy (a long or endless script) or blocked"))]
        } catch {
            return [await answer(request, session: session, target: webview) { throw error }]
        }
    }

    /// A `HostWork.shell`: the shell's answers (ShellTypes.swift). A dialog's answer goes at
    /// once, past the web view's overlay changes (which wait for the page the dialog blocks).
    func performShell(_ work: ShellWork) {
        switch work {
        case .answerDialog(let session, let webview, let accept, let text):
            onHost { host in
                await host.answerDialog(session: session, webview: webview, accept: accept, text: text)
                return nil
            }
        case .reload(let request, let session, let webview, let url):
            onHost { host in
                await Self.answer(request, session: session, target: webview) {
                    try await host.reload(session: session, webview: webview, url: url)
                    return .done
                }
            }
        case .setFiles(let request, let session, let webview, let files):
            onHost { host in
                await Self.answer(request, session: session, target: webview) {
                    try await host.setFiles(session: session, webview: webview, files: files)
                    return .done
                }
            }
        case .setGeolocation(let request, let session, let position):
            onHost { host in
                await Self.answer(request, session: session, target: .webview(1)) {
                    try await host.setGeolocation(session: session, position)
                    return .done
                }
            }
        }
    }

    /// The answer to `request`: `body`'s, or the browser's error in words for controllers.
    static func answer(_ request: HostRequest, session: String, target: ItemID, _ body: () async throws -> HostAnswer) async -> HostResult {
        do {
            return .answered(request, try await body())
        } catch BrowserError.unknownTarget {
            return .answered(request, .failed("\(target) of session \(session) has no tab (it is a native screen, or its tab is gone)"))
        } catch {
            return .answered(request, .failed("\(error)"))
        }
    }

    static func navigationRequest(_ stop: NavigationStop) -> NavigationRequest {
        var headers: [String: String] = [:]
        for h in stop.headers { headers[h.name] = h.value }
        let kind: NavigationRequest.Kind = switch stop.disposition {
        case .document: .document
        case .windowOpen: .windowOpen
        case .customScheme: .customScheme
        }
        return NavigationRequest(url: stop.url, method: stop.method, postData: stop.body, headers: headers, kind: kind)
    }

    static func navigationStop(session: String, webview: ItemID, _ request: NavigationRequest) -> NavigationStop {
        let disposition: NavigationDisposition = switch request.kind {
        case .document: .document
        case .windowOpen: .windowOpen
        case .customScheme: .customScheme
        }
        return NavigationStop(session: session, webview: webview, url: request.url, method: request.method, body: request.postData,
                              headers: request.headers.map { NavigationStop.Header($0.key, $0.value) }, disposition: disposition)
    }

    /// What Chromium reported by itself, on the service thread.
    func browserEvent(_ event: BrowserEvent) {
        switch event {
        case .navigationRequested(let session, let webview, let request):
            feed(.host(.navigationStopped(Self.navigationStop(session: session, webview: webview, request))))
        case .historyBack(let session, let webview):
            feed(.host(.historyTraversed(session: session, webview: webview)))
        case .urlChanged(let session, let webview, let url):
            feed(.host(.urlChanged(session: session, webview: webview, url: url)))
        case .loadFailed(let session, let webview, let url, let reason):
            logger.warning("\(session) \(webview): the tab cannot show \(url): \(reason)")
            feed(.host(.tabFailed(session: session, webview: webview, url: url, reason: reason)))
        case .shell(let shell):
            switch shell {
            case .crashed(let session, let webview, let reason):
                logger.warning("\(session) \(webview): \(reason)")
            case .unresponsive(let session, let webview, true):
                logger.warning("\(session) \(webview): its page does not answer (busy or blocked)")
            case .dialogOpened(let session, let webview, let dialog):
                logger.info("\(session) \(webview): \(dialog.type.rawValue)(\(dialog.message.prefix(80).debugDescription))")
            default:
                break
            }
            feed(.host(.shell(shell)))
        case .browserCrashed(let sessions):
            logger.error("Chromium went away; the pages of \(sessions.count) browser session(s) are disconnected")
            browser?.restartFailure = nil
            feed(.host(.browserCrashed(sessions: sessions)))
        case .warning(let line):
            logger.warning("\(line)")
        case .restartFailed(let reason):
            logger.error("Chromium could not be started again after it went away: \(reason); there is no DevTools url (GET /api/devtools answers 503) until the next browser session starts one")
            browser?.restartFailure = reason
        }
    }

    /// The root tab of a browser session could not open: the session is gone. When it was the
    /// daemon's own (`bridged open`), its owner hears it (`onOpenFailure`).
    func rootTabFailed(session: String, reason: String) {
        guard ownSessions.remove(session) != nil else { return }
        onOpenFailure?(session, reason)
    }

    /// `GET /api/sessions/SESSION/placeholders/Pn.jpg`.
    func browserHTTP(path: String) -> HTTPResponse? {
        guard path.hasPrefix("/api/sessions/"), path.hasSuffix(".jpg") else { return nil }
        let parts = path.split(separator: "/")
        guard parts.count == 5, parts[3] == "placeholders" else { return nil }
        let session = String(parts[2])
        // The name from the url is the only text parsed here; a name that is no placeholder id
        // (`W1.jpg`, `x.jpg`) is answered as a snapshot that does not exist.
        guard let placeholder = ItemID(parsing: String(parts[4].dropLast(4))), placeholder.kind == .placeholder,
              let jpeg = bridge.snapshot(session: session, placeholder: placeholder) else {
            return HTTPResponse(status: 404, contentType: "application/json",
                                body: Array(#"{"error":{"code":"not-found","message":"no such snapshot"}}"#.utf8))
        }
        return HTTPResponse(status: 200, contentType: "image/jpeg", body: jpeg)
    }

    /// Closes every tab and context and stops Chromium; returns once it is gone.
    public func shutdownBrowser() {
        guard let b = browser else { return }
        let host = b.host
        let done = DispatchSemaphore(value: 0)
        host.tasks.run {
            await host.shutdown()
            done.signal()
        }
        done.wait()
    }
}

extension Daemon {
    /// Starts a browser session on `url` as if a controller had sent
    /// `session.create {url, browser: true}` (`bridged open`). Call on the service thread
    /// (e.g. from `onStart`). When the Bridge refuses (a url over `--max-url-bytes`, the
    /// `--max-sessions` limit, a bad profile), nothing opens: the refusal is logged and thrown.
    /// Returns the new session's id.
    @discardableResult
    public func openBrowserSession(url: String, profile: SessionProfile = .plain, params: JSONObject = JSONObject()) throws(ProtocolError) -> String {
        let t = now
        let before = Set(bridge.sessionIDs)
        let refusal: ProtocolError?
        do {
            try bridge.openBrowserSession(url: url, profile: profile, params: params, at: t)
            refusal = nil
        } catch {
            refusal = error
        }
        if recorder != nil { recordInput(.openBrowserSession(url: url, profile: profile, params: params), at: t) }
        perform()
        if let refusal {
            logger.error("cannot open \(url) in a browser session: \(refusal.message)")
            throw refusal
        }
        let sid = bridge.sessionIDs.first { !before.contains($0) } ?? ""
        ownSessions.insert(sid)
        return sid
    }
}

private extension Error {
    /// A tab whose web view or session was closed before it opened (BrowserHost+Tabs.swift).
    var isClosedWhileOpening: Bool {
        guard let error = self as? BrowserError, case .closedWhileOpening = error else { return false }
        return true
    }
}
