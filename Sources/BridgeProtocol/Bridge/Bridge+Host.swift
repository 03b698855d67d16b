/// Browser sessions: the part of the protocol a host (the daemon's browser) carries out.
///
/// The machine stays pure. A session created with `browser: true` has a `BrowserState`; what
/// its browser must do leaves as `BridgeEffect.host(HostWork)` (a tab per web view, snapshots,
/// overlays, the controller requests only a browser answers), and what the browser did comes
/// back as `BridgeInput.host(HostResult)`. The browser handles the session's `webview.open`
/// (every new web view is a tab) without being a client.
///
/// **Waiting connections.** A connection whose request the browser answers (`session.create
/// {browser: true}`, `webview.evaluate`, …), and a page of a browser session whose `pwa-navigate`
/// waits for its snapshot, is *held*: its later frames wait, in order, and so do the frames for
/// it, so that its replies keep request order and each comes before the events its request
/// caused. The snapshot rule: a browser session's `pwa-navigate` is answered after its snapshot
/// (the PWA changes nothing until the reply, so the tab shows what the placeholder stands for).

/// A connection waiting for the browser, with what waits with it.
struct HeldConnection: Equatable {
    enum Wait: Equatable {
        /// `session.create {browser: true}`: `reply` goes once the root tab opened.
        case sessionOpen(session: String, id: Int64, reply: [UInt8])
        /// A page's `pwa-navigate` (request `id`, or an event), not handled yet: it is, with
        /// the picture, once the snapshot of its tab is taken.
        case snapshot(session: String, webview: ItemID, navigate: PendingNavigate)
        /// A request the browser answers (`HostAnswer`).
        case answer(id: Int64)
        /// A request (`id`; nil: an event) a profile decides once the browser has read the
        /// history of `webview`'s tab (`HostWork.readHistory`): released by `historyRead`,
        /// whose profile hook answers it first.
        case history(session: String, webview: ItemID, id: Int64?)
    }
    var wait: Wait
    /// Frames for the connection, held back (its reply goes first).
    var outbound: [BridgeEffect] = []
    /// What came from (or for) the connection meanwhile, not handled yet, in order.
    var inbound: [Waiting] = []

    enum Waiting: Equatable {
        /// A frame the connection sent.
        case frame([UInt8])
        /// What the browser saw its page do (`urlChanged`), in order with its frames.
        case host(HostResult)
    }
}

/// A `pwa-navigate` waiting for its snapshot, as it was checked; or (`profile`) what a
/// session's profile had wait for a snapshot (`holdForSnapshot`), resumed by its `resume` hook.
struct PendingNavigate: Equatable {
    var id: Int64?
    var url: String?
    var title: String?
    var profile: ProfileBox?
}

extension Bridge {
    /// Whether `session` was created with `browser: true`.
    public func isBrowserSession(_ sid: String) -> Bool { sessions[sid]?.browser != nil }

    /// The profile `session` has now (nil: no such session): what its tabs get injected.
    public func sessionProfile(_ sid: String) -> SessionProfile? {
        guard let s = sessions[sid] else { return nil }
        return SessionProfile(s.profile?.configuration)
    }

    /// Whether the tab of `webview` gets the profile's page script (`ProfileState.injectsPageScript`;
    /// every tab of a session whose profile has one, unless the profile says otherwise).
    public func injectsProfileScript(session sid: String, webview: ItemID) -> Bool {
        guard let profile = sessions[sid]?.profile else { return true }
        return profile.injectsPageScript(into: webview)
    }

    /// The connection speaking for `webview` of `session`, if one does.
    public func pageClient(session sid: String, webview: ItemID) -> ClientID? {
        sessions[sid]?.pages[webview]
    }

    /// The snapshot of `placeholder` of a browser session, as a JPEG (for
    /// `GET /api/sessions/S/placeholders/Pn.jpg`).
    public func snapshot(session sid: String, placeholder: ItemID) -> [UInt8]? {
        sessions[sid]?.browser?.snapshot(of: placeholder)
    }

    /// Whether the machine waits for the browser on behalf of `client`.
    public func isHeld(_ client: ClientID) -> Bool { held[client] != nil }

    /// Web views of a browser session whose tab failed: (web view, url, reason).
    public func failedWebViews(session sid: String) -> [(webview: ItemID, url: String, reason: String)] {
        (sessions[sid]?.browser?.failed ?? []).map { ($0.webview, $0.url, $0.reason) }
    }

    // MARK: Holding connections

    /// Moves the frames and closes for held connections queued since `mark` into their
    /// connection's outbound queue. A controller waiting for the browser's answer to one of its
    /// requests (`webview.evaluate` on a busy page, say) still hears events at once: its reply
    /// keeps its place among its replies, and an event is no reply (nothing its waiting request
    /// caused is sent before it answers: that request has done nothing yet).
    mutating func divertHeld(from mark: Int) {
        var i = mark
        while i < effects.count {
            let target: ClientID?
            switch effects[i] {
            case .send(let c, let bytes):
                if case .answer? = held[c]?.wait, Self.isEventFrame(bytes) {
                    target = nil
                } else {
                    target = c
                }
            case .close(let c, _, _): target = c
            default: target = nil
            }
            if let target, held[target] != nil {
                held[target]!.outbound.append(effects.remove(at: i))
            } else {
                i += 1
            }
        }
    }

    /// Whether `frame` is an event (`{"event":…`, as `emit` writes them), not a reply.
    static func isEventFrame(_ frame: [UInt8]) -> Bool {
        let prefix: StaticString = #"{"event":"#
        guard frame.count >= prefix.utf8CodeUnitCount else { return false }
        return prefix.withUTF8Buffer { p in
            for k in 0..<p.count where frame[k] != p[k] { return false }
            return true
        }
    }

    mutating func hold(_ client: ClientID, _ wait: HeldConnection.Wait) {
        held[client] = HeldConnection(wait: wait)
    }

    /// A profile's decision about `client`'s request `id` waits, the connection with it, until the
    /// browser has read `webview`'s history (`HostWork.readHistory`, asked for by the profile):
    /// the profile's `hostResult` hook answers it on `historyRead`, before the frames the
    /// connection sent meanwhile.
    mutating func holdForHistory(_ client: ClientID, session sid: String, webview: ItemID, id: Int64?) {
        hold(client, .history(session: sid, webview: webview, id: id))
    }

    /// Ends `client`'s wait: `first` (its reply) goes, then what was held back for it, then the
    /// frames it sent meanwhile are handled in order, until one of them waits again.
    mutating func release(_ client: ClientID, first: [BridgeEffect], now: Int64, resume: (inout Self) -> Void = { _ in }) {
        guard let h = held.removeValue(forKey: client) else { return }
        effects.append(contentsOf: first)
        effects.append(contentsOf: h.outbound)
        let mark = effects.count
        resume(&self)
        if !held.isEmpty { divertHeld(from: mark) }
        var i = 0
        while i < h.inbound.count {
            if held[client] != nil {
                held[client]!.inbound.append(contentsOf: h.inbound[i...])
                return
            }
            switch h.inbound[i] {
            case .frame(let bytes):
                // A connection closed while it waited (its page replaced, sent away, its
                // session closed: `Client.Role.detached`, which always comes with the close)
                // is read no further: its close went out above, and nothing follows a close.
                if case .detached? = clients[client]?.role { break }
                let mark = effects.count
                bytes.withUnsafeBytes { received(client, text: $0, at: now) }
                if !held.isEmpty { divertHeld(from: mark) }
            case .host(let result):
                hostResult(result, now: now)
            }
            i += 1
        }
    }

    /// A reply frame for a held request, as an effect (not queued).
    mutating func replyEffect(_ client: ClientID, _ write: (inout Self) -> Void) -> [BridgeEffect] {
        let mark = effects.count
        write(&self)
        let out = Array(effects[mark...])
        effects.removeSubrange(mark...)
        return out
    }

    // MARK: Requests

    /// `session.create {url, browser: true}`: the session is created as usual, its root web view
    /// becomes a tab, and the creator's reply waits for it.
    /// (No `client`: the daemon's own `bridged open`, answered to no one.)
    /// With a `profile`, the profile starts the session (Profiles/); its result says which.
    mutating func createBrowserSession(_ client: ClientID?, id: Int64?, url: String, profile: SessionProfile = .plain,
                                       shell: ShellSettings? = nil, now: Int64) throws(ProtocolError) {
        try createSession(url: url, connectedBy: nil, subscriber: client, cause: BridgeMethod.sessionCreate.name, now: now) { b, s in
            s.browser = BrowserState()
            if let shell { s.browser!.shell.settings = shell }
            let sid = s.id
            let w1 = ItemID.webview(1)
            let token = s.engine.webView(w1)!.token
            let rootURL = s.engine.webView(w1)?.url ?? url
            profile.behavior?.start(&b, &s, url: rootURL)
            s.browser!.tabbed.insert(w1)
            s.browser!.front = w1
            defer { b.effects.append(.host(.openTab(session: sid, webview: w1, url: rootURL, token: token, post: nil, root: true))) }
            guard let client, let id else { return }
            var w = JSONWriter(capacity: 256)
            w.beginObject()
            w.key("id"); w.int(id)
            w.key("result"); w.beginObject()
            w.key("session"); w.string(sid)
            w.key("webview"); w.string(w1.description)
            w.key("token"); w.string(token)
            w.key("pageUrl"); w.string(PageURL.withClaim(url, session: sid, webview: w1, token: token))
            w.key("browser"); w.bool(true)
            if !profile.isPlain { w.key("profile"); w.string(profile.name) }
            w.endObject()
            w.endObject()
            b.hold(client, .sessionOpen(session: sid, id: id, reply: w.bytes))
        }
    }

    /// The methods a browser answers: checked here, carried out by the host (a snapshot is
    /// answered from the session's own).
    mutating func hostRequest(_ client: ClientID, id: Int64, method: HostMethod, named name: BridgeMethod, _ p: Params) throws(ProtocolError) {
        let (s, browser) = try browserSession(p, for: name)
        let sid = s.id
        let request = HostRequest(client: client, id: id)
        func webview() throws(ProtocolError) -> ItemID {
            let wid = try requestedWebView(p, in: s)
            if let f = browser.failed.first(where: { $0.webview == wid }) {
                throw ProtocolError(.browserError, "\(wid) of session \(sid) has no page: \(f.url) failed to load (\(f.reason))")
            }
            if let refusal = shellRefusal(s, wid) { throw refusal }
            return wid
        }
        let work: HostWork
        switch method {
        case .screenshot:
            guard let top = s.engine.top else { throw ProtocolError(.unknownWebview, "session \(sid) has an empty stack") }
            if let f = browser.failed.first(where: { $0.webview == top.id }) {
                throw ProtocolError(.browserError, "\(top.id) of session \(sid) has no page: \(f.url) failed to load (\(f.reason))")
            }
            if let refusal = shellRefusal(s, top.id) { throw refusal }
            work = .screenshot(request, session: sid, target: top.id)
        case .snapshot:
            let text = try p.string("placeholder")
            guard let pid = ItemID(parsing: text), pid.kind == .placeholder,
                  s.engine.stack.contains(where: { $0.id == pid }) || (s.profileDrawsTree && s.tree?.locate(pid) != nil) else {
                throw ProtocolError(.invalidParams, "session \(sid) has no placeholder \"\(text)\" on its stack")
            }
            try sendSnapshot(client, id: id, browser.snapshot(of: pid), placeholder: pid)
            return
        case .evaluate:
            let wid = try webview()
            work = .evaluate(request, session: sid, webview: wid, expression: try p.string("expression"))
        case .click:
            let wid = try webview()
            work = .click(request, session: sid, webview: wid, selector: try p.string("selector"))
        case .type:
            let wid = try webview()
            let selector = try p.string("selector")
            work = .type(request, session: sid, webview: wid, selector: selector, text: try p.string("text"))
        }
        hold(client, .answer(id: id))
        effects.append(.host(work))
    }

    /// The browser session a request names, and its browser side (`invalid-params` for a
    /// session without one).
    func browserSession(_ p: Params, for method: BridgeMethod) throws(ProtocolError) -> (Session, BrowserState) {
        let sid = try p.session()
        guard let s = sessions[sid] else { throw unknownSession(sid) }
        guard let browser = s.browser else {
            throw ProtocolError(.invalidParams, "session \(sid) has no browser: \(method.name) needs a session created with {\"browser\": true}")
        }
        return (s, browser)
    }

    /// The web view a request names (`webview`): one on the session's stack or its profile's.
    func requestedWebView(_ p: Params, in s: Session) throws(ProtocolError) -> ItemID {
        let text = try p.string("webview")
        guard let wid = ItemID(parsing: text), wid.kind == .webview,
              s.engine.webView(wid) != nil || s.profile?.hasWebView(wid) == true else {
            throw ProtocolError(.unknownWebview, "session \(s.id) has no web view \"\(text)\" on its stack")
        }
        return wid
    }

    mutating func sendSnapshot(_ client: ClientID, id: Int64, _ jpeg: [UInt8]?, placeholder: ItemID) throws(ProtocolError) {
        guard let jpeg else {
            throw ProtocolError(.browserError, "no snapshot of \(placeholder): it was taken before the session's snapshot budget dropped it, or the browser could not take it")
        }
        sendResult(client, id: id) { w in
            w.key("mimeType"); w.string("image/jpeg")
            w.key("data"); w.string(Base64.encode(jpeg))
        }
    }

    // MARK: The browser's part of the session's life

    /// A page of a browser session sent `pwa-navigate`: it waits, the page's connection with
    /// it, until the browser has pictured the tab as it is now (the PWA changes nothing until
    /// the reply, so the picture is what the placeholder will stand for). Nil: go ahead (no
    /// browser, or the snapshot is in hand).
    mutating func waitForSnapshot(_ client: ClientID, _ s: inout Session, webview: ItemID, _ navigate: PendingNavigate) -> Bool {
        guard s.isBrowser, snapshotInHand == nil else { return false }
        hold(client, .snapshot(session: s.id, webview: webview, navigate: navigate))
        effects.append(.host(.takeSnapshot(session: s.id, webview: webview)))
        return true
    }

    /// A profile's `waiting` (a proposal) waits, `client`'s connection with it, until the browser
    /// has pictured `webview`'s tab as it is now; then the profile's `resume` goes on with it.
    /// `request`: the id of `client`'s request that waits for it, if any (answered
    /// `unknown-session` when the session closes meanwhile: no `resume` then).
    mutating func holdForSnapshot(_ client: ClientID, _ s: inout Session, webview: ItemID, _ waiting: any ProfileValue, request: Int64?) {
        hold(client, .snapshot(session: s.id, webview: webview, navigate: PendingNavigate(id: request, profile: ProfileBox(waiting))))
        effects.append(.host(.takeSnapshot(session: s.id, webview: webview)))
    }

    /// The `pwa-navigate` made `placeholder`: it gets the picture in hand.
    mutating func keepSnapshot(_ s: inout Session, placeholder: ItemID) {
        guard s.isBrowser, let image = snapshotInHand else { return }
        store(image, placeholder: placeholder, in: &s.browser!)
    }

    /// The browser's part of an engine observation (browser sessions).
    mutating func browserObserve(_ s: inout Session, _ observation: Observation) {
        let sid = s.id
        switch observation {
        case .webviewOpen(let webview, let url, let token):
            // A tab opened is in front (`browserKeepFront`).
            s.browser!.tabbed.insert(webview)
            s.browser!.front = webview
            let post = s.browser!.posts.removeValue(forKey: url)
            effects.append(.host(.openTab(session: sid, webview: webview, url: url, token: token, post: post, root: false)))
        case .webviewClosed(let webview):
            // Its `webview.open` first, if its tab never opened.
            announceOpen(&s, webview)
            s.browser!.tabbed.remove(webview)
            // What is in front after the close is the browser's choice: not known here.
            if s.browser!.front == webview { s.browser!.front = nil }
            s.browser!.targetIds[webview] = nil
            s.browser!.waitingNavigations[webview] = nil
            s.browser!.failed.removeAll { $0.webview == webview }
            s.browser!.shell.forget(webview)
            let keep = s.profile?.keepsTab(of: webview) ?? false
            effects.append(.host(keep ? .keepTab(session: sid, webview: webview) : .closeTab(session: sid, webview: webview)))
        case .stackChanged:
            // Snapshots go with their placeholders; the last one to go is kept for the overlay.
            guard !s.browser!.snapshots.isEmpty else { return }
            // (A session whose profile draws its tree has its placeholders on the tree's stacks.)
            let ids = s.profileDrawsTree && s.tree != nil ? Set(s.tree!.tabs.flatMap { $0.items.map(\.id) } + s.tree!.modal.map(\.id)) : Set(s.engine.stack.map(\.id))
            if let gone = s.browser!.snapshots.last(where: { !ids.contains($0.placeholder) }) {
                s.browser!.discarded = gone.jpeg
                s.browser!.snapshots.removeAll { !ids.contains($0.placeholder) }
            }
        case .foregroundShown(let webview, let kind, _):
            let image = kind == .placeholder ? s.browser!.discarded : nil
            effects.append(.host(.showOverlay(session: sid, webview: webview, image: image)))
        case .foregroundRemoved(let webview, _, _):
            effects.append(.host(.removeOverlay(session: sid, webview: webview)))
        default:
            break
        }
    }

    /// A routed browser session (`--config`) shows its active stack's top web view. Its stacks'
    /// tabs all live in one browser context, and pushes and pops alone do not say which tab is
    /// in front: after a step whose top is a web view other than the one last in front, that
    /// web view's tab is brought to the front; one never opened (the root of a tab selected for
    /// the first time: the tree made it, nobody opened it) gets its tab, as a pushed one does;
    /// one still opening comes to the front when it opens. A native screen on top changes
    /// nothing. (A profile that draws its tree shows its tabs itself; plain sessions have one
    /// stack, whose top is always the tab last opened or uncovered.)
    mutating func browserKeepFront(_ s: inout Session) {
        guard s.isRouted, !s.profileDrawsTree, s.browser != nil, let top = s.engine.top?.id, top.kind == .webview,
              s.browser!.front != top else { return }
        if s.browser!.tabbed.contains(top) {
            s.browser!.front = top
            effects.append(.host(.showTab(session: s.id, webview: top)))
        } else {
            announceRouterWebView(&s, top)
        }
    }

    /// A page claimed a web view of a browser session: its profile hears it, and a navigation
    /// its tab stopped before it connected is decided now.
    mutating func browserPageClaimed(_ client: ClientID, _ s: inout Session, webview: ItemID, now: Int64) {
        if let profile = s.profile { type(of: profile).pageConnected(&self, client, &s, webview: webview) }
        guard let stop = s.browser?.waitingNavigations.removeValue(forKey: webview) else { return }
        navigationStopped(stop, &s, now: now)
    }

    mutating func navigationStopped(_ stop: NavigationStop, _ s: inout Session, now: Int64) {
        guard let client = s.pages[stop.webview] else {
            if s.engine.webViews.contains(where: { $0.id == stop.webview }) {
                // Its page has not connected yet: the navigation waits for it.
                s.browser!.waitingNavigations[stop.webview] = stop
            }
            return
        }
        guard shellAllowsTab(&s, for: stop), !shellOpensOutside(&s, stop) else { return }
        if stop.method != "GET" { s.browser!.posts[PageURL.stripClaim(stop.url)] = stop }
        // Exactly as the page's own `navigate` event.
        navigate(&s, from: stop.webview, client: client, url: stop.url, replyTo: nil, now: now)
    }

    // MARK: Results

    mutating func hostResult(_ result: HostResult, now: Int64) {
        var releases: [(ClientID, [BridgeEffect])] = []
        var resumes: [ClientID: (ItemID, PendingNavigate, [UInt8]?)] = [:]
        var abandon: String?
        let mark = effects.count
        switch result {
        case .tabOpened(let sid, let webview, let targetId, let contextId):
            withSession(sid) { b, s in
                guard s.browser != nil, b.exists(webview, in: s) else { return }
                // (Empty in a trace recorded before the ids were: unknown.)
                if !targetId.rawValue.isEmpty { s.browser!.targetIds[webview] = targetId.rawValue }
                if !contextId.rawValue.isEmpty { s.browser!.browserContextId = contextId.rawValue }
                b.announceOpen(&s, webview)
                // A routed session's tab opened in front of the one shown since it was asked for
                // (a tab selected, then another at once): the shown one comes forward again.
                if s.isRouted, !s.profileDrawsTree, let front = s.browser!.front, front != webview, s.browser!.tabbed.contains(front) {
                    b.effects.append(.host(.showTab(session: sid, webview: front)))
                }
            }
            guard webview == .webview(1), let (client, h) = heldFor(sessionOpen: sid) else { break }
            guard case .sessionOpen(_, _, let reply) = h.wait else { break }
            releases.append((client, [.send(client, reply)]))
        case .tabFailed(let sid, let webview, let url, let reason):
            if webview == .webview(1), let (client, h) = heldFor(sessionOpen: sid), case .sessionOpen(_, let id, _) = h.wait {
                // The session cannot have its root: the creator hears why, the session goes.
                releases.append((client, replyEffect(client) { b in
                    b.sendError(client, id: id, ProtocolError(.browserError, reason))
                }))
                abandon = sid
                break
            }
            withSession(sid) { b, s in
                guard s.browser != nil, b.exists(webview, in: s) else { return }
                b.announceOpen(&s, webview)
                s.browser!.failed.removeAll { $0.webview == webview }
                s.browser!.failed.append(BrowserState.Failure(webview: webview, url: url, reason: reason))
                b.emit(&s, .webviewFailed) { w in
                    w.key("webview"); w.string(webview.description)
                    w.key("url"); w.string(url)
                    w.key("reason"); w.string(reason)
                }
            }
        case .snapshotTaken(let sid, let webview, let image):
            for (client, h) in held.sorted(by: { $0.key < $1.key }) {
                guard case .snapshot(sid, webview, let navigate) = h.wait else { continue }
                releases.append((client, []))
                resumes[client] = (webview, navigate, image)
            }
            // Picturing a tab brings it to the front. Another web view pushed on top while the
            // picture was taken (its tab may have come to the front before) is shown again: a
            // tab behind draws no frames.
            withSession(sid) { b, s in
                guard s.browser != nil, let top = s.engine.top?.id, top.kind == .webview, top != webview,
                      resumes.values.contains(where: { $0.0 == webview }) else { return }
                b.effects.append(.host(.showTab(session: sid, webview: top)))
            }
        case .navigationStopped(let stop):
            withSession(stop.session) { b, s in
                guard s.browser != nil else { return }
                b.navigationStopped(stop, &s, now: now)
            }
        case .historyTraversed(let sid, let webview):
            withSession(sid) { b, s in
                guard s.browser != nil else { return }
                if let profile = s.profile, type(of: profile).historyTraversed(&b, &s, webview: webview, now: now) { return }
                if s.pages[webview] != nil {
                    // As the page's own `back`.
                    b.back(&s, requester: webview, replyTo: nil, cause: BridgeMethod.back.name, now: now)
                } else if s.engine.top?.id == webview {
                    // The traversal ended the page's document and its connection went first: a
                    // back on its behalf (it was the top, as a page's `back` requires).
                    b.back(&s, requester: nil, replyTo: nil, cause: BridgeMethod.navigationBack.name, now: now)
                }
            }
        case .urlChanged(let sid, let webview, let url):
            let clean = PageURL.stripClaim(url)
            if let client = sessions[sid]?.pages[webview], held[client] != nil {
                // Its page waits (a pwa-navigate for its snapshot): the change comes after.
                held[client]!.inbound.append(.host(result))
                break
            }
            withSession(sid) { b, s in
                // Only a page that never announced a state (classic): a PWA's address changes
                // come with its pwa-navigate (and its own pwa-navigated), and the browser's report
                // can overtake the pwa-navigate it belongs to, which must stack a placeholder with
                // the url from before. Nor while the page's own request waits (held).
                guard s.isBrowser, let page = s.pages[webview], b.held[page] == nil, let current = s.engine.webView(webview),
                      current.mode == .classic, current.url != clean,
                      (try? b.checkURL(clean, "url")) != nil,
                      (try? b.checkURLChange(s, webview: webview, url: clean)) != nil else { return }
                let before = current.url
                b.run(&s, .pwaNavigated(from: webview, url: clean), cause: PageEventName.pwaNavigated.name, now: now) { b, s, result in
                    guard case .success = result else { return }
                    s.browser!.lastURLReport = BrowserState.URLReport(webview: webview, before: before, after: clean, at: now)
                    b.emitPwaNavigated(&s, webview, url: clean, source: "browser")
                }
            }
        case .answered(let request, let answer):
            guard case .answer(request.id)? = held[request.client]?.wait else { break }
            let client = request.client
            releases.append((client, replyEffect(client) { b in
                switch answer {
                case .value(let v): b.sendResult(client, id: request.id) { w in w.key("value"); w.write(v) }
                case .done: b.sendResult(client, id: request.id) { _ in }
                case .image(let jpeg):
                    b.sendResult(client, id: request.id) { w in
                        w.key("mimeType"); w.string("image/jpeg")
                        w.key("data"); w.string(Base64.encode(jpeg))
                    }
                case .failed(let message): b.sendError(client, id: request.id, ProtocolError(.browserError, message))
                case .unresponsive(let message): b.sendError(client, id: request.id, ProtocolError(.pageUnresponsive, message))
                }
            }))
        case .pathConfigurationFetched(let sid, _, _), .historyRead(let sid, _, _):
            if case .historyRead(_, let webview, _) = result {
                // The connections whose request waited for it go on once the profile answered
                // them (below); when the session closed meanwhile, each request hears why.
                for (client, h) in held.sorted(by: { $0.key < $1.key }) {
                    guard case .history(sid, webview, let id) = h.wait else { continue }
                    if sessions[sid] == nil, let id, let role = clients[client]?.role, !role.isDetached {
                        releases.append((client, replyEffect(client) { b in
                            b.sendError(client, id: id, ProtocolError(.unknownSession, "session \(sid) was closed before its back was decided"))
                        }))
                    } else {
                        releases.append((client, []))
                    }
                }
            }
            // A profile's (the profile asked for it).
            withSession(sid) { b, s in
                guard let profile = s.profile else { return }
                type(of: profile).hostResult(&b, result, &s, now: now)
            }
        case .shell(let event):
            shellEvent(event, now: now)
        case .browserCrashed(let sids):
            for sid in sids {
                withSession(sid) { b, s in
                    if s.browser != nil {
                        s.browser!.targetIds.removeAll()
                        s.browser!.browserContextId = nil
                    }
                    // Why, for people: the session is over as a browser session (its pages and
                    // tabs are gone); a new one gets a new Chromium.
                    b.emit(&s, .browserCrashed) { w in
                        w.key("reason"); w.string("Chromium exited (it crashed or was killed): this session's pages and tabs are gone; close it and create a new browser session, which gets a new Chromium")
                    }
                }
            }
        }
        if !held.isEmpty { divertHeld(from: mark) }
        for (client, first) in releases {
            release(client, first: first, now: now) { b in
                // The pwa-navigate that waited, with the picture in hand.
                guard let (webview, navigate, image) = resumes[client] else { return }
                b.snapshotInHand = image ?? []
                defer { b.snapshotInHand = nil }
                if let waiting = navigate.profile {
                    // What the session's profile had wait: its to go on with.
                    guard case .snapshotTaken(let sid, _, _) = result else { return }
                    guard b.sessions[sid] != nil else {
                        // The session closed while its picture was taken: nothing is decided, and
                        // the request that waited hears why (unless its connection went too).
                        if let id = navigate.id, let role = b.clients[client]?.role, !role.isDetached {
                            b.sendError(client, id: id, ProtocolError(.unknownSession, "session \(sid) was closed before the navigation was decided"))
                        }
                        return
                    }
                    b.withSession(sid) { b, s in
                        guard let profile = s.profile else { return }
                        type(of: profile).resume(&b, client, &s, waiting.value, now: now)
                    }
                    return
                }
                guard case .page(let sid, webview)? = b.clients[client]?.role else { return }
                b.withSession(sid) { b, s in
                    do throws(ProtocolError) {
                        try b.pwaNavigate(client, id: navigate.id, url: navigate.url, title: navigate.title, session: &s, webview: webview, now: now)
                    } catch {
                        b.sendError(client, id: navigate.id, error)
                    }
                }
            }
        }
        if let abandon {
            let m = effects.count
            closeSession(abandon, reason: "closed", now: now)
            if !held.isEmpty { divertHeld(from: m) }
        }
    }

    /// Sends the `webview.open` of a web view of a browser session that waited for its tab
    /// (with the tab's target id and the context's id once the tab is open).
    mutating func announceOpen(_ s: inout Session, _ webview: ItemID) {
        guard let u = s.browser?.unannounced.removeValue(forKey: webview) else { return }
        emitWebviewOpen(&s, webview, url: u.url, token: u.token,
                        targetId: s.browser?.targetIds[webview], browserContextId: s.browser?.browserContextId)
    }

    func heldFor(sessionOpen sid: String) -> (ClientID, HeldConnection)? {
        for (client, h) in held {
            if case .sessionOpen(sid, _, _) = h.wait { return (client, h) }
        }
        return nil
    }

    /// Keeps `jpeg` as the snapshot of `placeholder` (an empty one: the browser could not
    /// take it); the oldest go beyond the budget.
    func store(_ jpeg: [UInt8], placeholder: ItemID, in browser: inout BrowserState) {
        browser.snapshots.removeAll { $0.placeholder == placeholder }
        guard !jpeg.isEmpty else { return }
        browser.snapshots.append(BrowserState.Snapshot(placeholder: placeholder, jpeg: jpeg))
        var total = browser.snapshots.reduce(0) { $0 + $1.jpeg.count }
        while total > configuration.snapshotBytesPerSession, !browser.snapshots.isEmpty {
            total -= browser.snapshots.removeFirst().jpeg.count
        }
    }
}
