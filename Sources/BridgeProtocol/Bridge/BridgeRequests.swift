/// Requests and events: the handshake, the page protocol (section 5) and the controller
/// protocol (section 6).
extension Bridge {
    static var pageMethods: Set<String> { ["pwa-navigate", "pwa-rendered", "back", "navigate", "ping"] }
    // `deeplink.open` is both: a page opens a link in its own session, a controller in any.
    static var controllerMethods: Set<String> {
        ["session.create", "session.list", "session.get", "session.close", "session.subscribe",
         "session.unsubscribe", "navigation.navigateToUrl", "navigation.back", "navigation.canGoBack",
         "navigation.popToRoot", "ping", "router.resolve", "router.perform", "router.get", "router.selectTab",
         "webview.evaluate", "webview.click", "webview.type", "session.screenshot", "placeholder.snapshot"]
    }

    mutating func handleRequest(_ client: ClientID, id: Int64, method: String, params: JSONObject, now: Int64) {
        guard let c = clients[client] else { return }
        let p = Params(params)
        switch c.role {
        case .fresh:
            guard method == "hello" else {
                sendError(client, id: id, ProtocolError(.notReady, "\"\(method)\" before \"hello\": the first request on a connection must be \"hello\""))
                return
            }
            do throws(ProtocolError) {
                try hello(client, id: id, p, isLoopback: c.isLoopback, now: now)
            } catch {
                sendError(client, id: id, error)
            }
        case .page(let sid, let webview):
            do throws(ProtocolError) {
                try pageRequest(client, id: id, method: method, p, session: sid, webview: webview, now: now)
            } catch {
                sendError(client, id: id, error)
            }
        case .detached(let sid, let webview, let why):
            if method == "hello" {
                sendError(client, id: id, ProtocolError(.conflict, "this connection already said hello"))
            } else if sessions[sid]?.engine.webView(webview) == nil {
                sendError(client, id: id, ProtocolError(.unknownWebview, "web view \(webview) is no longer on the stack"))
            } else {
                sendError(client, id: id, ProtocolError(.notAllowed, "this connection no longer speaks for \(webview) (\(why))"))
            }
        case .controller:
            do throws(ProtocolError) {
                try controllerRequest(client, id: id, method: method, p, now: now)
            } catch {
                sendError(client, id: id, error)
            }
        }
    }

    mutating func handleEvent(_ client: ClientID, name: String, params: JSONObject, now: Int64) {
        guard let c = clients[client], case .page(let sid, let webview) = c.role else {
            // Events before hello are ignored; controllers send none.
            return
        }
        do throws(ProtocolError) {
            try pageEvent(client, name: name, Params(params), session: sid, webview: webview, now: now)
        } catch {
            sendError(client, id: nil, error)
        }
    }

    // MARK: - Handshake

    mutating func hello(_ client: ClientID, id: Int64, _ p: Params, isLoopback: Bool, now: Int64) throws(ProtocolError) {
        guard let version = try p.optionalInt("protocol") else {
            throw ProtocolError(.invalidParams, "\"protocol\" is required (1)")
        }
        guard version == 1 else { throw ProtocolError(.invalidParams, "protocol \(version) is not supported; this daemon speaks 1") }
        let role = try p.string("role")
        switch role {
        case "page": try helloPage(client, id: id, p, now: now)
        case "controller": try helloController(client, id: id, p, isLoopback: isLoopback, now: now)
        default: throw ProtocolError(.invalidParams, "\"role\" must be \"page\" or \"controller\"")
        }
    }

    mutating func helloPage(_ client: ClientID, id: Int64, _ p: Params, now: Int64) throws(ProtocolError) {
        let url = try p.optionalString("url").map(PageURL.stripClaim)
        let sidParam = try p.optionalString("session")
        let webviewParam = try p.optionalString("webview")
        let tokenParam = try p.optionalString("token")

        guard let sid = sidParam else {
            guard webviewParam == nil, tokenParam == nil else {
                throw ProtocolError(.invalidParams, "\"webview\" and \"token\" go with \"session\"")
            }
            let sid = try createSession(url: url ?? "", connectedBy: client, subscriber: nil, now: now)
            let w1 = ItemID.webview(1)
            clients[client]?.role = .page(session: sid, webview: w1)
            writeHelloResult(client, id: id, session: sid, webview: w1)
            emit(sid, "session.created") { _ in }
            flush(sid, cause: "hello", now: now)
            return
        }
        guard let webviewText = webviewParam, let token = tokenParam else {
            throw ProtocolError(.invalidParams, "claiming a web view needs \"session\", \"webview\" and \"token\"")
        }
        guard let session = sessions[sid] else { throw ProtocolError(.unknownSession, "no session \"\(sid)\"") }
        guard let webview = ItemID(parsing: webviewText), webview.kind == .webview, exists(webview, in: sid),
              let expectedToken = self.token(of: webview, in: sid) else {
            throw ProtocolError(.unknownWebview, "session \(sid) has no web view \"\(webviewText)\" on its stack")
        }
        guard Self.constantTimeEquals(expectedToken, token) else {
            throw ProtocolError(.notAllowed, "wrong token for \(webview)")
        }
        if let old = session.pages[webview], old != client {
            // The newest claim wins.
            sessions[sid]!.pages[webview] = nil
            clients[old]?.role = .detached(session: sid, webview: webview, why: "replaced by a newer page")
            sendEvent(old, "closed") { w in w.key("reason"); w.string("replaced") }
            effects.append(.close(old, code: 1000, reason: "replaced"))
            emit(sid, "page.disconnected") { w in
                w.key("webview"); w.string(webview.description)
                w.key("reason"); w.string("replaced")
            }
        }
        sessions[sid]!.pages[webview] = client
        clients[client]?.role = .page(session: sid, webview: webview)
        if browserSessions.contains(sid) {
            effects.append(.host(.pageClaimed(client: client, session: sid, webview: webview.description)))
        }
        if sessions[sid]!.engine.webView(webview) != nil {
            _ = step(sid, .pageConnected(webview, url: url), now: now)
            writeHelloResult(client, id: id, session: sid, webview: webview)
            flush(sid, cause: "hello", now: now)
        } else {
            // A web view of another stack of the tree (an inactive tab): its page waits there.
            writeHelloResult(client, id: id, session: sid, webview: webview)
            emit(sid, "page.connected") { w in w.key("webview"); w.string(webview.description) }
        }
        updateIdle(sid, now: now)
    }

    mutating func writeHelloResult(_ client: ClientID, id: Int64, session sid: String, webview: ItemID) {
        guard let s = sessions[sid], let token = token(of: webview, in: sid) else { return }
        let routeItem = s.route.flatMap { r in r.tree.locate(webview.description).flatMap { r.tree[$0.stack]?[$0.index] } }
        guard let url = s.engine.webView(webview)?.url ?? routeItem?.url else { return }
        let mode = s.engine.webView(webview)?.mode ?? .classic
        let stack = stackJSON(sid)
        sendResult(client, id: id) { out in
            out.key("protocol"); out.int(1)
            out.key("session"); out.string(sid)
            out.key("webview"); out.string(webview.description)
            out.key("token"); out.string(token)
            out.key("pageUrl"); out.string(PageURL.withClaim(url, session: sid, webview: webview, token: token))
            out.key("mode"); out.string(mode.rawValue)
            out.key("stack"); out.raw(stack)
            if let context = routeItem?.context { out.key("context"); out.write(context) }
        }
    }

    mutating func helloController(_ client: ClientID, id: Int64, _ p: Params, isLoopback: Bool, now: Int64) throws(ProtocolError) {
        let token = try p.optionalString("token")
        if let expected = configuration.controllerToken {
            guard let token, Self.constantTimeEquals(expected, token) else {
                throw ProtocolError(.notAllowed, token == nil ? "this daemon requires a controller token" : "wrong controller token")
            }
        } else if !isLoopback {
            throw ProtocolError(.notAllowed, "without a configured token, controllers are accepted from loopback only")
        }
        var handles = Set<String>()
        for name in try p.optionalStringArray("handles") ?? [] {
            guard name == "navigate" || name == "webview.open" else {
                throw ProtocolError(.invalidParams, "\"handles\" takes \"navigate\" and \"webview.open\", not \"\(name)\"")
            }
            handles.insert(name)
        }
        let number = nextControllerNumber
        nextControllerNumber += 1
        let info = ControllerInfo(name: "c\(number)", number: number, handles: handles)
        clients[client]?.role = .controller(info)
        let version = configuration.version
        sendResult(client, id: id) { out in
            out.key("protocol"); out.int(1)
            out.key("controller"); out.string(info.name)
            out.key("version"); out.string(version)
        }
    }

    /// Creates a session with a root web view; `connectedBy` is its page, `subscriber` its creator.
    /// The caller emits `session.created` after its reply (a reply comes before the events its
    /// request caused).
    mutating func createSession(url: String, connectedBy page: ClientID?, subscriber: ClientID?, now: Int64) throws(ProtocolError) -> String {
        guard sessions.count < configuration.maxSessions else {
            throw ProtocolError(.limitExceeded, "the daemon holds \(sessions.count) sessions, the most --max-sessions allows")
        }
        var sid: String
        repeat { sid = "s-" + randomHex(bytes: 8) } while sessions[sid] != nil
        let serial = nextSessionSerial
        nextSessionSerial += 1
        let record = SessionRecord(id: sid, serial: serial, engine: SessionEngine(configuration: configuration.engine))
        if let page { record.pages[.webview(1)] = page }
        if let subscriber {
            // The creator hears what its all-sessions subscription asked for, else everything.
            let filter = allSubscribers.first { $0.client == subscriber }?.filter ?? .all
            record.subscribers.append((subscriber, filter))
        }
        sessions.insert(record)
        sessionIDBySerial[serial] = sid
        if let subscriber, case .controller(var info)? = clients[subscriber]?.role {
            info.sessions.append(sid)
            clients[subscriber]?.role = .controller(info)
        }
        let token = randomHex(bytes: 16)
        var rootURL = url
        if let router {
            let route = makeRouteSession(router: router, url: url)
            rootURL = route.tree.activeStack.first?.url ?? url
            sessions[sid]!.route = route
        }
        _ = step(sid, .createRoot(url: rootURL, token: token, connected: page != nil), now: now)
        if let route = sessions[sid]!.route {
            let stack = sessions[sid]!.engine.stack
            _ = step(sid, .adopt(stack: stack, removed: [], singleTab: true,
                                 nextIDs: IDCounters(webview: route.ids.nextWebview, placeholder: route.ids.nextPlaceholder,
                                                     native: route.ids.nextNative)), now: now)
            issueTokens(sid)
        }
        updateIdle(sid, now: now)
        return sid
    }

    // MARK: - Pages

    mutating func pageRequest(_ client: ClientID, id: Int64, method: String, _ p: Params, session sid: String, webview: ItemID, now: Int64) throws(ProtocolError) {
        switch method {
        case "pwa-navigate":
            let url = try p.optionalString("url").map(PageURL.stripClaim)
            let title = try p.optionalString("title")
            switch step(sid, .pwaNavigate(from: webview, url: url, title: title), now: now) {
            case .success(.pwaNavigate(let placeholder)):
                let stack = stackJSON(sid)
                sendResult(client, id: id) { w in
                    w.appendRaw(#""placeholder":"#)
                    w.appendQuotedID(placeholder)
                    w.appendRaw(#","stack":"#)
                    w.bytes.append(contentsOf: stack)
                    w.afterRawValue()
                }
            case .success: break
            case .failure(let e): sendError(client, id: id, ProtocolError(e))
            }
            flush(sid, cause: "pwa-navigate", now: now)
        case "pwa-rendered":
            switch step(sid, .pwaRendered(from: webview), now: now) {
            case .success(.pwaRendered(let removed, let latency)):
                sendResult(client, id: id) { w in
                    if removed, let latency {
                        w.appendRaw(#""removed":true,"reason":"rendered","latencyMs":"#)
                        w.appendDigits(latency)
                    } else {
                        w.appendRaw(removed ? #""removed":true"# : #""removed":false"#)
                    }
                    w.afterRawValue()
                }
            case .success: break
            case .failure(let e): sendError(client, id: id, ProtocolError(e))
            }
            flush(sid, cause: "pwa-rendered", now: now)
        case "back":
            back(sid, requester: webview, replyTo: (client, id), cause: "back", now: now)
        case "navigate":
            let url = try p.string("url")
            navigate(sid, from: webview, client: client, url: url, replyTo: id, now: now)
        case "ping":
            sendResult(client, id: id) { _ in }
        case "deeplink.open":
            guard sessions[sid]?.route != nil else {
                throw ProtocolError(.unknownMethod, "\"deeplink.open\" needs a routing configuration: start bridged with --config FILE")
            }
            let action = try Self.deeplinkAction(p)
            let outcome = try perform(action, on: sid, requester: webview, cause: "deeplink.open", now: now)
            writeOutcome(client, id: id, outcome, sid)
        case "hello":
            throw ProtocolError(.conflict, "this connection already said hello")
        default:
            if Self.controllerMethods.contains(method) {
                throw ProtocolError(.notAllowed, "\"\(method)\" is for controllers; this connection is a page")
            }
            throw ProtocolError(.unknownMethod, "no method \"\(method)\"")
        }
    }

    mutating func pageEvent(_ client: ClientID, name: String, _ p: Params, session sid: String, webview: ItemID, now: Int64) throws(ProtocolError) {
        switch name {
        case "pwa-navigate":
            let url = try p.optionalString("url").map(PageURL.stripClaim)
            let title = try p.optionalString("title")
            _ = step(sid, .pwaNavigate(from: webview, url: url, title: title), now: now)
            flush(sid, cause: "pwa-navigate", now: now)
        case "pwa-rendered":
            _ = step(sid, .pwaRendered(from: webview), now: now)
            flush(sid, cause: "pwa-rendered", now: now)
        case "back":
            back(sid, requester: webview, replyTo: nil, cause: "back", now: now)
        case "navigate":
            let url = try p.string("url")
            navigate(sid, from: webview, client: client, url: url, replyTo: nil, now: now)
        case "pwa-navigated":
            let url = PageURL.stripClaim(try p.string("url"))
            let source = try p.optionalString("source")
            if case .success = step(sid, .pwaNavigated(from: webview, url: url), now: now) {
                engineEffects.removeAll(keepingCapacity: true)
                emit(sid, "pwa-navigated") { w in
                    w.key("webview"); w.string(webview.description)
                    w.key("url"); w.string(url)
                    if let source { w.key("source"); w.string(source) }
                }
            }
            flush(sid, cause: "pwa-navigated", now: now)
        default:
            emit(sid, "app.event") { w in
                w.key("webview"); w.string(webview.description)
                w.key("name"); w.string(name)
                w.key("params"); w.write(.object(p.object))
            }
        }
    }

    /// A page's classic navigation: to the session's `navigate` handler, else the built-in policy.
    mutating func navigate(_ sid: String, from webview: ItemID, client: ClientID, url: String, replyTo id: Int64?, now: Int64) {
        guard !url.isEmpty else {
            failNavigate(client, id: id, url: url, ProtocolError(.invalidParams, "\"url\" must not be empty"))
            return
        }
        if let handler = handler(of: "navigate", in: sid) {
            sendEvent(handler, "navigate") { w in
                w.key("session"); w.string(sid)
                w.key("webview"); w.string(webview.description)
                w.key("url"); w.string(url)
            }
            if let id { sendResult(client, id: id) { w in w.key("handledBy"); w.string("controller") } }
            return
        }
        if sessions[sid]?.route != nil {
            routeNavigate(sid, from: webview, client: client, url: url, replyTo: id, now: now)
            return
        }
        let token = randomHex(bytes: 16)
        let singleTab = handler(of: "webview.open", in: sid) == nil
        switch step(sid, .navigateToUrl(url: PageURL.stripClaim(url), token: token, requester: webview, singleTab: singleTab), now: now) {
        case .success(.navigateToUrl(let newID, let token)):
            if let id {
                let stack = stackJSON(sid)
                sendResult(client, id: id) { w in
                    w.key("webview"); w.string(newID.description)
                    w.key("stack"); w.raw(stack)
                    _ = token
                }
            }
        case .success: break
        case .failure(let e):
            failNavigate(client, id: id, url: url, ProtocolError(e))
        }
        flush(sid, cause: "navigate", now: now)
    }

    /// A navigation that cannot happen: the page hears `navigate.failed` (and an error reply
    /// when it asked with a request).
    mutating func failNavigate(_ client: ClientID, id: Int64?, url: String, _ error: ProtocolError) {
        if let id { sendError(client, id: id, error) }
        sendEvent(client, "navigate.failed") { w in
            w.key("url"); w.string(url)
            w.key("code"); w.string(error.code.rawValue)
            w.key("message"); w.string(error.message)
        }
    }

    mutating func back(_ sid: String, requester: ItemID?, replyTo: (ClientID, Int64)?, cause: String, now: Int64) {
        let singleTab = handler(of: "webview.open", in: sid) == nil
        switch step(sid, .back(requester: requester, singleTab: singleTab), now: now) {
        case .success(.back(let action, let removed)):
            if let (client, id) = replyTo {
                let stack = stackJSON(sid)
                sendResult(client, id: id) { w in
                    w.appendRaw(#""action":"#)
                    w.appendStringValue(action.rawValue)
                    w.appendRaw(#","removed":["#)
                    for (i, r) in removed.enumerated() {
                        if i > 0 { w.bytes.append(0x2C) }
                        w.appendQuotedID(r)
                    }
                    w.appendRaw(#"],"stack":"#)
                    w.bytes.append(contentsOf: stack)
                    w.afterRawValue()
                }
            }
        case .success: break
        case .failure(let e):
            if let (client, id) = replyTo { sendError(client, id: id, ProtocolError(e)) }
        }
        flush(sid, cause: cause, now: now)
    }

    // MARK: - Controllers

    mutating func controllerRequest(_ client: ClientID, id: Int64, method: String, _ p: Params, now: Int64) throws(ProtocolError) {
        switch method {
        case "session.create":
            let url = try p.optionalString("url").map(PageURL.stripClaim) ?? ""
            if let browser = p.object["browser"], browser != .null {
                guard case .bool(let wanted) = browser else { throw ProtocolError(.invalidParams, "\"browser\" must be a boolean") }
                if wanted { return try createBrowserSession(client, id: id, url: url, now: now) }
            }
            let sid = try createSession(url: url, connectedBy: nil, subscriber: client, now: now)
            let w1 = ItemID.webview(1)
            let token = sessions[sid]!.engine.webView(w1)!.token
            sendResult(client, id: id) { w in
                w.key("session"); w.string(sid)
                w.key("webview"); w.string("W1")
                w.key("token"); w.string(token)
                w.key("pageUrl"); w.string(PageURL.withClaim(url, session: sid, webview: w1, token: token))
            }
            emit(sid, "session.created") { _ in }
            flush(sid, cause: "session.create", now: now)
        case "session.list":
            var list = JSONWriter(capacity: 256)
            writeSessionArray(into: &list, now: now)
            let sessionsJSON = list.bytes
            sendResult(client, id: id) { w in
                w.key("sessions"); w.raw(sessionsJSON)
            }
        case "session.get":
            let sid = try existingSession(p)
            let stack = stackJSON(sid)
            var extra = JSONWriter(capacity: 128)
            writeForeground(sid, into: &extra, now: now)
            let foreground = extra.bytes
            var handlers: [(String, String?)] = []
            for name in ["navigate", "webview.open"] {
                if let h = handler(of: name, in: sid), case .controller(let info)? = clients[h]?.role {
                    handlers.append((name, info.name))
                } else {
                    handlers.append((name, nil))
                }
            }
            let canGoBack = sessions[sid]!.engine.canGoBack
            sendResult(client, id: id) { w in
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
            }
        case "session.close":
            let sid = try existingSession(p)
            sendResult(client, id: id) { _ in }
            closeSession(sid, reason: "closed", now: now)
        case "session.subscribe":
            let sid = try p.optionalString("session")
            let events = try p.optionalStringArray("events")
            if let sid, sessions[sid] == nil { throw ProtocolError(.unknownSession, "no session \"\(sid)\"") }
            subscribe(client, session: sid, filter: EventFilter(names: events.map(Set.init)), now: now)
            sendResult(client, id: id) { _ in }
        case "session.unsubscribe":
            let sid = try p.optionalString("session")
            unsubscribe(client, session: sid, now: now)
            sendResult(client, id: id) { _ in }
        case "navigation.navigateToUrl":
            let sid = try existingSession(p)
            let url = try p.string("url")
            guard !url.isEmpty else { throw ProtocolError(.invalidParams, "\"url\" must not be empty") }
            let token = randomHex(bytes: 16)
            let singleTab = handler(of: "webview.open", in: sid) == nil
            switch step(sid, .navigateToUrl(url: PageURL.stripClaim(url), token: token, requester: nil, singleTab: singleTab), now: now) {
            case .success(.navigateToUrl(let webview, let token)):
                let stack = stackJSON(sid)
                let pageUrl = PageURL.withClaim(PageURL.stripClaim(url), session: sid, webview: webview, token: token)
                sendResult(client, id: id) { w in
                    w.key("webview"); w.string(webview.description)
                    w.key("token"); w.string(token)
                    w.key("pageUrl"); w.string(pageUrl)
                    w.key("stack"); w.raw(stack)
                }
            case .success: break
            case .failure(let e): sendError(client, id: id, ProtocolError(e))
            }
            flush(sid, cause: "navigation.navigateToUrl", now: now)
        case "navigation.back":
            let sid = try existingSession(p)
            back(sid, requester: nil, replyTo: (client, id), cause: "navigation.back", now: now)
        case "navigation.canGoBack":
            let sid = try existingSession(p)
            let can = sessions[sid]!.engine.canGoBack
            sendResult(client, id: id) { w in w.key("canGoBack"); w.bool(can) }
        case "navigation.popToRoot":
            let sid = try existingSession(p)
            let singleTab = handler(of: "webview.open", in: sid) == nil
            switch step(sid, .popToRoot(singleTab: singleTab), now: now) {
            case .success(.popToRoot(let removed)):
                let stack = stackJSON(sid)
                sendResult(client, id: id) { w in
                    w.key("removed"); Self.writeIDs(removed, into: &w)
                    w.key("stack"); w.raw(stack)
                }
            case .success: break
            case .failure(let e): sendError(client, id: id, ProtocolError(e))
            }
            flush(sid, cause: "navigation.popToRoot", now: now)
        case "ping":
            sendResult(client, id: id) { _ in }
        case "router.resolve", "router.perform", "router.get", "router.selectTab", "deeplink.open":
            try routerRequest(client, id: id, method: method, p, now: now)
        case "hello":
            throw ProtocolError(.conflict, "this connection already said hello")
        case "webview.evaluate", "webview.click", "webview.type", "session.screenshot", "placeholder.snapshot":
            try hostRequest(client, id: id, method: method, p)
        default:
            if Self.pageMethods.contains(method) {
                throw ProtocolError(.notAllowed, "\"\(method)\" is for pages; this connection is a controller")
            }
            throw ProtocolError(.unknownMethod, "no method \"\(method)\"")
        }
    }

    func existingSession(_ p: Params) throws(ProtocolError) -> String {
        let sid = try p.session()
        guard sessions[sid] != nil else { throw ProtocolError(.unknownSession, "no session \"\(sid)\"") }
        return sid
    }

    mutating func subscribe(_ client: ClientID, session sid: String?, filter: EventFilter, now: Int64) {
        guard case .controller(var info)? = clients[client]?.role else { return }
        if let sid {
            if let i = sessions[sid]!.subscribers.firstIndex(where: { $0.client == client }) {
                sessions[sid]!.subscribers[i].filter = filter
            } else {
                sessions[sid]!.subscribers.append((client, filter))
                info.sessions.append(sid)
                clients[client]?.role = .controller(info)
            }
            updateIdle(sid, now: now)
        } else if let i = allSubscribers.firstIndex(where: { $0.client == client }) {
            allSubscribers[i].filter = filter
        } else {
            allSubscribers.append((client, filter))
        }
    }

    mutating func unsubscribe(_ client: ClientID, session sid: String?, now: Int64) {
        guard case .controller(var info)? = clients[client]?.role else { return }
        if let sid {
            sessions[sid]?.subscribers.removeAll { $0.client == client }
            info.sessions.removeAll { $0 == sid }
            clients[client]?.role = .controller(info)
            updateIdle(sid, now: now)
        } else {
            allSubscribers.removeAll { $0.client == client }
        }
    }

    /// Closes a session: pages told and closed, subscribers told, everything forgotten.
    mutating func closeSession(_ sid: String, reason: String, now: Int64) {
        guard sessions[sid] != nil else { return }
        _ = step(sid, .close(reason: reason == "closed" ? "session-closed" : reason), now: now)
        flush(sid, cause: "session.close", now: now)
        emit(sid, "session.closed") { w in w.key("reason"); w.string(reason) }
        let record = sessions.removeValue(forKey: sid)!
        browserSessions.remove(sid)
        sessionIDBySerial[record.serial] = nil
        for (client, _) in record.subscribers {
            if case .controller(var info)? = clients[client]?.role {
                info.sessions.removeAll { $0 == sid }
                clients[client]?.role = .controller(info)
            }
        }
    }
}
