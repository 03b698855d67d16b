/// Limits on what one page or controller can make a session hold (`--max-url-bytes`,
/// `--max-session-bytes`; docs/SECURITY.md and docs/PROTOCOL.md).
///
/// What a session holds is counted as `Session.heldBytes`: the UTF-8 bytes of every url and
/// title of its items (the active stack and, with a routing configuration, every stack of the
/// tree) plus `itemOverhead` per item. A request that would take a session over the bound is
/// refused before anything changes.
extension Bridge {
    /// A url (or title) longer than `maxURLBytes` is `invalid-params`.
    func checkURL(_ text: String?, _ field: String) throws(ProtocolError) {
        guard let text, text.utf8.count > configuration.maxURLBytes else { return }
        throw ProtocolError(.invalidParams, "\"\(field)\" is \(text.utf8.count) bytes, more than --max-url-bytes (\(configuration.maxURLBytes)) allows")
    }

    /// Before a step that adds an item (a `pwa-navigate`'s placeholder, a pushed web view): the
    /// url and title within `maxURLBytes`, and the session within `maxSessionBytes` afterwards
    /// (counted generously: the top web view's url and title again, for the placeholder that
    /// copies them, plus the new ones).
    func checkPush(_ s: inout Session, url: String?, title: String?) throws(ProtocolError) {
        try checkURL(url, "url")
        try checkURL(title, "title")
        var adding = 2 * Session.itemOverhead + (url?.utf8.count ?? 0) + (title?.utf8.count ?? 0)
        // The top item again (never a placeholder: a stack does not end with one), read in place.
        if let top = s.engine.stack.indices.last { adding += s.engine.stack[top].heldBytes - Session.itemOverhead }
        let held = s.heldBytes
        guard held + adding > configuration.maxSessionBytes else { return }
        throw ProtocolError(.limitExceeded, "session \(s.id) holds \(held) bytes of urls and titles; this would take it over --max-session-bytes (\(configuration.maxSessionBytes))")
    }

    /// Before a step that gives a web view another url (a page's `hello` with its `url`,
    /// `pwa-navigated`, the browser's report of a url change): the session within
    /// `maxSessionBytes` afterwards (the url within `maxURLBytes` is `checkURL`'s).
    func checkURLChange(_ s: Session, webview: ItemID, url: String?) throws(ProtocolError) {
        guard let url, let current = s.engine.webView(webview) else { return }
        let growth = url.utf8.count - current.url.utf8.count
        guard growth > 0 else { return }
        let held = s.heldBytes
        guard held + growth > configuration.maxSessionBytes else { return }
        throw ProtocolError(.limitExceeded, "session \(s.id) holds \(held) bytes of urls and titles; \(webview)'s new url (\(url.utf8.count) bytes) would take it over --max-session-bytes (\(configuration.maxSessionBytes))")
    }

    /// After a router action computed on a copy: every url and title within `maxURLBytes`, the
    /// whole session within `maxSessionBytes`.
    func checkHeld(_ s: Session) throws(ProtocolError) {
        if let tree = s.tree {
            for stack in tree.stackIDs {
                for item in tree[stack] ?? [] {
                    try checkURL(item.url, "url")
                    try checkURL(item.title, "title")
                }
            }
        }
        let held = s.heldBytes
        guard held > configuration.maxSessionBytes else { return }
        throw ProtocolError(.limitExceeded, "session \(s.id) would hold \(held) bytes of urls and titles, more than --max-session-bytes (\(configuration.maxSessionBytes)) allows")
    }
}

extension Session {
    /// What every item counts besides its url and title.
    static let itemOverhead = 64

    /// The bytes of urls and titles the session holds, plus `itemOverhead` per item: the active
    /// stack, and every stack of the routing tree (whose active stack mirrors the engine's; the
    /// larger count of the two is taken).
    var heldBytes: Int {
        var engineBytes = 0
        // By index, reading counts only: `for item in engine.stack` copied every item (its url,
        // title and token retained and released), a pwa-navigate's dearest part.
        for i in engine.stack.indices { engineBytes += engine.stack[i].heldBytes }
        guard let tree else { return engineBytes }
        var treeBytes = 0
        var activeBytes = 0
        for stack in tree.stackIDs {
            for item in tree[stack] ?? [] {
                let n = Session.itemOverhead + item.url.utf8.count + (item.title?.utf8.count ?? 0)
                treeBytes += n
                if stack == tree.activeStackID { activeBytes += n }
            }
        }
        return treeBytes - activeBytes + max(activeBytes, engineBytes)
    }
}

extension StackItem {
    /// What the item counts towards `Session.heldBytes`: its url and title, plus `itemOverhead`.
    var heldBytes: Int {
        switch self {
        case .webview(let w): Session.itemOverhead + w.url.utf8.count + (w.title?.utf8.count ?? 0)
        case .placeholder(let p): Session.itemOverhead + p.url.utf8.count + (p.title?.utf8.count ?? 0)
        case .native(let n): Session.itemOverhead + n.url.utf8.count
        }
    }
}
