/// The handshake (contract section 3): `hello` from pages and controllers.
extension Bridge {
    mutating func hello(_ client: ClientID, id: Int64, _ p: Params, isLoopback: Bool, now: Int64) throws(ProtocolError) {
        guard let version = try p.optionalInt("protocol") else {
            throw ProtocolError(.invalidParams, "\"protocol\" is required (1)")
        }
        guard version == 1 else { throw ProtocolError(.invalidParams, "protocol \(version) is not supported; this daemon speaks 1") }
        let role = try p.string("role")
        switch role {
        case "page": try helloPage(client, id: id, p, now: now)
        case "controller": try helloController(client, id: id, p, isLoopback: isLoopback, now: now)
        case "observer": try helloObserver(client, id: id, p, isLoopback: isLoopback)
        default: throw ProtocolError(.invalidParams, "\"role\" must be \"page\", \"controller\" or \"observer\"")
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
        let history = Self.isHistoryHello(p)
        if history, try returnToClosedWebView(client, id: id, sid: sid, webviewText: webviewText, token: token, url: url, now: now) {
            return
        }
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
        if let before = sessions[sid]!.engine.webView(webview) {
            _ = step(sid, .pageConnected(webview, url: url), now: now)
            if history { returnByHistory(sid, to: webview, url: url, previousURL: before.url, now: now) }
            writeHelloResult(client, id: id, session: sid, webview: webview)
            flush(sid, cause: history ? "history" : "hello", now: now)
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
}
