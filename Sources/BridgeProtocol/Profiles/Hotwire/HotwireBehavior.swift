/// The `hotwire-native` profile on the seam (Profiles/Profile.swift): how its sessions start
/// and its answers to the core's questions, each handed to Bridge+Hotwire.swift.

extension HotwireProfile {
    /// A new hotwire-native session: its navigator on the root URL, its tree (tab `main`).
    func start<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, url: String) {
        b.startHotwire(&s, profile: self, url: url)
    }
}

extension HotwireState: ProfileState {
    var configuration: any ProfileConfiguration { profile }

    /// The navigator's stacks are drawn as the session's tree (tab `main` and the modal stack).
    var drawsTree: Bool { true }

    /// The selected tab's navigator decides.
    func canGoBack(_ s: Session) -> Bool? {
        let nav = tabs[selected].navigator
        return !nav.modal.isEmpty || nav.main.count > 1
    }

    /// The modal context's web view is on no engine stack while the main one is active, nor are
    /// the web views of the tabs not selected.
    func hasWebView(_ webview: ItemID) -> Bool { tab(of: webview) != nil }

    func injectsPageScript(into webview: ItemID) -> Bool { true }

    /// iOS keeps the modal's web view between presentations (`HotwireTabState.keptModal`).
    func keepsTab(of webview: ItemID) -> Bool { tabs.contains { $0.keptModal == webview } }

    /// The platform and both stacks (docs/HOTWIRE.md).
    func sessionInfo(_ s: Session) -> [(String, JSONValue)] {
        [("platform", .string(profile.platform.rawValue)), ("tree", s.tree?.toJSON() ?? .null)]
    }

    static func pageConnected<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, _ s: inout Session, webview: ItemID) {
        b.hotwirePageClaimed(client, &s, webview: webview)
    }

    static func pageEvent<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, name: String, _ params: JSONObject,
                               _ s: inout Session, webview: ItemID, now: Int64) throws(ProtocolError) -> Bool {
        try b.hotwirePageEvent(client, name: name, params, &s, webview: webview, now: now)
    }

    /// Every navigation Turbo did not make is proposed with `advance`, decided by the path
    /// configuration.
    static func navigate<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID?, _ s: inout Session, url: String,
                              from webview: ItemID?, reply: ProfileNavigateReply, now: Int64) -> Bool {
        b.hotwireNavigate(client, &s, url: url, from: webview, reply: reply, now: now)
        return true
    }

    /// A native pop, then a `restore` visit of the uncovered screen.
    static func back<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, client: ClientID?, id: Int64?, now: Int64) -> Bool {
        b.hotwireBack(&s, client: client, id: id, now: now)
        return true
    }

    /// The stacks are the navigator's (the path configuration decides): its one back is the
    /// native pop, and the tab bar selects a tab (`router.selectTab`, `router.perform
    /// {type: "selectTab"}`); the router's other actions would move the tree behind the
    /// navigator's back.
    static func routerAction<RNG>(_ b: inout Bridge<RNG>, _ action: RouterAction, _ s: inout Session, method: BridgeMethod,
                                  client: ClientID, id: Int64, now: Int64) throws(ProtocolError) -> Bool {
        switch action {
        case .goBack:
            b.hotwireBack(&s, client: client, id: id, now: now)
        case .selectTab(let name) where !(s.hotwire?.profile.tabs.isEmpty ?? true):
            try b.selectHotwireTab(&s, name: name, client: client, id: id, now: now)
        default:
            throw ProtocolError(.conflict, "a hotwire-native session is navigated by its path configuration: "
                + "use navigation.navigateToUrl or navigation.back (and router.selectTab with tabs), not \(method.name)")
        }
        return true
    }

    static func request<RNG>(_ b: inout Bridge<RNG>, _ method: BridgeMethod, _ client: ClientID, id: Int64, _ p: Params,
                             _ s: inout Session, now: Int64) throws(ProtocolError) {
        if method == .bridgeReply { try b.bridgeReply(client, id: id, p, &s) }
    }

    static func namedRequest<RNG>(_ b: inout Bridge<RNG>, _ name: String, _ client: ClientID, id: Int64, _ p: Params,
                                  _ s: inout Session, now: Int64) throws(ProtocolError) {}

    static func hostResult<RNG>(_ b: inout Bridge<RNG>, _ result: HostResult, _ s: inout Session, now: Int64) {
        if case .pathConfigurationFetched(_, let url, let fetch) = result {
            b.hotwirePathConfigurationFetched(&s, url: url, fetch)
        }
    }

    /// The core's back (a native pop) as for any page's `back`.
    static func historyTraversed<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, webview: ItemID, now: Int64) -> Bool { false }

    /// A proposal that waited for the snapshot of the screen it covers: decided now, the
    /// covered screen keeps the picture.
    /// A page that no longer speaks for its web view (another page claimed it, it was sent
    /// away: its connection closes) takes what it proposed with it, as a waiting `pwa-navigate`
    /// goes with its page; a connection that left gets no reply (the proposal goes ahead).
    static func resume<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, _ s: inout Session, _ waiting: any ProfileValue, now: Int64) {
        guard let proposal = waiting as? HotwireProposal else { return }
        switch b.clients[client]?.role {
        case .detached?: return
        case nil: b.hotwirePropose(nil, &s, proposal, now: now)
        default: b.hotwirePropose(client, &s, proposal, now: now)
        }
    }
}
