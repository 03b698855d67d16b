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
    /// Most bytes of placeholder snapshots kept per session; the oldest go first beyond it.
    public var snapshotBytesPerSession = 8 << 20

    public init() {}
}

/// Lets a reference to the daemon travel to other threads, to be used only on the service
/// thread (through `remote.enqueue`).
struct ServiceThreadRef<T: AnyObject>: @unchecked Sendable {
    unowned let value: T
}

/// The daemon's side of browser sessions; lives on the service thread. Chromium is driven by a
/// `BrowserHost` (its own tasks and threads); what it reports comes back here through the
/// transport's remote.
///
/// Inside the protocol state machine the browser is one more controller (a connection with no
/// socket, `hostClient`) that handles `webview.open` for the browser sessions it subscribes to:
/// their new web views become tabs, popped ones close theirs.
final class BrowserSide {
    static let hostClient = ClientID(UInt64.max)
    let host: BrowserHost
    let configuration: BrowserConfiguration
    let classicBridge: String
    var hostHello = false
    /// Pages of browser sessions, by connection: the web view each speaks for.
    var pages: [ClientID: TabKey] = [:]
    /// Connections whose request waits for the browser: their later frames wait too, and so do
    /// the frames sent to them, so that replies keep their order and come before their events.
    var heldIn: [ClientID: [[UInt8]]] = [:]
    var heldOut: [ClientID: [[UInt8]]] = [:]
    /// A page's pwa-navigate whose snapshot is taken: it is let through once, untouched.
    var snapshotTaken: Set<ClientID> = []
    /// Snapshots by session, oldest first.
    var snapshots: [String: [(placeholder: ItemID, jpeg: [UInt8])]] = [:]
    /// The image of the placeholder a back-swap discarded last, per session (shown over the tab).
    var discarded: [String: [UInt8]] = [:]
    /// POSTs that became a new web view: session → url → the request, replayed by its tab.
    var posts: [String: [String: NavigationRequest]] = [:]
    /// A navigation stopped in a tab before its page's client connected (a meta refresh of 0 s,
    /// a script that leaves at once): the web view → the latest one, handed to the page's
    /// `navigate` path when it claims its web view.
    var waitingNavigations: [TabKey: NavigationRequest] = [:]
    var bridgeURL = ""
    var moduleURL = ""

    init(configuration: BrowserConfiguration, events: @escaping @Sendable (BrowserEvent) -> Void) {
        self.configuration = configuration
        self.host = BrowserHost(options: configuration.options, events: events)
        self.classicBridge = InjectedClient.classicBridge(configuration.bridgeJS)
    }

    func script(session: String, webview: ItemID, token: String) -> String {
        InjectedClient.script(template: configuration.injectTemplate, classicBridge: classicBridge, bridgeURL: bridgeURL,
                              moduleURL: moduleURL, session: session, webview: webview, token: token)
    }

    func store(_ jpeg: [UInt8], placeholder: ItemID, session: String) {
        var list = snapshots[session] ?? []
        list.removeAll { $0.placeholder == placeholder }
        list.append((placeholder, jpeg))
        var total = list.reduce(0) { $0 + $1.jpeg.count }
        while total > configuration.snapshotBytesPerSession, !list.isEmpty {
            total -= list.removeFirst().jpeg.count
        }
        snapshots[session] = list
    }

    func snapshot(session: String, placeholder: ItemID) -> [UInt8]? {
        snapshots[session]?.first { $0.placeholder == placeholder }?.jpeg
    }
}

extension Daemon {
    var browserRef: ServiceThreadRef<Daemon> { ServiceThreadRef(value: self) }

    /// The browser side, made on first use (the first browser session).
    func browserSide() -> BrowserSide {
        if let b = browser { return b }
        let ref = browserRef
        let remote = self.remote
        let b = BrowserSide(configuration: configuration.browser) { event in
            remote.enqueue { ref.value.browserEvent(event) }
        }
        let origin = configuration.transport.displayURL(port: port)
        b.bridgeURL = origin.replacingOccurrences(of: "http://", with: "ws://").replacingOccurrences(of: "https://", with: "wss://") + "/bridge"
        b.moduleURL = origin + "/bridge.js"
        browser = b
        return b
    }

    /// Feeds one frame of the browser's own controller connection to the state machine.
    func hostSend(_ b: BrowserSide, _ frame: JSONValue) {
        if !b.hostHello {
            b.hostHello = true
            feedConnect(BrowserSide.hostClient, loopback: true)
            var params: JSONObject = ["protocol": 1, "role": "controller", "handles": ["webview.open"]]
            if let token = configuration.bridge.controllerToken { params["token"] = .string(token) }
            feedText(BrowserSide.hostClient, JSONValue.object(["id": 1, "method": "hello", "params": .object(params)]).serialized())
        }
        feedText(BrowserSide.hostClient, frame.serialized())
    }

    // MARK: hooks called by the daemon

    /// A frame from a connection: false when the daemon handles it as usual; true when the
    /// browser side took it (held behind a request the browser is answering, or a page's
    /// `pwa-navigate` waiting for its snapshot).
    func browserIntercepts(_ id: ConnectionID, _ message: UnsafeRawBufferPointer) -> Bool {
        guard let b = browser else { return false }
        let client = ClientID(id.raw)
        if b.heldIn[client] != nil {
            b.heldIn[client]!.append(Array(message))
            return true
        }
        guard let page = b.pages[client] else { return false }
        if b.snapshotTaken.remove(client) != nil { return false }
        guard Self.contains(message, "\"pwa-navigate\"") else { return false }
        // The PWA changes nothing until the reply: the tab shows the state the placeholder stands for.
        b.heldIn[client] = [Array(message)]
        b.heldOut[client] = []
        let ref = browserRef
        let remote = self.remote
        let host = b.host
        Task {
            let jpeg = try? await host.screenshot(session: page.session, webview: page.webview)
            remote.enqueue { ref.value.snapshotTaken(client, page: page, jpeg: jpeg) }
        }
        return true
    }

    static func contains(_ message: UnsafeRawBufferPointer, _ needle: StaticString) -> Bool {
        let n = needle.utf8CodeUnitCount
        guard message.count >= n else { return false }
        return needle.withUTF8Buffer { pattern in
            var i = 0
            while i + n <= message.count {
                if message[i] == pattern[0] && memcmp(message.baseAddress! + i, pattern.baseAddress!, n) == 0 { return true }
                i += 1
            }
            return false
        }
    }

    func snapshotTaken(_ client: ClientID, page: TabKey, jpeg: [UInt8]?) {
        guard let b = browser else { return }
        let before = bridge.engine(of: page.session)?.stack.map(\.id) ?? []
        var queue = b.heldIn.removeValue(forKey: client) ?? []
        let out = b.heldOut.removeValue(forKey: client) ?? []
        out.forEach { transport.send(ConnectionID(raw: client.raw), $0) }
        guard !queue.isEmpty else { return }
        b.snapshotTaken.insert(client)
        let first = queue.removeFirst()
        feedText(client, first)
        perform()
        b.snapshotTaken.remove(client)
        if let jpeg, let stack = bridge.engine(of: page.session)?.stack, stack.count >= 2,
           case .placeholder(let p) = stack[stack.count - 2], !before.contains(p.id) {
            b.store(jpeg, placeholder: p.id, session: page.session)
        }
        replay(client, queue)
    }

    /// Delivers frames that waited, in order, until one of them waits again.
    func replay(_ client: ClientID, _ frames: [[UInt8]]) {
        for (i, frame) in frames.enumerated() {
            if let b = browser, b.heldIn[client] != nil {
                b.heldIn[client]!.append(contentsOf: frames[i...])
                return
            }
            let id = ConnectionID(raw: client.raw)
            frame.withUnsafeBytes { raw in
                if !browserIntercepts(id, raw) {
                    feedText(client, raw)
                    perform()
                }
            }
        }
    }

    /// A frame for `client` while the browser holds it; true when it was kept back.
    func browserHoldsOutgoing(_ client: ClientID, _ bytes: [UInt8]) -> Bool {
        guard let b = browser, !b.heldOut.isEmpty, b.heldOut[client] != nil else { return false }
        b.heldOut[client]!.append(bytes)
        return true
    }

    /// The reply to a held request: sent, then what was held back, then the frames that waited.
    func completeHeld(_ client: ClientID, reply: [UInt8]) {
        guard let b = browser else { return }
        let id = ConnectionID(raw: client.raw)
        sendHostFrame(id, reply)
        (b.heldOut.removeValue(forKey: client) ?? []).forEach { transport.send(id, $0) }
        let queue = b.heldIn.removeValue(forKey: client) ?? []
        replay(client, queue)
    }

    func hold(_ b: BrowserSide, _ client: ClientID) {
        if b.heldIn[client] == nil { b.heldIn[client] = [] }
        if b.heldOut[client] == nil { b.heldOut[client] = [] }
    }

    /// A `BridgeEffect.host`.
    func performHost(_ call: HostCall) {
        let b = browserSide()
        let ref = browserRef
        let remote = self.remote
        let host = b.host
        switch call {
        case .createBrowserSession(let client, let id, let session, let webview, let url, let token, let reply):
            hold(b, client)
            hostSend(b, ["id": 2, "method": "session.subscribe", "params": [
                "session": .string(session),
                "events": ["webview.open", "webview.closed", "session.closed", "stack.changed", "foreground.shown", "foreground.removed"],
            ]])
            let script = b.script(session: session, webview: webview, token: token)
            Task {
                do {
                    try await host.createSession(session)
                    try await host.openTab(session: session, webview: webview, url: url.isEmpty ? "about:blank" : url, script: script, root: true)
                    remote.enqueue { ref.value.completeHeld(client, reply: reply) }
                } catch {
                    let message = "\(error)"
                    await host.closeSession(session)
                    remote.enqueue {
                        let d = ref.value
                        d.completeHeld(client, reply: Bridge<SystemRandomNumberGenerator>.errorFrame(id: id, code: .browserError, message: message))
                        d.feedHostAbandon(session)
                        d.perform()
                    }
                }
            }
        case .pageClaimed(let client, let session, let webview):
            b.pages[client] = TabKey(session, webview)
            if let request = b.waitingNavigations.removeValue(forKey: TabKey(session, webview)) {
                remote.enqueue { ref.value.browserEvent(.navigationRequested(session: session, webview: webview, request: request)) }
            }
        case .request(let client, let id, let method, let session, let target, let params):
            typealias B = Bridge<SystemRandomNumberGenerator>
            if method == "placeholder.snapshot" {
                let frame = b.snapshot(session: session, placeholder: target).map {
                    B.resultFrame(id: id, ["mimeType": "image/jpeg", "data": .string(Data($0).base64EncodedString())])
                } ?? B.errorFrame(id: id, code: .browserError, message: "no snapshot of \(target): it was taken before the session's snapshot budget dropped it, or its pwa-navigate came as an event")
                sendHostFrame(ConnectionID(raw: client.raw), frame)
                return
            }
            hold(b, client)
            Task {
                let frame: [UInt8]
                do {
                    switch method {
                    case "webview.evaluate":
                        let value = try await host.evaluate(session: session, webview: target, expression: params["expression"]?.stringValue ?? "")
                        frame = B.resultFrame(id: id, ["value": value])
                    case "webview.click":
                        try await host.click(session: session, webview: target, selector: params["selector"]?.stringValue ?? "")
                        frame = B.resultFrame(id: id, [:])
                    case "webview.type":
                        try await host.type(session: session, webview: target, selector: params["selector"]?.stringValue ?? "",
                                            text: params["text"]?.stringValue ?? "")
                        frame = B.resultFrame(id: id, [:])
                    default: // session.screenshot
                        let jpeg = try await host.screenshot(session: session, webview: target)
                        frame = B.resultFrame(id: id, ["mimeType": "image/jpeg", "data": .string(Data(jpeg).base64EncodedString())])
                    }
                } catch let error as BrowserError {
                    if case .unknownTarget = error {
                        frame = B.errorFrame(id: id, code: .browserError, message: "\(target) of session \(session) has no tab (it is a native screen, or its tab is gone)")
                    } else {
                        frame = B.errorFrame(id: id, code: .browserError, message: error.description)
                    }
                } catch {
                    frame = B.errorFrame(id: id, code: .browserError, message: "\(error)")
                }
                remote.enqueue { ref.value.completeHeld(client, reply: frame) }
            }
        }
    }

    /// A frame the state machine sends to the browser's own controller connection.
    func browserReceives(_ bytes: [UInt8]) {
        guard let b = browser, let frame = try? JSONParser.parse(bytes), let name = frame["event"]?.stringValue,
              let params = frame["params"], let session = params["session"]?.stringValue else { return }
        let host = b.host
        switch name {
        case "webview.open":
            guard let webview = webviewParam(name, params), let token = params["token"]?.stringValue else { return }
            let url = params["url"]?.stringValue ?? ""
            let post = b.posts[session]?.removeValue(forKey: url)
            let loadable = url.hasPrefix("http://") || url.hasPrefix("https://")
            let script = b.script(session: session, webview: webview, token: token)
            Task { try? await host.openTab(session: session, webview: webview, url: loadable ? url : "about:blank", script: script, post: post) }
        case "webview.closed":
            guard let webview = webviewParam(name, params) else { return }
            b.waitingNavigations[TabKey(session, webview)] = nil
            Task { await host.closeTab(session: session, webview: webview) }
        case "session.closed":
            b.snapshots[session] = nil
            b.discarded[session] = nil
            b.posts[session] = nil
            b.waitingNavigations = b.waitingNavigations.filter { $0.key.session != session }
            Task { await host.closeSession(session) }
        case "stack.changed":
            // Snapshots go with their placeholders.
            let ids = Set((params["stack"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue.flatMap(ItemID.init(parsing:)) })
            if let list = b.snapshots[session] {
                let gone = list.filter { !ids.contains($0.placeholder) }
                if let last = gone.last { b.discarded[session] = last.jpeg }
                b.snapshots[session] = list.filter { ids.contains($0.placeholder) }
            }
        case "foreground.shown":
            guard let webview = webviewParam(name, params) else { return }
            var image = "none"
            if params["kind"]?.stringValue == "placeholder", let jpeg = b.discarded[session] {
                image = "url(data:image/jpeg;base64,\(Data(jpeg).base64EncodedString()))"
            }
            let expression = """
                (() => { let d = document.getElementById("__bridged_foreground");
                  if (!d) { d = document.createElement("div"); d.id = "__bridged_foreground"; }
                  d.style.cssText = "position:fixed;left:0;top:0;width:100vw;height:100vh;z-index:2147483647;background:#fff center/cover no-repeat;pointer-events:none";
                  d.style.backgroundImage = \(JSONValue.string(image).jsonString);
                  document.documentElement.appendChild(d); return true; })()
                """
            Task { _ = try? await host.evaluate(session: session, webview: webview, expression: expression) }
        case "foreground.removed":
            guard let webview = webviewParam(name, params) else { return }
            Task { _ = try? await host.evaluate(session: session, webview: webview, expression: "document.getElementById(\"__bridged_foreground\")?.remove(); true") }
        default:
            break
        }
    }

    /// The `webview` of an event the state machine sent the browser's controller connection,
    /// parsed back from the frame's text; nil (logged, the event ignored) when it is missing or
    /// not a web view id.
    func webviewParam(_ event: String, _ params: JSONValue) -> ItemID? {
        let text = params["webview"]?.stringValue
        guard let text, let id = ItemID(parsing: text), id.kind == .webview else {
            logger.warning("\(event) for the browser ignored: \"webview\" is \(text.map { "\"\($0)\"" } ?? "missing"), not a web view id such as \"W1\"")
            return nil
        }
        return id
    }

    /// What Chromium reported, on the service thread.
    func browserEvent(_ event: BrowserEvent) {
        guard let b = browser else { return }
        switch event {
        case .navigationRequested(let session, let webview, let request):
            // Exactly as the page's own `navigate` event.
            guard let client = bridge.pageClient(session: session, webview: webview) else {
                if bridge.engine(of: session)?.webViews.contains(where: { $0.id == webview }) == true {
                    // Its page has not connected yet: the navigation waits for it.
                    b.waitingNavigations[TabKey(session, webview)] = request
                } else {
                    logger.warning("\(session) \(webview): a navigation to \(request.url) was stopped, but no page speaks for the web view")
                }
                return
            }
            if request.method != "GET" {
                var forSession = b.posts[session] ?? [:]
                forSession[PageURL.stripClaim(request.url)] = request
                b.posts[session] = forSession
            }
            feedText(client, JSONValue.object(["event": "navigate", "params": ["url": .string(request.url)]]).serialized())
            perform()
        case .historyBack(let session, let webview):
            if let client = bridge.pageClient(session: session, webview: webview) {
                feedText(client, Array(#"{"event":"back","params":{}}"#.utf8))
            } else if bridge.engine(of: session)?.top?.id == webview {
                // The traversal ended the page's document, and its connection went first: the
                // host goes back on its behalf (it was the top, as a page's `back` requires).
                hostSend(b, ["id": 4, "method": "navigation.back", "params": ["session": .string(session)]])
            } else {
                return
            }
            perform()
        case .urlChanged(let session, let webview, let url):
            // The page moved without telling (pushState with no pwa-navigate, a fragment): its
            // web view's url follows, as if its page had sent `pwa-navigated`, so that the stack,
            // the dashboard and /api/sessions show where it is.
            let clean = PageURL.stripClaim(url)
            guard let client = bridge.pageClient(session: session, webview: webview),
                  let current = bridge.engine(of: session)?.webViews.first(where: { $0.id == webview }), current.url != clean else { return }
            let frame = JSONValue.object(["event": "pwa-navigated", "params": ["url": .string(clean), "source": "browser"]]).serialized()
            if b.heldIn[client] != nil {
                b.heldIn[client]!.append(frame)
            } else {
                feedText(client, frame)
                perform()
            }
        case .tabCrashed(let session, let webview):
            logger.warning("\(session) \(webview): the tab's renderer crashed")
        case .browserCrashed(let sessions):
            logger.error("Chromium went away; the pages of \(sessions.count) browser session(s) are disconnected")
            for session in sessions {
                feedHostEvent(session, "browser.crashed", [:])
            }
            perform()
        }
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
              let jpeg = browser?.snapshot(session: session, placeholder: placeholder) else {
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
        Task {
            await host.shutdown()
            done.signal()
        }
        done.wait()
    }

    func browserConnectionClosed(_ id: ConnectionID) {
        guard let b = browser else { return }
        let client = ClientID(id.raw)
        b.pages[client] = nil
        b.heldIn[client] = nil
        b.heldOut[client] = nil
        b.snapshotTaken.remove(client)
    }
}

extension Daemon {
    /// Starts a browser session on `url` as if a controller had sent
    /// `session.create {url, browser: true}` (`bridged open`). Call on the service thread
    /// (e.g. from `onStart`).
    public func openBrowserSession(url: String) {
        let b = browserSide()
        hostSend(b, ["id": 3, "method": "session.create", "params": ["url": .string(url), "browser": true]])
        perform()
    }
}
