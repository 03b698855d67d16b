/// The browser's own Back and Forward buttons (docs/PROTOCOL.md, "The browser's history").
///
/// A page that comes back by the browser's history (restored from the back-forward cache, or
/// loaded again by Back/Forward from the `pageUrl` in its address bar) says so with
/// `"history": true` in its `hello`. Then:
///
/// - claiming a web view that is covered: everything above it is popped, as the host's back
///   would (pages told `closed {reason:"popped"}` and closed, `webview.closed`, one
///   `stack.changed {cause:"history"}`); and when the page's url is the url of one of the web
///   view's placeholders, the tab went back inside that web view's history too: that placeholder
///   and those above it are discarded (no `back` event: the page is already there);
/// - claiming a web view that is gone (Forward after Back: it was popped), with the token it was
///   given: a new classic web view for the page's url is pushed and claimed by this page, as a
///   classic navigation would (`webview.open`, `stack.changed {cause:"history"}`); the `hello`
///   result names the new web view, its token and `pageUrl`.
///
/// Without `"history"`, a claim never changes the stack (a page that reconnects after a network
/// drop must not pop anything).
extension Bridge {
    /// The most tokens of closed web views a session remembers (for Forward after Back).
    static var pastTokenLimit: Int { 256 }

    static func isHistoryHello(_ p: Params) -> Bool {
        if case .bool(true)? = p.object["history"] { return true }
        return false
    }

    /// What the host's hooks see of every observation: counters, and the tokens of new web
    /// views (kept after they close, for `returnToClosedWebView`). A routed session's token of
    /// a web view the engine closed goes (as when the router removes it: the same back leaves
    /// the same session, whoever asked).
    mutating func noteObservation(_ s: inout Session, _ observation: Observation) {
        stats.observe(observation)
        switch observation {
        case .webviewOpen(let webview, _, let token): rememberToken(&s, webview, token)
        case .webviewClosed(let webview): if !s.webTokens.isEmpty { s.webTokens[webview] = nil }
        default: break
        }
    }

    /// Keeps the token of a new web view for after it closes (at most `pastTokenLimit`).
    func rememberToken(_ s: inout Session, _ webview: ItemID, _ token: String) {
        if s.pastTokens.count >= Self.pastTokenLimit, let oldest = s.pastTokens.keys.min(by: { $0.number < $1.number }) {
            s.pastTokens[oldest] = nil
        }
        s.pastTokens[webview] = token
    }

    /// A history `hello` claiming web view `webview` of the session, whose page is now connected
    /// (`previousURL` was its url before the claim): the stack is cut back to it; the engine's
    /// effects are appended to `list`.
    mutating func returnByHistory(_ s: inout Session, to webview: ItemID, url: String?, previousURL: String?,
                                  into list: inout [SessionEffect], now: Int64) {
        guard let index = s.engine.index(of: webview) else { return }
        let stack = s.engine.stack
        var start = index  // the web view's placeholders from here up are dropped
        if let url, url != previousURL {
            // The placeholders of this web view sit directly below it, newest on top.
            var i = index - 1
            while i >= 0, case .placeholder(let p) = stack[i], p.of == webview {
                if p.url == url {
                    start = i
                    break
                }
                i -= 1
            }
        }
        guard index + 1 < stack.count || start < index else { return }
        var newStack = Array(stack[..<start])
        newStack.append(stack[index])
        var removed: [ItemID] = []
        for i in start..<index { removed.append(stack[i].id) }
        for i in (index + 1)..<stack.count { removed.append(stack[i].id) }
        for id in removed where id.kind == .webview { stats.back(.pop) }
        let singleTab = singleTab(s)
        s.engine.handle(.adopt(stack: newStack, removed: removed, singleTab: singleTab), at: now, into: &list)
    }

    /// A history `hello` claiming a web view that is no longer on the stack (Forward after
    /// Back). Returns false when `webviewText` is not a closed web view of the session (the
    /// caller then answers as for any unknown web view).
    mutating func returnToClosedWebView(_ client: ClientID, id: Int64, _ s: inout Session, webviewText: String, token: String,
                                        url: String?, now: Int64) throws(ProtocolError) -> Bool {
        guard let old = ItemID(parsing: webviewText), old.kind == .webview,
              !exists(old, in: s), let expected = s.pastTokens[old] else { return false }
        guard Self.constantTimeEquals(expected, token) else {
            throw ProtocolError(.notAllowed, "wrong token for \(old)")
        }
        guard let url, !url.isEmpty else {
            throw ProtocolError(.invalidParams, "\"url\" is required to come back to a closed web view")
        }
        try checkPush(&s, url: url, title: nil)
        let saved = rng
        let newToken = randomHex(bytes: 16)
        // Not single-tab: the tab is already here; nobody is sent `load`.
        var list = takeEffectStorage()
        defer { returnEffectStorage(&list) }
        switch s.engine.handle(.navigateToUrl(url: url, token: newToken, requester: nil, singleTab: false), at: now, into: &list) {
        case .success(.navigateToUrl(let webview, _)):
            s.pastTokens[old] = nil  // one way back only
            s.pages[webview] = client
            clients[client]?.role = .page(session: s.id, webview: webview)
            s.engine.handle(.pageConnected(webview, url: url), at: now, into: &list)
            writeHelloResult(client, id: id, &s, webview: webview)
            flush(&list, &s, cause: "history", now: now)
            return true
        case .success:
            flush(&list, &s, cause: "history", now: now)
            return true
        case .failure(let e):
            rng = saved
            throw ProtocolError(e)
        }
    }
}
