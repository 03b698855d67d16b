/// The handshake (contract section 3): `hello` from pages and controllers.
extension Bridge {
    mutating func hello(_ client: ClientID, id: Int64, _ p: Params, _ c: Client, now: Int64) throws(ProtocolError) {
        guard let version = try p.optionalInt("protocol") else {
            throw ProtocolError(.invalidParams, "\"protocol\" is required (1)")
        }
        guard version == 1 else { throw ProtocolError(.invalidParams, "protocol \(version) is not supported; this daemon speaks 1") }
        let role = try p.string("role")
        switch role {
        case "page": try helloPage(client, id: id, p, now: now)
        case "controller": try helloController(client, id: id, p, c, now: now)
        case "observer": try helloObserver(client, id: id, p, isLoopback: c.isLoopback)
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
            try checkURL(url, "url")
            try createSession(url: url ?? "", connectedBy: client, subscriber: nil, cause: BridgeMethod.hello.name, now: now) { b, s in
                let w1 = ItemID.webview(1)
                b.clients[client]?.role = .page(session: s.id, webview: w1)
                b.writeHelloResult(client, id: id, &s, webview: w1)
            }
            return
        }
        guard let webviewText = webviewParam, let token = tokenParam else {
            throw ProtocolError(.invalidParams, "claiming a web view needs \"session\", \"webview\" and \"token\"")
        }
        try checkURL(url, "url")
        let history = Self.isHistoryHello(p)
        let found: Void? = try withSession(sid) { (b, s) throws(ProtocolError) in
            try b.claim(client, id: id, &s, webviewText: webviewText, token: token, url: url, history: history, now: now)
        }
        if found == nil { throw unknownSession(sid) }
    }

    /// A page's `hello` for an existing web view: the newest claim wins.
    mutating func claim(_ client: ClientID, id: Int64, _ s: inout Session, webviewText: String, token: String, url: String?,
                        history: Bool, now: Int64) throws(ProtocolError) {
        let sid = s.id
        if history, try returnToClosedWebView(client, id: id, &s, webviewText: webviewText, token: token, url: url, now: now) {
            return
        }
        guard let webview = ItemID(parsing: webviewText), webview.kind == .webview, exists(webview, in: s),
              let expectedToken = self.token(of: webview, in: s) else {
            throw ProtocolError(.unknownWebview, "session \(sid) has no web view \"\(webviewText)\" on its stack")
        }
        guard Self.constantTimeEquals(expectedToken, token) else {
            throw ProtocolError(.notAllowed, "wrong token for \(webview)")
        }
        try checkURLChange(s, webview: webview, url: url)
        if let old = s.pages[webview], old != client {
            s.pages[webview] = nil
            clients[old]?.role = .detached(session: sid, webview: webview, why: "replaced by a newer page")
            sendEvent(old, "closed") { w in w.key("reason"); w.string("replaced") }
            effects.append(.close(old, code: 1000, reason: "replaced"))
            emitPageDisconnected(&s, webview, reason: "replaced")
        }
        s.pages[webview] = client
        clients[client]?.role = .page(session: sid, webview: webview)
        if let before = s.engine.webView(webview) {
            var list = takeEffectStorage()
            s.engine.handle(.pageConnected(webview, url: url), at: now, into: &list)
            if history { returnByHistory(&s, to: webview, url: url, previousURL: before.url, into: &list, now: now) }
            writeHelloResult(client, id: id, &s, webview: webview)
            flush(&list, &s, cause: history ? "history" : BridgeMethod.hello.name, now: now)
            returnEffectStorage(&list)
        } else {
            // A web view of another stack of the tree (an inactive tab): its page waits there.
            writeHelloResult(client, id: id, &s, webview: webview)
            emitPageConnected(&s, webview)
        }
        if s.isBrowser { browserPageClaimed(client, &s, webview: webview, now: now) }
        updateIdle(&s, now: now)
    }

    mutating func writeHelloResult(_ client: ClientID, id: Int64, _ s: inout Session, webview: ItemID) {
        guard let token = token(of: webview, in: s) else { return }
        let routeItem = s.tree.flatMap { t in t.locate(webview).flatMap { t[$0.stack]?[$0.index] } }
        guard let url = s.engine.webView(webview)?.url ?? routeItem?.url else { return }
        let mode = s.engine.webView(webview)?.mode ?? .classic
        let stack = stackJSON(&s)
        let sid = s.id
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

    mutating func helloController(_ client: ClientID, id: Int64, _ p: Params, _ c: Client, now: Int64) throws(ProtocolError) {
        let token = try p.optionalString("token")
        if let expected = configuration.controllerToken {
            guard let token, Self.constantTimeEquals(expected, token) else {
                throw ProtocolError(.notAllowed, token == nil ? "this daemon requires a controller token" : "wrong controller token")
            }
        } else if !c.isLoopback {
            throw ProtocolError(.notAllowed, "without a configured token, controllers are accepted from loopback only")
        } else if let origin = c.origin, !configuration.allowsControllerOrigin(origin) {
            // A browser page (it sent an Origin) is some web app, not a test harness: it needs
            // the token or an origin allowed for controllers.
            throw ProtocolError(.notAllowed, "a controller from a browser page (Origin \(origin)) needs --token, or start bridged with --allow-controller-origin \(origin)")
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
        let instance = configuration.instance
        sendResult(client, id: id) { out in
            out.key("protocol"); out.int(1)
            out.key("controller"); out.string(info.name)
            out.key("version"); out.string(version)
            if let instance { out.key("instance"); out.string(instance) }
        }
    }
}
