/// Sessions: creating, listing, subscribing to and closing them (`session.*`).
extension Bridge {
    mutating func sessionRequest(_ method: SessionMethod, _ client: ClientID, id: Int64, _ p: Params, now: Int64) throws(ProtocolError) {
        switch method {
        case .create:
            let url = try p.optionalString("url").map(PageURL.stripClaim) ?? ""
            try checkURL(url, "url")
            let profile: SessionProfile
            do {
                profile = try SessionProfile.parse(p.object, registry: configuration.profiles)
            } catch {
                throw ProtocolError(.invalidParams, error.message)
            }
            let shell = try Self.shellSettings(p.object)
            if let browser = p.object["browser"], browser != .null {
                guard case .bool(let wanted) = browser else { throw ProtocolError(.invalidParams, "\"browser\" must be a boolean") }
                if wanted { return try createBrowserSession(client, id: id, url: url, profile: profile, shell: shell, now: now) }
            }
            if shell != nil {
                throw ProtocolError(.invalidParams, "\"dialogs\", \"permissions\" and \"geolocation\" need a browser session: {\"browser\": true}")
            }
            if profile.needsBrowser {
                throw ProtocolError(.invalidParams, "profile \"\(profile.name)\" needs a browser session: {\"browser\": true}")
            }
            try createSession(url: url, connectedBy: nil, subscriber: client, cause: BridgeMethod.sessionCreate.name, now: now) { b, s in
                let w1 = ItemID.webview(1)
                profile.behavior?.start(&b, &s, url: s.engine.webView(w1)?.url ?? url)
                let token = s.engine.webView(w1)!.token
                let sid = s.id
                b.sendResult(client, id: id) { w in
                    w.key("session"); w.string(sid)
                    w.key("webview"); w.string("W1")
                    w.key("token"); w.string(token)
                    w.key("pageUrl"); w.string(PageURL.withClaim(url, session: sid, webview: w1, token: token))
                    if !profile.isPlain { w.key("profile"); w.string(profile.name) }
                }
            }
        case .list:
            var list = JSONWriter(capacity: 256)
            writeSessionArray(into: &list, now: now)
            let sessionsJSON = list.bytes
            sendResult(client, id: id) { w in
                w.key("sessions"); w.raw(sessionsJSON)
            }
        case .get:
            try withExistingSession(p) { (b, s) throws(ProtocolError) in
                let stack = b.stackJSON(&s)
                var extra = JSONWriter(capacity: 128)
                Self.writeForeground(s, into: &extra, now: now)
                let foreground = extra.bytes
                var handlers: [(String, String?)] = []
                for name in ["navigate", "webview.open"] {
                    if let h = b.handler(of: name, among: s.subscribers), case .controller(let info)? = b.clients[h]?.role {
                        handlers.append((name, info.name))
                    } else if name == "webview.open", s.isBrowser {
                        handlers.append((name, "browser"))
                    } else {
                        handlers.append((name, nil))
                    }
                }
                let canGoBack = s.profile?.canGoBack(s) ?? s.engine.canGoBack
                let sid = s.id
                let failed = s.browser?.failed
                var states = JSONWriter(capacity: 64)
                b.writeShellStates(s, into: &states)
                let shellStates = states.bytes
                let profile = s.profile.map { p in (type(of: p.configuration).name, p.sessionInfo(s)) }
                let browserIds = s.browser.map { (context: $0.browserContextId, targets: $0.targetIds.sorted { $0.key.description < $1.key.description }) }
                b.sendResult(client, id: id) { w in
                    w.key("session"); w.string(sid)
                    w.key("stack"); w.raw(stack)
                    w.key("foreground"); w.raw(foreground)
                    w.key("handlers")
                    w.beginObject()
                    for (name, controller) in handlers {
                        w.key(name)
                        if let controller { w.string(controller) } else { w.null() }
                    }
                    w.endObject()
                    w.key("canGoBack"); w.bool(canGoBack)
                    if let failed {
                        // Browser sessions: web views whose tab could not open or load.
                        w.key("failed"); w.beginArray()
                        for f in failed {
                            w.beginObject()
                            w.key("webview"); w.string(f.webview.description)
                            w.key("url"); w.string(f.url)
                            w.key("reason"); w.string(f.reason)
                            w.endObject()
                        }
                        w.endArray()
                        w.key("webviews"); w.raw(shellStates)
                    }
                    if let (name, info) = profile {
                        // A profile's session: its name and what the profile adds.
                        w.key("profile"); w.string(name)
                        for (key, value) in info {
                            w.key(key); w.write(value)
                        }
                    }
                    if let browserIds {
                        // Browser sessions: the browser's ids of the context and of each tab.
                        w.key("browserContextId")
                        if let context = browserIds.context { w.string(context) } else { w.null() }
                        w.key("targetIds"); w.beginObject()
                        for (webview, target) in browserIds.targets {
                            w.key(webview.description); w.string(target)
                        }
                        w.endObject()
                    }
                }
            }
        case .close:
            let sid = try p.session()
            guard sessions.contains(sid) else { throw unknownSession(sid) }
            sendResult(client, id: id) { _ in }
            closeSession(sid, reason: "closed", now: now)
        case .subscribe:
            let sid = try p.optionalString("session")
            let events = try p.optionalStringArray("events")
            let filter = EventFilter(names: events.map(Set.init))
            if let sid {
                let found: Void? = withSession(sid) { b, s in b.subscribe(client, to: &s, filter: filter, now: now) }
                if found == nil { throw unknownSession(sid) }
            } else if let i = allSubscribers.firstIndex(where: { $0.client == client }) {
                allSubscribers[i].filter = filter
            } else {
                allSubscribers.append(Subscriber(client: client, filter: filter))
            }
            sendResult(client, id: id) { _ in }
        case .unsubscribe:
            let sid = try p.optionalString("session")
            if let sid {
                withSession(sid) { b, s in
                    s.subscribers.removeAll { $0.client == client }
                    b.updateIdle(&s, now: now)
                }
                modifyController(client) { info in info.sessions.remove(sid) }
            } else {
                allSubscribers.removeAll { $0.client == client }
            }
            sendResult(client, id: id) { _ in }
        }
    }

    /// `withSession` for the session named by the request's `session` param.
    mutating func withExistingSession<R>(_ p: Params, _ body: (inout Self, inout Session) throws(ProtocolError) -> R) throws(ProtocolError) -> R {
        let sid = try p.session()
        guard let r = try withSession(sid, body) else { throw unknownSession(sid) }
        return r
    }

    /// Creates a session with a root web view; `connectedBy` is its page, `subscriber` its
    /// creator. `answer` writes the reply; then come `session.created` and the engine's events
    /// (a reply comes before the events its request caused).
    mutating func createSession(url: String, connectedBy page: ClientID?, subscriber: ClientID?, cause: String, now: Int64,
                                answer: (inout Self, inout Session) -> Void) throws(ProtocolError) {
        guard sessions.count < configuration.maxSessions else {
            throw ProtocolError(.limitExceeded, "the daemon holds \(sessions.count) sessions, the most --max-sessions allows")
        }
        var sid: String
        repeat { sid = sessionIDPrefix + randomHex(bytes: 8) } while sessions.contains(sid)
        let serial = nextSessionSerial
        nextSessionSerial += 1
        var s = Session(id: sid, serial: serial, engine: SessionEngine(configuration: configuration.engine))
        if let page { s.pages[.webview(1)] = page }
        if let subscriber {
            // The creator hears what its all-sessions subscription asked for, else everything.
            let filter = allSubscribers.first { $0.client == subscriber }?.filter ?? .all
            s.subscribers.append(Subscriber(client: subscriber, filter: filter))
            modifyController(subscriber) { info in info.sessions.insert(sid) }
        }
        sessionIDBySerial[serial] = sid
        let token = randomHex(bytes: 16)
        var rootURL = url
        // With a router, the tree is drawn first on a copy of the engine's allocator: its root is
        // the `W1` the engine creates next, and the copy (W1 and every other tab root drawn)
        // becomes the engine's allocator once the root exists.
        var routeIDs = s.engine.itemIDs
        if let router {
            let tree = makeRouteTree(router: router, url: url, ids: &routeIDs)
            rootURL = tree.activeStack.first?.url ?? url
            s.tree = tree
        }
        var list = takeEffectStorage()
        s.engine.handle(.createRoot(url: rootURL, token: token, connected: page != nil), at: now, into: &list)
        if s.isRouted {
            s.engine.itemIDs = routeIDs
            s.engine.handle(.adopt(stack: s.engine.stack, removed: [], singleTab: true), at: now, into: &list)
            issueTokens(&s)
        }
        answer(&self, &s)
        emit(&s, .sessionCreated) { _ in }
        flush(&list, &s, cause: cause, now: now)
        returnEffectStorage(&list)
        sessions.insert(s)
    }

    mutating func subscribe(_ client: ClientID, to s: inout Session, filter: EventFilter, now: Int64) {
        guard case .controller? = clients[client]?.role else { return }
        if let i = s.subscribers.firstIndex(where: { $0.client == client }) {
            s.subscribers[i].filter = filter
        } else {
            s.subscribers.append(Subscriber(client: client, filter: filter))
            let sid = s.id
            modifyController(client) { info in info.sessions.insert(sid) }
        }
        updateIdle(&s, now: now)
    }

    /// Changes a controller's record in place (taken out of `clients` for the call, so its set
    /// of sessions is not copied).
    mutating func modifyController(_ client: ClientID, _ body: (inout ControllerInfo) -> Void) {
        guard case .controller(var info)? = clients[client]?.role else { return }
        clients[client]!.role = .fresh
        body(&info)
        clients[client]!.role = .controller(info)
    }

    /// Closes session `sid` with `reason` once the current input is done (a profile's hook,
    /// which runs inside `withSession`, cannot close its own session).
    mutating func endSessionLater(_ sid: String, reason: String) {
        if !sessionEnds.contains(where: { $0.sid == sid }) { sessionEnds.append((sid, reason)) }
    }

    /// Closes the sessions `endSessionLater` named.
    mutating func endSessions(now: Int64) {
        while !sessionEnds.isEmpty {
            let (sid, reason) = sessionEnds.removeFirst()
            closeSession(sid, reason: reason, now: now)
        }
    }

    /// Closes a session: pages told and closed, subscribers told, everything forgotten.
    mutating func closeSession(_ sid: String, reason: String, now: Int64) {
        withSession(sid) { b, s in
            let pageReason = reason == "closed" ? "session-closed" : reason
            b.run(&s, .close(reason: pageReason), cause: BridgeMethod.sessionClose.name, now: now)
            // The engine closed the pages of its stack; the pages of the tree's other stacks
            // (web views of inactive tabs) are told and closed the same way.
            for webview in s.pages.keys.sorted() {
                b.closePageOutsideTheStack(&s, webview: webview, reason: pageReason, why: "its session was closed")
            }
            b.emit(&s, .sessionClosed) { w in w.key("reason"); w.string(reason) }
        }
        guard let s = sessions.remove(sid) else { return }
        if s.isBrowser { effects.append(.host(.closeSession(session: sid))) }
        sessionIDBySerial[s.serial] = nil
        for sub in s.subscribers {
            modifyController(sub.client) { info in info.sessions.remove(sid) }
        }
    }

    /// Tells the page of `webview`, a web view the engine's stack does not hold (another stack
    /// of the tree), that it is gone (`closed {reason}`) and closes it with 1000, as the engine
    /// does for the pages of its stack (`SessionEffect.closePage`).
    mutating func closePageOutsideTheStack(_ s: inout Session, webview: ItemID, reason: String, why: String) {
        guard let client = s.pages.removeValue(forKey: webview) else { return }
        clients[client]?.role = .detached(session: s.id, webview: webview, why: why)
        sendEvent(client, "closed") { w in w.key("reason"); w.string(reason) }
        effects.append(.close(client, code: 1000, reason: ""))
    }

    /// Marks the session idle when no page and no controller holds it (the sweep discards it
    /// after `sessionIdleSeconds`), and busy again when one does.
    mutating func updateIdle(_ s: inout Session, now: Int64) {
        // (A browser session is held by its browser's tabs.)
        let idle = s.pages.isEmpty && s.subscribers.isEmpty && !s.isBrowser
        if idle, s.idleSince == nil {
            s.idleSince = now
        } else if !idle, s.idleSince != nil {
            s.idleSince = nil
        }
    }
}
