/// The `hotwire-native` profile of browser sessions (docs/HOTWIRE.md): the native side of a
/// Hotwire Native app around an unmodified Turbo web app.
///
/// A session has one web view (tab) for the main context, `W1`, and one for the modal context
/// while a modal is presented. The screens are the navigator's (`HotwireNavigator`, pure
/// decisions); they are drawn as the session's tree: tab `main` and the modal stack, where the
/// screen a context's web view shows is that web view, the other web screens are placeholders
/// (with their URL and restoration identifier) and native destinations are native items. The
/// engine's stack is the active context's. The page side (js-client/hotwire/hotwire.js) sends
/// the adapter's messages as page events; the decisions go back to the pages as page events.

/// A page event for a page that has not connected yet.
struct HotwirePageEvent: Equatable {
    var name: String
    var params: JSONObject
}

/// A proposal of a hotwire-native session (Turbo's `visitProposed`, or a navigation native
/// intercepted, with `advance`), as it may wait for the snapshot of the screen it covers.
struct HotwireProposal: Equatable, ProfileValue {
    /// `.handledBy`: `{handledBy: "hotwire-native"}`.
    typealias Reply = ProfileNavigateReply
    var location: String
    var options: JSONObject
    /// The web view that proposed it; nil: the active context's.
    var from: ItemID?
    var reply: Reply = .none
}

/// A snapshot over a web view while it visits a screen a back uncovered: removed when that
/// visit renders (its `visitRendered`) or fails, as native hides its screenshot.
struct HotwireOverlay: Equatable {
    /// The location of the visit it waits for.
    var location: String
    /// Its Turbo identifier, once its `visitStarted` named it.
    var identifier: String?
}

/// One tab of a hotwire-native session: its navigator (Hotwire Native's tab bar gives each tab
/// its own) and the web views and items that draw its screens. A session without `tabs` has one.
struct HotwireTabState: Equatable {
    var navigator: HotwireNavigator
    /// The web view of each context: the main one always, the modal one while presented.
    var webviews: [HotwireContext: ItemID]
    /// The placeholder or native item standing for each screen (by screen id) that its
    /// context's web view does not show.
    var items: [Int: ItemID] = [:]
    /// Whether its navigator started (its main web view's tab opened): the first tab at once,
    /// the others when first selected.
    var started: Bool
    /// iOS: the web view of the modal last dismissed, whose tab is kept (`HostWork.keepTab`):
    /// the next modal presentation reuses it, as iOS's modal `Session` keeps its one web view
    /// (its document and script state) between presentations.
    var keptModal: ItemID?

    /// The context `webview` shows in this tab.
    func context(of webview: ItemID) -> HotwireContext? {
        webviews.first { $0.value == webview }?.key
    }
}

/// The hotwire-native side of one browser session.
struct HotwireState: Equatable {
    var profile: HotwireProfile
    /// The tabs, in the tab bar's order (one, `main`, without `tabs`).
    var tabs: [HotwireTabState]
    /// The tab the user sees. (The tab a page's message, a proposal or a back works on is
    /// passed down from where it came in: `tabOrSelected(of:)`, `applyHotwire(_:_:tab:now:)`.)
    var selected = 0
    /// Page events waiting for their page, by web view, in order.
    var pending: [ItemID: [HotwirePageEvent]] = [:]
    /// Web views under the snapshot of the screen they are visiting again (a back).
    var overlays: [ItemID: HotwireOverlay] = [:]
    /// Whether the host was asked to fetch the profile's `pathConfigurationUrl` (once, when the
    /// main web view's page first connects), and whether its answer came.
    var configurationFetch: ConfigurationFetch = .notAsked
    enum ConfigurationFetch: Equatable {
        case notAsked, asked, answered
    }

    /// The web view a tab shows: its modal's while one is presented, else its main one.
    func topWebView(of tab: Int) -> ItemID? {
        tabs[tab].webviews[.modal] ?? tabs[tab].webviews[.default]
    }

    /// The tab whose web view `webview` is.
    func tab(of webview: ItemID) -> Int? {
        tabs.firstIndex { $0.webviews.values.contains(webview) }
    }

    /// The tab of `webview`; the selected one when nil or no tab's.
    func tabOrSelected(of webview: ItemID?) -> Int {
        webview.flatMap { tab(of: $0) } ?? selected
    }
}

extension Session {
    /// The session's hotwire-native side, if its profile is `hotwire-native`. (Set back whole:
    /// a change through it copies the state out of the session's existential and back.)
    var hotwire: HotwireState? {
        get { profile as? HotwireState }
        set { profile = newValue }
    }
}

extension Bridge {
    /// Whether `session` is a hotwire-native session.
    public func isHotwireSession(_ sid: String) -> Bool { sessions[sid]?.hotwire != nil }

    /// The profile of a hotwire-native session (the daemon's browser dresses its tabs with it).
    public func hotwireProfile(session sid: String) -> HotwireProfile? { sessions[sid]?.hotwire?.profile }

    /// A new hotwire-native session: its navigator on the root URL, its tree (tab `main`). With
    /// `tabs`, a navigator per tab: the first starts on the root URL in `W1`; each other one has
    /// its web view's id at once (the tree's tab shows it) and starts when first selected.
    func startHotwire(_ s: inout Session, profile: HotwireProfile, url: String) {
        let w1 = ItemID.webview(1)
        func navigator(_ start: String) -> HotwireNavigator {
            HotwireNavigator(platform: profile.platform, configuration: profile.configuration, startURL: start)
        }
        var tabs = [HotwireTabState(navigator: navigator(url), webviews: [.default: w1], started: true)]
        var stacks = [TabStack(name: profile.tabs.first?.title ?? "main", items: [RouteStackItem(id: w1, url: url)])]
        for tab in profile.tabs.dropFirst() {
            let start = tab.url ?? url
            let webview = s.engine.itemIDs.next(.webview)
            tabs.append(HotwireTabState(navigator: navigator(start), webviews: [.default: webview], started: false))
            stacks.append(TabStack(name: tab.title, items: [RouteStackItem(id: webview, url: start)]))
        }
        s.hotwire = HotwireState(profile: profile, tabs: tabs)
        s.tree = NavigationTree(tabs: stacks)
    }

    // MARK: Page events

    /// A page event of a hotwire-native session's page: `true` when it was one of the profile's
    /// (`hotwire.message`, `bridge.message`, `bridge.ready`), handled here. The path configuration
    /// is the daemon's to fetch and report: a page's `hotwire.pathConfiguration` is refused
    /// (`not-allowed`) and changes nothing, so that no page can set the app's rules.
    mutating func hotwirePageEvent(_ client: ClientID, name: String, _ params: JSONObject, _ s: inout Session,
                                   webview: ItemID, now: Int64) throws(ProtocolError) -> Bool {
        guard let h = s.hotwire else { return false }
        switch name {
        case "hotwire.message":
            hotwireMessage(client, params, &s, webview: webview, tab: h.tabOrSelected(of: webview), now: now)
        case "bridge.message":
            bridgeMessage(params, &s, webview: webview)
        case "bridge.ready":
            emit(&s, .bridgeReady) { w in w.key("webview"); w.string(webview.description) }
        case "hotwire.pathConfiguration":
            throw ProtocolError(.notAllowed, "hotwire.pathConfiguration is not a page's to send: the daemon fetches the session's pathConfigurationUrl itself")
        default:
            return false
        }
        return true
    }

    private mutating func hotwireMessage(_ client: ClientID, _ params: JSONObject, _ s: inout Session, webview: ItemID, tab: Int,
                                         now: Int64) {
        let name = params["name"]?.stringValue ?? ""
        let data = params["data"]?.objectValue ?? JSONObject()
        let location = params["location"]?.stringValue
        emit(&s, .hotwireMessage) { w in
            w.key("webview"); w.string(webview.description)
            w.key("name"); w.string(name)
            w.key("data"); w.write(.object(data))
        }
        guard let context = s.hotwire!.tabs[tab].context(of: webview) else { return }
        switch name {
        case "visitProposed":
            guard let target = data["location"]?.stringValue, !target.isEmpty else { return }
            let options = data["options"]?.objectValue ?? JSONObject()
            hotwirePropose(client, &s, HotwireProposal(location: target, options: options, from: webview), now: now)
        case "pageLoaded", "visitCompleted":
            let rid = data["restorationIdentifier"]?.stringValue
            s.hotwire!.tabs[tab].navigator.recordVisit(context: context, restorationIdentifier: rid,
                                                       url: location.map(PageURL.stripClaim))
            redrawHotwire(&s, tab: tab, now: now)
        case "visitStarted":
            // The visit an overlay waits for names its identifier.
            if let overlay = s.hotwire!.overlays[webview], overlay.identifier == nil,
               let started = data["location"]?.stringValue, let identifier = data["identifier"]?.stringValue,
               HotwireNavigator.sameLocation(started, overlay.location, pathOnly: false) {
                s.hotwire!.overlays[webview]!.identifier = identifier
            }
        case "visitRequestFailed", "visitRequestFailedWithNonHttpStatusCode":
            let status = data["statusCode"]?.intValue.map(Int.init) ?? 0
            s.hotwire!.tabs[tab].navigator.recordFailure(context: context, statusCode: status)
            removeHotwireOverlay(&s, webview: webview, identifier: data["identifier"]?.stringValue)
            redrawHotwire(&s, tab: tab, now: now)
        case "formSubmissionFinished":
            s.hotwire!.tabs[tab].navigator.formSubmissionFinished(context: context)
        case "pageInvalidated":
            applyHotwire(s.hotwire!.tabs[tab].navigator.pageInvalidated(context: context), &s, tab: tab, now: now)
        case "visitRendered":
            removeHotwireOverlay(&s, webview: webview, identifier: data["identifier"]?.stringValue)
        default:
            break
        }
    }

    /// The overlay over `webview` goes when the visit it waits for (`identifier`) rendered or failed.
    private mutating func removeHotwireOverlay(_ s: inout Session, webview: ItemID, identifier: String?) {
        guard let overlay = s.hotwire!.overlays[webview], let identifier, overlay.identifier == identifier else { return }
        s.hotwire!.overlays[webview] = nil
        effects.append(.host(.removeOverlay(session: s.id, webview: webview)))
    }

    /// The main web view's page connected for the first time: the host is asked to fetch the
    /// profile's `pathConfigurationUrl` (in that page's frame, with the session's cookies). Once
    /// per session: a page loading again does not fetch it again.
    mutating func askHotwirePathConfiguration(_ s: inout Session, webview: ItemID) {
        guard let h = s.hotwire, h.configurationFetch == .notAsked, let url = h.profile.configurationURL,
              webview == h.tabs[0].webviews[.default] else { return }
        s.hotwire!.configurationFetch = .asked
        effects.append(.host(.fetchPathConfiguration(session: s.id, webview: webview, url: url)))
    }

    /// The host's answer to `fetchPathConfiguration`: the server copy replaces the session's
    /// rules from the next proposal on. A document refused (not JSON, not a path configuration,
    /// over a limit of `HotwirePathConfiguration.Limits`) or a failed fetch changes nothing (the
    /// rules it had stay); either way controllers hear `hotwire.pathConfiguration`. An answer
    /// nobody asked for (another url, a second one) is ignored.
    mutating func hotwirePathConfigurationFetched(_ s: inout Session, url: String, _ fetch: PathConfigurationFetch) {
        guard let h = s.hotwire, h.configurationFetch == .asked, url == h.profile.configurationURL,
              let webview = h.tabs[0].webviews[.default] else { return }
        s.hotwire!.configurationFetch = .answered
        var error: String?
        var rules = 0
        switch fetch {
        case .failed(let why):
            error = why
        case .document(let document):
            do {
                let configuration = try HotwirePathConfiguration(json: document)
                rules = configuration.rules.count
                s.hotwire!.profile.configuration = configuration
                for tab in s.hotwire!.tabs.indices { s.hotwire!.tabs[tab].navigator.configuration = configuration }
            } catch let e {
                error = e.message
            }
        }
        emit(&s, .hotwirePathConfiguration) { w in
            w.key("webview"); w.string(webview.description)
            w.key("url"); w.string(url)
            if let error {
                w.key("error"); w.string(error)
            } else {
                w.key("rules"); w.int(Int64(rules))
            }
        }
    }

    /// A bridge component's message: native delivers it only when its `data.metadata.url` is
    /// the web view's URL; otherwise it is reported as ignored.
    private mutating func bridgeMessage(_ params: JSONObject, _ s: inout Session, webview: ItemID) {
        let data = params["data"]?.objectValue ?? JSONObject()
        let metadataURL = data["metadata"]?["url"]?.stringValue
        let pageURL = params["location"]?.stringValue.map(PageURL.stripClaim) ?? s.engine.webView(webview)?.url
        let ignored = metadataURL == nil || metadataURL != pageURL
        emit(&s, .bridgeMessage) { w in
            w.key("webview"); w.string(webview.description)
            w.key("id"); w.write(params["id"] ?? .null)
            w.key("component"); w.write(params["component"] ?? .null)
            w.key("event"); w.write(params["event"] ?? .null)
            w.key("data"); w.write(.object(data))
            if ignored {
                w.key("ignored"); w.bool(true)
                w.key("reason")
                w.string(metadataURL == nil
                    ? "the message has no data.metadata.url"
                    : "data.metadata.url \(metadataURL!) is not the web view's url \(pageURL ?? "")")
            }
        }
    }

    /// The page of `webview` claimed it: what waited for it is sent.
    mutating func hotwirePageClaimed(_ client: ClientID, _ s: inout Session, webview: ItemID) {
        askHotwirePathConfiguration(&s, webview: webview)
        guard let events = s.hotwire?.pending.removeValue(forKey: webview) else { return }
        for event in events { sendObject(client, event.name, event.params) }
    }

    // MARK: Controller and navigation requests

    /// `bridge.reply {session, webview, id, component, event, data}` (the session is a
    /// hotwire-native one: the core checked): delivered to the page through
    /// `nativeBridge.replyWith`.
    mutating func bridgeReply(_ client: ClientID, id: Int64, _ p: Params, _ s: inout Session) throws(ProtocolError) {
        let sid = s.id
        let text = try p.string("webview")
        guard let wid = ItemID(parsing: text), s.hotwire!.tab(of: wid) != nil else {
            throw ProtocolError(.unknownWebview, "session \(sid) has no web view \"\(text)\"")
        }
        let messageID = try p.string("id")
        let component = try p.string("component")
        let event = try p.string("event")
        var data = JSONObject()
        if let d = p.object["data"] {
            guard case .object(let o) = d else { throw ProtocolError(.invalidParams, "\"data\" must be an object") }
            data = o
        }
        sendResult(client, id: id) { _ in }
        sendToHotwirePage(&s, wid, "bridge.reply", [
            "id": .string(messageID), "component": .string(component), "event": .string(event), "data": .object(data),
        ])
    }

    /// `navigation.back` of a hotwire-native session: a native pop, then a `restore` visit of the
    /// uncovered screen. Answered with `{action: "pop"|"none", removed, stack}` before the events.
    mutating func hotwireBack(_ s: inout Session, client: ClientID?, id: Int64?, now: Int64) {
        let mark = effects.count
        let before = Set(s.engine.stack.map(\.id))
        var action = "none"
        let tab = s.hotwire!.selected
        if let decision = s.hotwire!.tabs[tab].navigator.back() {
            action = "pop"
            applyHotwire(decision, &s, tab: tab, now: now)
        }
        guard let client, let id else { return }
        let removed = before.subtracting(s.engine.stack.map(\.id)).sorted()
        let stack = stackJSON(&s)
        let reply = replyEffect(client) { b in
            b.sendResult(client, id: id) { w in
                w.key("action"); w.string(action)
                w.key("removed"); w.write(.array(removed.map { .string($0.description) }))
                w.key("stack"); w.raw(stack)
            }
        }
        effects.insert(contentsOf: reply, at: mark)
    }

    /// A navigation of a hotwire-native session that Turbo did not make (a stopped document
    /// load, `window.open`, a page's `navigate`, `navigation.navigateToUrl`): proposed with
    /// `advance` from the context of `webview` (the active one when nil).
    mutating func hotwireNavigate(_ client: ClientID?, _ s: inout Session, url: String, from webview: ItemID?,
                                  reply: HotwireProposal.Reply, now: Int64) {
        hotwirePropose(client, &s, HotwireProposal(location: url, options: ["action": "advance"], from: webview, reply: reply),
                       now: now)
    }

    /// A proposal: when it will cover a web screen (its web view visits another screen and the
    /// covered one stays below as a placeholder), `client` waits, as a PWA's `pwa-navigate`
    /// does, until the browser has pictured that web view as it is now (Bridge+Host.swift);
    /// then the proposal is decided and the covered screen's placeholder keeps the picture
    /// (`placeholder.snapshot`, and the overlay of a back to it). Without a client it goes
    /// ahead with no picture.
    mutating func hotwirePropose(_ client: ClientID?, _ s: inout Session, _ p: HotwireProposal, now: Int64) {
        let tab = s.hotwire!.tabOrSelected(of: p.from)
        let t = s.hotwire!.tabs[tab]
        let context = p.from.flatMap { t.context(of: $0) } ?? t.navigator.activeContext
        let before = t.navigator.shown
        if let client, snapshotInHand == nil {
            var trial = t.navigator
            _ = trial.propose(location: p.location, options: p.options, from: context)
            if let covered = Self.coveredContext(before: t.navigator, after: trial), let webview = t.webviews[covered] {
                holdForSnapshot(client, &s, webview: webview, p, request: p.reply.request)
                return
            }
        }
        let mark = effects.count
        let decision = s.hotwire!.tabs[tab].navigator.propose(location: p.location, options: p.options, from: context)
        applyHotwire(decision, &s, tab: tab, now: now)
        if let image = snapshotInHand, !image.isEmpty {
            // The screen the pictured web view showed, if it became a placeholder.
            for (context, screen) in before where s.hotwire!.tabs[tab].navigator.shown[context] != screen {
                if let item = s.hotwire!.tabs[tab].items[screen], item.kind == .placeholder {
                    store(image, placeholder: item, in: &s.browser!)
                    break
                }
            }
        }
        guard let client else { return }
        switch p.reply {
        case .none:
            break
        case .handledBy(let id):
            // Before the events it caused (a `hotwire.cacheSnapshot` or `hotwire.visit` to this page).
            let reply = replyEffect(client) { b in b.sendResult(client, id: id) { w in w.key("handledBy"); w.string("hotwire-native") } }
            effects.insert(contentsOf: reply, at: mark)
        case .stack(let id):
            let stack = stackJSON(&s)
            let reply = replyEffect(client) { b in b.sendResult(client, id: id) { w in w.key("stack"); w.raw(stack) } }
            effects.insert(contentsOf: reply, at: mark)
        }
    }

    /// The context whose web view a decision takes to another screen while the screen it shows
    /// stays on a stack (it becomes a placeholder): that web view is pictured first.
    static func coveredContext(before: HotwireNavigator, after: HotwireNavigator) -> HotwireContext? {
        for context in HotwireContext.allCases {
            guard let shown = before.shown[context], let now = after.shown[context], now != shown,
                  after.stack(context).contains(where: { $0.id == shown }) else { continue }
            return context
        }
        return nil
    }

    // MARK: Applying decisions

    /// Sends `name` to the page of `webview`, or keeps it until the page connects.
    mutating func sendToHotwirePage(_ s: inout Session, _ webview: ItemID, _ name: String, _ params: JSONObject) {
        if let client = s.pages[webview] {
            sendObject(client, name, params)
        } else {
            s.hotwire!.pending[webview, default: []].append(HotwirePageEvent(name: name, params: params))
        }
    }

    private mutating func sendObject(_ client: ClientID, _ name: String, _ params: JSONObject) {
        sendEvent(client, name) { w in
            for (key, value) in zip(params.keys, params.values) {
                w.key(key); w.write(value)
            }
        }
    }

    /// The tree's items for one context's screens in tab `h`.
    private func hotwireItems(_ h: HotwireTabState, _ context: HotwireContext, ids: inout ItemIDAllocator,
                              used: inout [Int: ItemID]) -> [RouteStackItem] {
        let nav = h.navigator
        let screens = nav.stack(context)
        guard let web = h.webviews[context] else { return [] }
        let webIndex = screens.lastIndex { $0.id == nav.shown[context] } ?? screens.lastIndex { $0.isWeb }
        return screens.enumerated().map { i, screen in
            var item: RouteStackItem
            if i == webIndex {
                item = RouteStackItem(id: web, url: screen.url)
            } else if let native = screen.nativeScreen {
                let id = h.items[screen.id].flatMap { $0.kind == .native ? $0 : nil } ?? ids.next(.native)
                used[screen.id] = id
                item = RouteStackItem(id: id, url: screen.url, screen: native)
            } else {
                let id = h.items[screen.id].flatMap { $0.kind == .placeholder ? $0 : nil } ?? ids.next(.placeholder)
                used[screen.id] = id
                item = RouteStackItem(id: id, url: screen.url, of: web)
            }
            item.restorationIdentifier = screen.restorationIdentifier
            item.statusCode = screen.failedStatus
            return item
        }
    }

    /// The engine's items for the active stack of the tree.
    private mutating func hotwireEngineStack(_ items: [RouteStackItem], _ s: inout Session) -> [StackItem] {
        items.map { r -> StackItem in
            switch r.kind {
            case .webview:
                if let i = s.engine.index(of: r.id), case .webview(var w) = s.engine.stack[i] {
                    w.url = r.url
                    return .webview(w)
                }
                return .webview(WebView(id: r.id, mode: .classic, url: r.url, connected: s.pages[r.id] != nil,
                                        token: issueToken(&s, r.id)))
            case .placeholder:
                return .placeholder(Placeholder(id: r.id, of: r.of ?? r.id, url: r.url))
            case .native:
                return .native(NativeScreen(id: r.id, url: r.url, screen: r.screen))
            }
        }
    }

    /// Brings the tree and the engine in step with the navigator after a report that changed no
    /// screen (URLs, restoration identifiers, failures) in tab `tab`: no `stack.changed`.
    mutating func redrawHotwire(_ s: inout Session, tab: Int, now: Int64) {
        applyHotwire(HotwireDecision(presentation: .none, outcome: [], commands: [], changed: false), &s, tab: tab, now: now)
    }

    /// Draws the navigators' stacks as the session's tree and engine stack, opens or closes the
    /// modal web view of tab `tab` (the one whose navigator decided `d`), and sends the
    /// decision's commands to that tab's pages.
    mutating func applyHotwire(_ d: HotwireDecision, _ s: inout Session, tab: Int, now: Int64) {
        guard var h = s.hotwire else { return }
        let sid = s.id
        let nav = h.tabs[tab].navigator
        var opened: (webview: ItemID, url: String, token: String, kept: ItemID?)?
        var removed: [ItemID] = []
        if !nav.modal.isEmpty, h.tabs[tab].webviews[.modal] == nil {
            let webview = s.engine.itemIDs.next(.webview)
            let token = issueToken(&s, webview)
            h.tabs[tab].webviews[.modal] = webview
            let shown = nav.modal.last { $0.id == nav.shown[.modal] } ?? nav.modal.last!
            opened = (webview, shown.url, token, h.tabs[tab].keptModal)
            h.tabs[tab].keptModal = nil
        }
        if nav.modal.isEmpty, let modal = h.tabs[tab].webviews.removeValue(forKey: .modal) {
            removed.append(modal)
            h.pending[modal] = nil
            h.overlays[modal] = nil
            // iOS keeps the modal session's web view: its tab waits for the next presentation
            // (unless DevTools clients watch the tabs: `BridgeConfiguration.keepsTabs`).
            if h.profile.platform == .ios, configuration.keepsTabs { h.tabs[tab].keptModal = modal }
        }
        // The pictures of the screens this decision visits again (their placeholders go now).
        var pictures: [Int: [UInt8]] = [:]
        for visit in d.visits {
            if let item = h.tabs[tab].items[visit.screen], item.kind == .placeholder, let image = s.browser?.snapshot(of: item) {
                pictures[visit.screen] = image
            }
        }
        // Every tab's screens (tab `tab`'s changed; the others are drawn as they were).
        var ids = s.engine.itemIDs
        var stacks: [TabStack] = []
        var modalItems: [RouteStackItem] = []
        for other in h.tabs.indices {
            var used: [Int: ItemID] = [:]
            let main = hotwireItems(h.tabs[other], .default, ids: &ids, used: &used)
            let modal = hotwireItems(h.tabs[other], .modal, ids: &ids, used: &used)
            if other == tab { removed.append(contentsOf: Set(h.tabs[other].items.values).subtracting(used.values).sorted()) }
            h.tabs[other].items = used
            stacks.append(TabStack(name: h.profile.tabs.isEmpty ? "main" : h.profile.tabs[other].title, items: main))
            if other == h.selected { modalItems = modal }
        }
        s.engine.itemIDs = ids
        let before = s.tree ?? NavigationTree(tabs: [TabStack(name: "main", items: [])])
        let tree = NavigationTree(tabs: stacks, activeTab: h.selected, modal: modalItems)
        s.tree = tree
        s.hotwire = h
        let newStack = hotwireEngineStack(tree.activeStack, &s)
        let oldStackIDs = s.engine.stack.map(\.id)
        let transitions = before == tree ? [] : TreeDiff.diff(before, tree)
        var list = takeEffectStorage()
        _ = s.engine.handle(.adopt(stack: newStack, removed: removed, singleTab: false), at: now, into: &list)
        flush(&list, &s, cause: d.cause, transitions: transitions, now: now)
        returnEffectStorage(&list)
        if d.changed, !transitions.isEmpty, s.engine.stack.map(\.id) == oldStackIDs {
            emitStackChanged(&s, cause: d.cause, transitions: transitions)
        }
        for id in removed { s.webTokens[id] = nil }
        if removed.contains(where: { $0.kind == .webview }), tab == s.hotwire!.selected,
           let main = s.hotwire!.tabs[tab].webviews[.default] {
            // The modal's tab went: the main web view shows again (and draws: Turbo renders in
            // animation frames, which a tab in the background does not get).
            effects.append(.host(.showTab(session: sid, webview: main)))
        }
        if let opened {
            rememberToken(&s, opened.webview, opened.token)
            emitWebviewOpen(&s, opened.webview, url: opened.url, token: opened.token)
            if let kept = opened.kept {
                // The modal's kept tab shows this presentation: its page, claiming the new web
                // view, visits the screen (the visit below, kept until that page connects).
                effects.append(.host(.reuseTab(session: sid, webview: opened.webview, kept: kept, url: opened.url, token: opened.token)))
            } else {
                effects.append(.host(.openTab(session: sid, webview: opened.webview, url: opened.url, token: opened.token,
                                              post: nil, root: false)))
            }
            if let h = s.hotwire, tab != h.selected, let top = h.topWebView(of: h.selected) {
                // A tab in the background presented a modal: the selected tab stays in front.
                effects.append(.host(.showTab(session: sid, webview: top)))
            }
        }
        for command in d.commands {
            switch command {
            case .visit(let visit):
                guard let webview = s.hotwire!.tabs[tab].webviews[visit.context] else { continue }
                // A new tab's first load is the cold boot (a kept one's page visits).
                if webview == opened?.webview, opened?.kept == nil { continue }
                if visit.coldBoot {
                    sendToHotwirePage(&s, webview, "hotwire.reload", [:])
                    continue
                }
                if let image = pictures[visit.screen] {
                    // Native shows the screen's screenshot until the visit renders.
                    s.hotwire!.overlays[webview] = HotwireOverlay(location: visit.url)
                    effects.append(.host(.showOverlay(session: sid, webview: webview, image: image)))
                } else if s.hotwire!.overlays.removeValue(forKey: webview) != nil {
                    effects.append(.host(.removeOverlay(session: sid, webview: webview)))
                }
                sendToHotwirePage(&s, webview, "hotwire.visit", [
                    "location": .string(visit.url), "options": visit.options,
                    "restorationIdentifier": visit.restorationIdentifier.map(JSONValue.string) ?? .null,
                ])
            case .cacheSnapshot(let context):
                if let webview = s.hotwire!.tabs[tab].webviews[context] { sendToHotwirePage(&s, webview, "hotwire.cacheSnapshot", [:]) }
            case .clearSnapshotCache(let context):
                if let webview = s.hotwire!.tabs[tab].webviews[context] {
                    sendToHotwirePage(&s, webview, "hotwire.clearSnapshotCache", [:])
                }
            case .restoreCurrentVisit(let context):
                if let webview = s.hotwire!.tabs[tab].webviews[context] {
                    sendToHotwirePage(&s, webview, "hotwire.restoreCurrentVisit", [:])
                }
            case .openExternal(let url):
                let from = s.hotwire!.tabs[tab].webviews[s.hotwire!.tabs[tab].navigator.activeContext]
                emitExternalOpen(&s, url: url, from: from)
            }
        }
        updateIdle(&s, now: now)
    }

}
