/// Browser sessions: the part of the protocol that a host (the daemon's browser) carries out.
///
/// The state machine stays pure: it marks a session created with `browser: true`, validates the
/// methods only a browser can answer, and hands them to the host as `BridgeEffect.host`. The
/// host replies on the requester's connection itself when the browser is done.

/// Work for the host of a `Bridge` that drives real web views.
public enum HostCall: Equatable, Sendable {
    /// `session.create {browser: true}`: open the session's browser context and its root tab on
    /// `url` for `webview` (the session's first web view, W1) with `token`; then send `reply`
    /// (the ready result frame) to `client`, or an error for request `id` and
    /// `hostAbandon(session:)` when the browser cannot.
    case createBrowserSession(client: ClientID, id: Int64, session: String, webview: ItemID, url: String, token: String, reply: [UInt8])
    /// A page claimed `webview` of a browser session on connection `client`.
    case pageClaimed(client: ClientID, session: String, webview: ItemID)
    /// A controller's request only the browser answers (`webview.evaluate`, `webview.click`,
    /// `webview.type`, `session.screenshot`, `placeholder.snapshot`), validated; `target` is the
    /// web view or placeholder it names (for `session.screenshot`, the top item, which may be a
    /// native screen).
    case request(client: ClientID, id: Int64, method: String, session: String, target: ItemID, params: JSONObject)
}

/// The controller methods a browser session's browser answers (Bridge+Host.swift).
enum HostMethod: String, CaseIterable {
    case evaluate = "webview.evaluate"
    case click = "webview.click"
    case type = "webview.type"
    case screenshot = "session.screenshot"
    case snapshot = "placeholder.snapshot"
}

extension Bridge {
    /// Whether `session` was created with `browser: true`.
    public func isBrowserSession(_ sid: String) -> Bool { browserSessions.contains(sid) }

    /// The connection speaking for `webview` of `session`, if one does.
    public func pageClient(session sid: String, webview: ItemID) -> ClientID? {
        sessions[sid]?.pages[webview]
    }

    /// The browser could not open a browser session: it is discarded (its subscribers get
    /// `session.closed {reason: "closed"}`).
    public mutating func hostAbandon(session sid: String, at now: Int64) {
        browserSessions.remove(sid)
        closeSession(sid, reason: "closed", now: now)
    }

    /// Sends event `name` (with `session` and `fields`) to the session's subscribers.
    public mutating func hostEvent(session sid: String, _ name: String, _ fields: JSONObject) {
        withSession(sid) { b, s in
            b.emit(&s, name) { w in
                for (key, value) in fields {
                    w.key(key); w.write(value)
                }
            }
        }
    }

    /// The host's error reply for request `id` (`code` is usually `browser-error`).
    public static func errorFrame(id: Int64, code: ErrorCode, message: String) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.beginObject()
        w.key("id"); w.int(id)
        w.key("error"); w.beginObject()
        w.key("code"); w.string(code.rawValue)
        w.key("message"); w.string(message)
        w.endObject()
        w.endObject()
        return w.bytes
    }

    /// The host's success reply for request `id` with `result`.
    public static func resultFrame(id: Int64, _ result: JSONValue) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.beginObject()
        w.key("id"); w.int(id)
        w.key("result"); w.write(result)
        w.endObject()
        return w.bytes
    }

    /// `session.create {url, browser: true}`: the session is created as usual, but its reply
    /// waits for the browser.
    mutating func createBrowserSession(_ client: ClientID, id: Int64, url: String, now: Int64) throws(ProtocolError) {
        try createSession(url: url, connectedBy: nil, subscriber: client, cause: "session.create", now: now) { b, s in
            b.browserSessions.insert(s.id)
            b.hostCreate(client, id: id, url: url, &s)
        }
    }

    /// The host's part of `session.create {browser: true}`: the reply waits for the browser.
    mutating func hostCreate(_ client: ClientID, id: Int64, url: String, _ s: inout Session) {
        let sid = s.id
        let w1 = ItemID.webview(1)
        let token = s.engine.webView(w1)!.token
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("id"); w.int(id)
        w.key("result"); w.beginObject()
        w.key("session"); w.string(sid)
        w.key("webview"); w.string(w1.description)
        w.key("token"); w.string(token)
        w.key("pageUrl"); w.string(PageURL.withClaim(url, session: sid, webview: w1, token: token))
        w.key("browser"); w.bool(true)
        w.endObject()
        w.endObject()
        let rootURL = s.engine.webView(w1)?.url ?? url
        effects.append(.host(.createBrowserSession(client: client, id: id, session: sid, webview: w1, url: rootURL, token: token, reply: w.bytes)))
    }

    /// The methods a browser answers: checked here, carried out by the host.
    mutating func hostRequest(_ client: ClientID, id: Int64, method: String, _ p: Params) throws(ProtocolError) {
        let sid = try p.session()
        guard sessions.contains(sid) else { throw unknownSession(sid) }
        guard browserSessions.contains(sid) else {
            throw ProtocolError(.invalidParams, "session \(sid) has no browser: \(method) needs a session created with {\"browser\": true}")
        }
        let target: ItemID
        switch method {
        case "session.screenshot":
            guard let top = sessions[sid]!.engine.top else { throw ProtocolError(.unknownWebview, "session \(sid) has an empty stack") }
            target = top.id
        case "placeholder.snapshot":
            let text = try p.string("placeholder")
            guard let pid = ItemID(parsing: text), pid.kind == .placeholder,
                  sessions[sid]!.engine.stack.contains(where: { $0.id == pid }) else {
                throw ProtocolError(.invalidParams, "session \(sid) has no placeholder \"\(text)\" on its stack")
            }
            target = pid
        default:
            let text = try p.string("webview")
            guard let wid = ItemID(parsing: text), wid.kind == .webview, sessions[sid]!.engine.webView(wid) != nil else {
                throw ProtocolError(.unknownWebview, "session \(sid) has no web view \"\(text)\" on its stack")
            }
            target = wid
            switch method {
            case "webview.evaluate": _ = try p.string("expression")
            case "webview.click": _ = try p.string("selector")
            default:
                _ = try p.string("selector")
                _ = try p.string("text")
            }
        }
        effects.append(.host(.request(client: client, id: id, method: method, session: sid, target: target, params: p.object)))
    }
}
