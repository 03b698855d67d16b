/// Everything that reaches the protocol machine: one value per input, handed to
/// `Bridge.apply(_:at:)`. A run of the daemon is a list of these (with their times and the
/// random words they drew), which is what a trace records and `bridged replay` feeds back.
///
/// The host's results come in typed (`.host(HostResult)`); the work the machine asks of its
/// host goes out typed (`BridgeEffect.host(HostWork)`). No JSON text crosses the boundary in
/// either direction, and nothing pretends to be a client.
public enum BridgeInput: Equatable, Sendable {
    /// A connection opened; `origin` is its upgrade's `Origin` header, when it sent one.
    case connected(ClientID, isLoopback: Bool, origin: String? = nil)
    /// One whole text message.
    case frame(ClientID, text: [UInt8])
    /// A binary message (refused).
    case binaryFrame(ClientID)
    /// The connection is gone.
    case left(ClientID)
    /// A timer asked for by `.schedule` is due.
    case timerFired(TimerKey)
    /// About once a second: idle sessions expire.
    case sweep
    /// What the host's browser did (browser sessions).
    case host(HostResult)
    /// The daemon's own command (`bridged open URL`): a browser session on `url`, as a
    /// controller's `session.create {url, browser: true}` with no one to answer, with its
    /// profile (parsed by `SessionProfile.parse`) and `session.create`'s other params (the
    /// shell's: `dialogs`, `permissions`, `geolocation`), or none.
    case openBrowserSession(url: String, profile: SessionProfile = .plain, params: JSONObject = JSONObject())
}

/// A controller's request the host answers later: where and to which id the reply goes.
public struct HostRequest: Hashable, Sendable, CustomStringConvertible {
    public var client: ClientID
    public var id: Int64
    public init(client: ClientID, id: Int64) {
        self.client = client
        self.id = id
    }
    public var description: String { "\(client)/\(id)" }
}

/// How a navigation the browser stopped was started.
public enum NavigationDisposition: String, Sendable, CaseIterable {
    /// A link, a form, a `location` assignment, a meta refresh: a document request of the main frame.
    case document
    /// `window.open` (the popup was closed before it loaded anything).
    case windowOpen = "window-open"
    /// A url of a scheme the browser cannot load itself (`tt://…`).
    case customScheme = "custom-scheme"
}

/// A navigation the browser stopped in a tab: the machine decides where it goes, exactly as
/// for the page's own `navigate`.
public struct NavigationStop: Equatable, Sendable {
    public var session: String
    public var webview: ItemID
    public var url: String
    public var method: String
    /// The body of a POST, as sent.
    public var body: [UInt8]?
    /// The request's headers (a POST's `Content-Type` in particular), sorted by name.
    public var headers: [Header]
    public var disposition: NavigationDisposition

    public struct Header: Equatable, Sendable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(session: String, webview: ItemID, url: String, method: String = "GET", body: [UInt8]? = nil,
                headers: [Header] = [], disposition: NavigationDisposition = .document) {
        self.session = session
        self.webview = webview
        self.url = url
        self.method = method
        self.body = body
        self.headers = headers.sorted { $0.name < $1.name }
        self.disposition = disposition
    }
}

/// What the browser answered to a request it was handed (`HostWork` with a `HostRequest`).
public enum HostAnswer: Equatable, Sendable {
    /// `webview.evaluate`: the expression's value.
    case value(JSONValue)
    /// `webview.click`, `webview.type`: done.
    case done
    /// `session.screenshot`: a JPEG.
    case image([UInt8])
    /// The browser could not: the reply is a `browser-error` with this message.
    case failed(String)
    /// The page did not answer in time (a busy loop, a page that never yields): the reply is a
    /// `page-unresponsive` error with this message.
    case unresponsive(String)
}

/// Chromium's id of a target (a tab; a page's main frame has the same id), as DevTools clients
/// see it. Here, not in BridgeBrowser (which types the rest of the DevTools protocol,
/// DevTools.swift), because the host's results carry it (`HostResult.tabOpened`).
public struct TargetID: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringInterpolation {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }
}

/// Chromium's id of a browser context (`browserContextId`): a session's cookies and storage.
/// (Here for the same reason as `TargetID`.)
public struct BrowserContextID: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringInterpolation {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }
}

/// What the host's browser did, typed.
public enum HostResult: Equatable, Sendable {
    /// The tab of a web view is open and loading (`HostWork.openTab`): `targetId` is the
    /// browser's id of the tab and `browserContextId` that of the session's context, as a
    /// DevTools client attached to the same browser sees them (`Target.getTargetInfo`). (Empty
    /// ids: unknown, as in a trace recorded before the ids were.)
    case tabOpened(session: String, webview: ItemID, targetId: TargetID, browserContextId: BrowserContextID)
    /// The tab of a web view could not open, or its page could not load (`reason`: the
    /// browser's words, e.g. `net::ERR_CONNECTION_REFUSED`).
    case tabFailed(session: String, webview: ItemID, url: String, reason: String)
    /// The snapshot asked for by `HostWork.takeSnapshot`: a JPEG of the web view's tab, or nil
    /// when the browser could not take it (the placeholder then has no image). The waiting
    /// `pwa-navigate` goes on, and its placeholder (the reply names it) keeps the image.
    case snapshotTaken(session: String, webview: ItemID, image: [UInt8]?)
    /// A tab was stopped from going to another document.
    case navigationStopped(NavigationStop)
    /// A page went back in its own history to another document: a back of the host.
    case historyTraversed(session: String, webview: ItemID)
    /// A page moved within its document without telling (`pushState` with no `pwa-navigate`,
    /// a fragment): its web view's url follows, as for its own `pwa-navigated` (with
    /// `source: "browser"`).
    case urlChanged(session: String, webview: ItemID, url: String)
    /// The answer to a controller's request.
    case answered(HostRequest, HostAnswer)
    /// The browser went away; every tab of these sessions is gone.
    case browserCrashed(sessions: [String])
    /// The answer to `HostWork.fetchPathConfiguration`: the document at `url`, parsed, or why
    /// there is none (`HTTP 404`, `net::ERR_CONNECTION_REFUSED`, not JSON, over the byte cap, no
    /// answer in time).
    case pathConfigurationFetched(session: String, url: String, PathConfigurationFetch)
    /// The answer to `HostWork.readHistory`: whether `webview`'s tab has an http(s) entry before
    /// its current one (left to the session's profile).
    case historyRead(session: String, webview: ItemID, canGoBack: Bool)
    /// What a page handed to its shell: a dialog, a file chooser, a download, its renderer's
    /// death (ShellTypes.swift, Bridge+Shell.swift).
    case shell(ShellEvent)
}

/// What the host's fetch of a session profile's configuration document (`pathConfigurationUrl`) gave.
public enum PathConfigurationFetch: Equatable, Sendable {
    /// The document, parsed as JSON (not checked yet: the Bridge applies its limits).
    case document(JSONValue)
    /// No document: why, in words for controllers.
    case failed(String)
}

/// Work the machine asks of its host's browser (browser sessions only), in order.
public enum HostWork: Equatable, Sendable {
    /// A tab for `webview` on `url`, whose page claims the web view with `token`. `root`: the
    /// session's first web view (its browser context is made first, and nothing is below it).
    /// `post`: the stopped POST that became this web view, replayed as its first load.
    /// Answered by `tabOpened` or `tabFailed`.
    case openTab(session: String, webview: ItemID, url: String, token: String, post: NavigationStop?, root: Bool)
    case closeTab(session: String, webview: ItemID)
    /// The web view went, but its tab stays, its page loaded as it is (not drawn, out of the
    /// session's web views): its profile gives it to a later web view (`reuseTab`). A profile
    /// whose app keeps a web view between its screens' lives asks for it (`ProfileState.keepsTab`).
    /// The session's close disposes of it.
    case keepTab(session: String, webview: ItemID)
    /// `openTab` for `webview` made of the tab `kept` (`keepTab`): it becomes `webview`'s, its
    /// page (document and script state as they were) claims `webview` with `token`, and every
    /// later document of the tab claims it too. When that tab is gone or its page cannot claim
    /// (no page client in it), `url` is loaded in a tab as `openTab` does. Answered by
    /// `tabOpened` or `tabFailed`.
    case reuseTab(session: String, webview: ItemID, kept: ItemID, url: String, token: String)
    /// Every tab of the session and its browser context (cookies, storage) go.
    case closeSession(session: String)
    /// A picture of `webview`'s tab as it is now, for the placeholder its page's waiting
    /// `pwa-navigate` is about to make (it does not exist before the picture); answered by
    /// `snapshotTaken`.
    case takeSnapshot(session: String, webview: ItemID)
    /// A cover over the tab while its foreground is up: the image of the placeholder a back
    /// discarded, or plain white (nil).
    case showOverlay(session: String, webview: ItemID, image: [UInt8]?)
    case removeOverlay(session: String, webview: ItemID)
    /// The tab of `webview` comes to the front: a tab in the background draws no frames, so its
    /// page cannot render (a profile's main web view uncovered by a dismissed modal).
    case showTab(session: String, webview: ItemID)
    /// `webview.evaluate`; answered by `answered(request, .value / .failed)`.
    case evaluate(HostRequest, session: String, webview: ItemID, expression: String)
    /// `webview.click`; answered by `answered(request, .done / .failed)`.
    case click(HostRequest, session: String, webview: ItemID, selector: String)
    /// `webview.type`; answered by `answered(request, .done / .failed)`.
    case type(HostRequest, session: String, webview: ItemID, selector: String, text: String)
    /// `session.screenshot` of the top item (`target`, which may be a native screen with no
    /// tab); answered by `answered(request, .image / .failed)`.
    case screenshot(HostRequest, session: String, target: ItemID)
    /// The document at the `pathConfigurationUrl` of a session's profile, fetched by the
    /// host with the session's cookies (as the app's native side loads its server copy: no CORS),
    /// in the frame of `webview` (the main web view); answered by `pathConfigurationFetched`.
    case fetchPathConfiguration(session: String, webview: ItemID, url: String)
    /// What the Bridge decided about what a page handed to its shell (ShellTypes.swift).
    case shell(ShellWork)
    /// Reads `webview`'s history in its tab (for a profile that decides a back by it); answered
    /// by `historyRead`.
    case readHistory(session: String, webview: ItemID)
    /// `webview`'s tab goes one entry back in its own history (a web view's `goBack()`).
    case goBackInHistory(session: String, webview: ItemID)
    /// `webview`'s tab loads `url` itself (a navigation that stays in its web view).
    case loadURL(session: String, webview: ItemID, url: String)

    /// The request this work answers, if any.
    public var request: HostRequest? {
        switch self {
        case .evaluate(let r, _, _, _), .click(let r, _, _, _), .type(let r, _, _, _, _), .screenshot(let r, _, _): r
        case .shell(let work): work.request
        default: nil
        }
    }
}

extension Bridge {
    /// The one entry point: feeds `input` to the machine at `now` (microseconds of a monotonic
    /// clock). The effects it causes are then taken with `drainEffects`.
    @_specialize(exported: true, where RNG == RecordableRandom)
    public mutating func apply(_ input: BridgeInput, at now: Int64) {
        switch input {
        case .frame(let client, let text):
            text.withUnsafeBytes { frameInput(client, text: $0, at: now) }
        case .connected(let client, let loopback, let origin):
            connected(client, isLoopback: loopback, origin: origin, at: now)
        case .binaryFrame(let client):
            // Refused at once; to a waiting connection the refusal waits with its other frames.
            let mark = effects.count
            receivedBinary(client, at: now)
            if !held.isEmpty { divertHeld(from: mark) }
        case .left(let client):
            held[client] = nil
            let mark = effects.count
            disconnected(client, at: now)
            if !held.isEmpty { divertHeld(from: mark) }
        case .timerFired(let key):
            let mark = effects.count
            timerFired(key, at: now)
            if !held.isEmpty { divertHeld(from: mark) }
        case .sweep:
            let mark = effects.count
            sweep(at: now)
            if !held.isEmpty { divertHeld(from: mark) }
        case .host(let result):
            hostResult(result, now: now)
        case .openBrowserSession(let url, let profile, let params):
            // A refusal changes nothing; the daemon learns it from `openBrowserSession` itself.
            try? openBrowserSession(url: url, profile: profile, params: params, at: now)
        }
        if !sessionEnds.isEmpty { endSessions(now: now) }
    }

    /// The input `.openBrowserSession(url:profile:)` (`bridged open URL`), saying why nothing
    /// opened: a url over `--max-url-bytes`, the `--max-sessions` limit, shell params that do not
    /// parse (`invalid-params` / `limit-exceeded`, as `session.create` would answer). A refusal
    /// changes nothing. The daemon records the input either way: a replay gets the same refusal.
    /// (A profile that does not parse never becomes an input: `SessionProfile.parse` refuses it first.)
    public mutating func openBrowserSession(url: String, profile: SessionProfile = .plain, params: JSONObject = JSONObject(),
                                            at now: Int64) throws(ProtocolError) {
        let mark = effects.count
        defer { if !held.isEmpty { divertHeld(from: mark) } }
        let shell = try Self.shellSettings(params)
        let url = PageURL.stripClaim(url)
        try checkURL(url, "url")
        try createBrowserSession(nil, id: nil, url: url, profile: profile, shell: shell, now: now)
    }

    /// `apply(.frame(client, text:), at:)` without copying the message (the daemon's path for
    /// every frame): the same input.
    @_specialize(exported: true, where RNG == RecordableRandom)
    public mutating func apply(frame client: ClientID, text: UnsafeRawBufferPointer, at now: Int64) {
        frameInput(client, text: text, at: now)
    }

    mutating func frameInput(_ client: ClientID, text: UnsafeRawBufferPointer, at now: Int64) {
        if !held.isEmpty, held[client] != nil {
            // The connection waits for the browser: its frame waits too, in order.
            held[client]!.inbound.append(.frame(Array(text)))
            return
        }
        let mark = effects.count
        received(client, text: text, at: now)
        if !sessionEnds.isEmpty { endSessions(now: now) }
        if !held.isEmpty { divertHeld(from: mark) }
    }
}
