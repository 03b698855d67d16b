/// The `capacitor` profile on the seam (Profiles/Profile.swift): one capacitor session's state
/// and its answers to the core's questions, each handed to Bridge+Capacitor.swift.

/// One capacitor session: its device store (preferences, listeners, mocks, held calls; it
/// survives reloads), the app's web view, and the `navigation.back` requests waiting for the
/// web view's history.
struct CapacitorState: ProfileState, Equatable {
    var profile: CapacitorProfile
    var store: CapacitorStore
    /// The app's one web view (the session's root).
    var app: ItemID = .webview(1)
    /// The in-app browser's web view while one is presented (`Browser.open`).
    var browser: ItemID?
    /// `navigation.back` requests waiting for the app's history (`HostWork.readHistory`), in order.
    var backs: [WaitingBack] = []

    struct WaitingBack: Equatable {
        var client: ClientID?
        var id: Int64?
    }

    var configuration: any ProfileConfiguration { profile }
    var drawsTree: Bool { false }
    func canGoBack(_ s: Session) -> Bool? { nil }
    /// The in-app browser's web view is on the engine's stack.
    func hasWebView(_ webview: ItemID) -> Bool { false }
    /// Only the app's web view has Capacitor (an in-app browser shows any site as it is).
    func injectsPageScript(into webview: ItemID) -> Bool { webview != browser }

    /// Every closed web view's tab closes.
    func keepsTab(of webview: ItemID) -> Bool { false }

    /// The platform, the plugins and whether the app is in the foreground.
    func sessionInfo(_ s: Session) -> [(String, JSONValue)] {
        [("platform", .string(profile.options.platform.rawValue)),
         ("plugins", .array(profile.options.plugins.map { .string($0.name) })),
         ("active", .bool(store.isActive))]
    }

    /// The in-app browser's page loaded: `browserPageLoaded`.
    static func pageConnected<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, _ s: inout Session, webview: ItemID) {
        b.capacitorPageConnected(&s, webview: webview)
    }

    static func pageEvent<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, name: String, _ params: JSONObject,
                               _ s: inout Session, webview: ItemID, now: Int64) throws(ProtocolError) -> Bool {
        try b.capacitorPageEvent(client, name: name, params, &s, webview: webview, now: now)
    }

    /// A top-level navigation of the app's web view: it stays there when `allowNavigation` (or
    /// the app's origin) allows it, else it opens outside the app.
    static func navigate<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID?, _ s: inout Session, url: String,
                              from webview: ItemID?, reply: ProfileNavigateReply, now: Int64) -> Bool {
        b.capacitorNavigate(client, &s, url: url, from: webview, reply: reply)
        return true
    }

    /// The hardware back (Android), refused on iOS; closes a presented in-app browser.
    static func back<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, client: ClientID?, id: Int64?, now: Int64) -> Bool {
        b.capacitorBack(&s, client: client, id: id, now: now)
        return true
    }

    /// One web view: no router.
    static func routerAction<RNG>(_ b: inout Bridge<RNG>, _ action: RouterAction, _ s: inout Session, method: BridgeMethod,
                                  client: ClientID, id: Int64, now: Int64) throws(ProtocolError) -> Bool {
        guard case .goBack = action else {
            throw ProtocolError(.conflict, "a capacitor session has one web view: use navigation.openUrl or navigation.back, not \(method.name)")
        }
        b.capacitorBack(&s, client: client, id: id, now: now)
        return true
    }

    static func request<RNG>(_ b: inout Bridge<RNG>, _ method: BridgeMethod, _ client: ClientID, id: Int64, _ p: Params,
                             _ s: inout Session, now: Int64) throws(ProtocolError) {}

    static func namedRequest<RNG>(_ b: inout Bridge<RNG>, _ name: String, _ client: ClientID, id: Int64, _ p: Params,
                                  _ s: inout Session, now: Int64) throws(ProtocolError) {
        guard let method = CapacitorMethod(rawValue: name) else { return }
        try b.capacitorRequest(method, client, id: id, p, &s)
    }

    static func hostResult<RNG>(_ b: inout Bridge<RNG>, _ result: HostResult, _ s: inout Session, now: Int64) {
        b.capacitorHostResult(result, &s, now: now)
    }

    static func resume<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, _ s: inout Session, _ waiting: any ProfileValue, now: Int64) {}

    /// One web view that navigates in place: its traversal to another document is its own, done
    /// again by the host as the web view's (`goBackInHistory`), not a back of the stack.
    static func historyTraversed<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, webview: ItemID, now: Int64) -> Bool {
        b.capacitorHistoryTraversed(&s, webview: webview)
    }
}
