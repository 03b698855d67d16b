import BridgeProtocol

/// How the browser host starts Chromium and dresses its tabs. Defaults are documented in
/// docs/BROWSER.md.
public struct BrowserOptions: Sendable {
    /// The Chromium executable: a name looked up on PATH, or a path (`--chromium`).
    public var chromium: String = "chromium"
    /// Appended to Chromium's own user agent (`--user-agent-suffix`).
    public var userAgentSuffix: String = "Astro App/1.0"
    /// The phone screen every tab emulates (`--viewport WxH`), in CSS pixels.
    public var viewportWidth: Int = 390
    public var viewportHeight: Int = 844
    /// Seconds a DevTools call may take before it fails with `browser-error`.
    public var callTimeoutSeconds: Double = 15
    /// Seconds Chromium gets to start and answer its first call.
    public var startTimeoutSeconds: Double = 20
    /// A hotwire-native session's `pathConfigurationUrl`: the most bytes of the document read
    /// (1 MiB; one byte more and the fetch fails, the session's rules stay)…
    public var pathConfigurationMaxBytes: Int = 1 << 20
    /// …and the seconds the whole fetch may take (the redirects and the body included).
    public var pathConfigurationTimeoutSeconds: Double = 15
    /// JPEG quality of snapshots and screenshots (0–100).
    public var jpegQuality: Int = 60
    /// Extra command-line arguments for Chromium.
    public var extraArguments: [String] = []
    /// Chromium also listens for DevTools on a loopback port of its own (`--devtools`), for
    /// Playwright or Puppeteer to attach to the tabs (docs/PLAYWRIGHT.md). Off by default: that
    /// port grants full control of every tab to any local process (docs/SECURITY.md).
    public var devtools = false
    /// Each browser session keeps one spare tab (`--spare-tabs`): made once a page of the
    /// session has loaded, dressed as a web view on `about:blank`, taken by the session's next
    /// classic web view (which then only adds its injected client and loads), and replaced
    /// once that one's page has loaded. It costs a renderer (about 18 MiB PSS) per session.
    /// DevTools clients see it as a page of the session's context (`about:blank`), and a new
    /// web view as that page navigating rather than a new page: nil means on, except with
    /// `devtools` (docs/BROWSER.md, "Spare tabs").
    public var spareTabsSetting: Bool?
    /// Whether sessions keep a spare tab: `spareTabsSetting`, by default on without `devtools`.
    public var spareTabs: Bool { spareTabsSetting ?? !devtools }
    /// Whether a navigation the page asks for is handed over at once (`Page.frameRequestedNavigation`:
    /// the next web view's tab loads while the old tab's request is still on its way) rather
    /// than once its request reaches bridged's interception: not with `devtools`, where another
    /// DevTools client's interception comes first and may answer the request itself (a
    /// Playwright route that fulfils a document keeps it in place: docs/PLAYWRIGHT.md).
    public var decidesNavigationsEarly: Bool { !devtools }
    /// How long a navigation handed over when the page asked for it waits for its request to be
    /// aborted silently: one that never reached the network (stopped by `beforeunload`,
    /// replaced by another) is forgotten after this, so a later request for the same url (a
    /// link to it with a fragment, say) is a navigation of its own, not taken for the old one's.
    public var decidedNavigationSeconds: Double = 10
    /// The context made ahead for the next session (with spare tabs) waits until no web view's
    /// page has opened or reported anything for this long: made while a session's pages load,
    /// its renderer's start competed with them for the machine's cores (docs/BROWSER.md,
    /// "Spare tabs"; docs/PERFORMANCE.md, "the cold start").
    public var contextAheadQuietSeconds: Double = 0.3

    public init() {}

    /// The widest viewport that is a phone's (CSS pixels): narrower tabs get Chromium's mobile
    /// (Android) user agent, wider ones its desktop one, as a tablet's browser asks for desktop
    /// pages.
    public static let phoneMaxWidth = 799

    /// A phone screen: the tabs say so in their user agent (`Mobile`) and client hints.
    public var isPhone: Bool { viewportWidth <= Self.phoneMaxWidth }

    /// The tabs' user agent before the app's suffix, from Chromium's own: `HeadlessChrome` →
    /// `Chrome`; on a phone, Chromium's Android form (`Linux; Android 10; K` … `Mobile Safari`),
    /// the reduced user agent Chrome for Android sends.
    public static func userAgent(chromium: String, phone: Bool) -> String {
        var ua = chromium.replacingOccurrences(of: "HeadlessChrome/", with: "Chrome/")
        guard phone else { return ua }
        if let open = ua.firstIndex(of: "("), let close = ua[open...].firstIndex(of: ")") {
            ua.replaceSubrange(open...close, with: "(Linux; Android 10; K)")
        }
        if !ua.contains("Mobile Safari/"), let r = ua.range(of: "Safari/") {
            ua.replaceSubrange(r, with: "Mobile Safari/")
        }
        return ua
    }

    /// The user-agent client hints of the phone (`navigator.userAgentData.mobile`).
    public static func phoneClientHints(userAgent: String) -> JSONValue {
        var major = "0"
        if let r = userAgent.range(of: "Chrome/") { major = String(userAgent[r.upperBound...].prefix { $0.isNumber }) }
        return .object([
            "brands": .array([.object(["brand": "Chromium", "version": .string(major)]), .object(["brand": "Not_A Brand", "version": "24"])]),
            "platform": "Android", "platformVersion": "10", "architecture": "", "model": "K", "mobile": true,
        ])
    }

    /// Parses `WxH` (each side 100...4000 CSS pixels).
    public static func parseViewport(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (100...4000).contains(w), (100...4000).contains(h) else { return nil }
        return (w, h)
    }
}

/// A request for a document that a tab was stopped from loading.
public struct NavigationRequest: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// A link, a form, a `location` assignment, a meta refresh: a document request of the main frame.
        case document
        /// `window.open` (the popup was closed before it loaded anything).
        case windowOpen
        /// A url of a scheme the browser cannot load itself (`tt://…`, `os://…`).
        case customScheme
    }
    public var url: String
    public var method: String
    /// The body of a POST, as sent.
    public var postData: [UInt8]?
    /// The request's headers (a POST's `Content-Type` in particular).
    public var headers: [String: String]
    public var kind: Kind

    public init(url: String, method: String = "GET", postData: [UInt8]? = nil, headers: [String: String] = [:], kind: Kind = .document) {
        self.url = url
        self.method = method
        self.postData = postData
        self.headers = headers
        self.kind = kind
    }
}

/// A web view of a session: the tab that plays it.
public struct TabKey: Hashable, Sendable, CustomStringConvertible {
    public var session: String
    public var webview: ItemID

    public init(_ session: String, _ webview: ItemID) {
        self.session = session
        self.webview = webview
    }

    public var description: String { "\(session) \(webview)" }
}

/// What the browser tells its owner; delivered in order, off the WebSocket service thread.
public enum BrowserEvent: Sendable, Equatable {
    /// A tab was stopped from going to another document: the owner decides where it goes.
    case navigationRequested(session: String, webview: ItemID, request: NavigationRequest)
    /// The page went back in its own history to another document: a back of the host.
    case historyBack(session: String, webview: ItemID)
    /// The main frame of a tab now shows `url`: a new document committed, or the page changed
    /// its address itself (pushState, replaceState, a fragment).
    case urlChanged(session: String, webview: ItemID, url: String)
    /// A tab's page could not be loaded after its load started (`reason`: Chromium's net
    /// error, e.g. `net::ERR_CONNECTION_REFUSED`): Chromium shows its error page instead.
    case loadFailed(session: String, webview: ItemID, url: String, reason: String)
    /// What a tab's page handed to its shell (a dialog, a file chooser, a download) or how it
    /// failed (its renderer died, it stopped answering): BrowserHost+Shell.swift.
    case shell(ShellEvent)
    /// Something went wrong that the owner's log must say (nothing else changes).
    case warning(String)
    /// Chromium itself went away; every tab of these sessions is gone.
    case browserCrashed(sessions: [String])
    /// With `BrowserOptions.devtools`, no new Chromium could be started after one went away
    /// (`reason`: why): no DevTools url until the next browser session starts one.
    case restartFailed(reason: String)
}
