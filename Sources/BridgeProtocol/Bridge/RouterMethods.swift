/// The router in the daemon (`--config`): sessions whose navigation is a tree of stacks (tabs, a
/// modal, a drawer) around the engine's active stack.
///
/// The engine keeps what the contract is about — the active stack's web views, placeholders,
/// pages and the foreground — and the router's tree keeps every stack with its routing data.
/// After each engine change the tree's active stack is brought in step with the engine; after
/// each router action the engine adopts the tree's (possibly other) active stack.
extension Bridge {
    // MARK: Sessions

    /// A new session's tree: the configured tabs with the page (or `url`) as the initial tab's
    /// root `W1`; a tree of one tab `main` when the url is no screen of the app. Ids are drawn
    /// from `ids` (the new session's allocator, whose first web view is the engine's root).
    func makeRouteTree(router: Router, url: String, ids: inout ItemIDAllocator) -> NavigationTree {
        if !url.isEmpty {
            var draft = ids
            if let tree = try? router.makeTree(rootURL: url, ids: &draft),
               let root = tree.activeStack.first, root.id == ids.peek(.webview) {
                ids = draft
                return tree
            }
        }
        let w1 = RouteStackItem(id: ids.next(.webview), url: url)
        return NavigationTree(tabs: [TabStack(name: "main", items: [w1])])
    }

    /// Tokens for every web view of the tree that has none yet (tab roots created up front).
    mutating func issueTokens(_ s: inout Session) {
        guard let tree = s.tree else { return }
        for stack in tree.stackIDs {
            for item in tree[stack] ?? [] where item.kind == .webview {
                _ = issueToken(&s, item.id)
            }
        }
    }

    /// The token of a web view of the tree: the one it has (the engine's, or the one issued
    /// with the tree), else a new one (128 random bits), kept. The only way the router and the
    /// profiles that draw a tree get a web view's token, so that none is ever made without one (an
    /// empty token would compare equal to an empty claim).
    mutating func issueToken(_ s: inout Session, _ id: ItemID) -> String {
        if let token = s.webTokens[id] { return token }
        let token = s.engine.webView(id)?.token ?? randomHex(bytes: 16)
        s.webTokens[id] = token
        return token
    }

    /// The token of a web view anywhere in the session (the engine's stack or the tree).
    func token(of webview: ItemID, in s: Session) -> String? {
        s.engine.webView(webview)?.token ?? s.webTokens[webview]
    }

    /// Whether the web view exists in the session at all (active stack or another stack).
    func exists(_ webview: ItemID, in s: Session) -> Bool {
        if s.engine.webView(webview) != nil { return true }
        return s.tree?.locate(webview) != nil
    }

    // MARK: Keeping the tree in step with the engine

    /// Writes the engine's stack into the tree's active stack, keeping each surviving item's
    /// routing data. Returns the transitions from the tree before to the tree after.
    func syncTree(_ s: inout Session) -> [Transition] {
        guard var tree = s.tree else { return [] }
        let before = tree
        let old = Dictionary(tree.activeStack.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let items = s.engine.stack.map { item -> RouteStackItem in
            var r = old[item.id] ?? RouteStackItem(id: item.id, url: item.url)
            switch item {
            case .webview(let w):
                r.url = w.url
                if let t = w.title { r.title = t }
            case .placeholder(let p):
                r.url = p.url
                r.of = p.of
                if let t = p.title { r.title = t }
            case .native(let n):
                r.url = n.url
            }
            return r
        }
        tree[tree.activeStackID] = items
        s.tree = tree
        guard before != tree else { return [] }
        return TreeDiff.diff(before, tree)
    }

    /// The engine's items for a stack of the tree: known items as the engine has them, new ones
    /// made from the tree (web views with their tokens and whether a page speaks for them).
    mutating func engineStack(_ items: [RouteStackItem], _ s: inout Session) -> [StackItem] {
        items.map { r -> StackItem in
            let id = r.id
            if let i = s.engine.index(of: id) {
                var item = s.engine.stack[i]
                if case .native = item { item = .native(NativeScreen(id: id, url: r.url)) }
                return item
            }
            switch r.kind {
            case .webview:
                return .webview(WebView(id: id, mode: .classic, url: r.url, title: r.title,
                                        connected: s.pages[id] != nil, token: issueToken(&s, id)))
            case .placeholder:
                return .placeholder(Placeholder(id: id, of: r.of ?? id, url: r.url, title: r.title))
            case .native:
                return .native(NativeScreen(id: id, url: r.url))
            }
        }
    }

    // MARK: Router actions

    /// Runs a router action on a session. Everything is computed on a copy of the session (and
    /// of the generator, for new tokens); only when the whole action succeeded is the copy
    /// committed. Then `answer` writes the reply, and the pages and controllers are told.
    /// On error nothing has changed.
    mutating func runRouterAction(_ action: RouterAction, on s: inout Session, requester: ItemID?, cause: String, now: Int64,
                                  answer: (inout Self, inout Session, RouterOutcome) -> Void) throws(ProtocolError) {
        guard let router, s.isRouted else {
            throw ProtocolError(.unknownMethod, "router methods need a routing configuration (--config)")
        }
        if let requester {
            guard s.engine.top?.id == requester else {
                throw ProtocolError(.conflict, "\(action.name) from \(requester), which is not on top")
            }
        }
        var draft = s
        let savedRNG = rng
        _ = syncTree(&draft)
        let before = draft.tree!
        var tree = before
        let outcome: RouterOutcome
        do {
            outcome = try router.apply(action, on: &tree, ids: &draft.engine.itemIDs)
        } catch {
            throw ProtocolError(error)
        }
        draft.tree = tree
        issueTokens(&draft)

        // Web views that are new to the session, anywhere in the tree.
        var opened: [ItemID] = []
        for stack in tree.stackIDs {
            for item in tree[stack] ?? [] where item.kind == .webview && before.locate(item.id) == nil {
                opened.append(item.id)
            }
        }
        let removed = outcome.removed
        let newStack = engineStack(tree.activeStack, &draft)
        let singleTab = singleTab(draft)
        let oldStackIDs = draft.engine.stack.map(\.id)
        var list = takeEffectStorage()
        defer { returnEffectStorage(&list) }
        let adopted = draft.engine.handle(.adopt(stack: newStack, removed: removed, singleTab: singleTab),
                                          at: now, into: &list)
        if case .failure(let e) = adopted {
            rng = savedRNG
            throw ProtocolError(.internal, "the engine refused the router's stack: \(e.message)")
        }
        do throws(ProtocolError) {
            try checkHeld(draft)
        } catch {
            rng = savedRNG
            throw error
        }

        // The whole action succeeded: commit, answer, then tell.
        s = draft
        answer(&self, &s, outcome)
        flush(&list, &s, cause: cause, transitions: outcome.transitions, keepFront: false, now: now)
        if !outcome.transitions.isEmpty, s.engine.stack.map(\.id) == oldStackIDs {
            // The engine saw no change of the active stack's ids (so it sent no `stack.changed`)
            // but another stack or the tree's shape changed: controllers still hear about it.
            emitStackChanged(&s, cause: cause, transitions: outcome.transitions)
        }
        // Web views removed from stacks other than the active one: their pages go too.
        for id in removed where id.kind == .webview && !oldStackIDs.contains(id) {
            closePageOutsideTheStack(&s, webview: id, reason: "popped", why: "its web view was removed")
            s.webTokens[id] = nil
            emitWebviewClosed(&s, id)
            if s.isBrowser { browserObserve(&s, .webviewClosed(webview: id)) }
        }
        for id in removed { s.webTokens[id] = nil }
        for id in opened { announceRouterWebView(&s, id) }
        if s.isBrowser { browserKeepFront(&s) }
        if outcome.kind == .external, let url = outcome.externalURL {
            emitExternalOpen(&s, url: url, from: requester)
        }
        updateIdle(&s, now: now)
    }

    /// `webview.open` for a web view of the session's tree (in a browser session its tab is
    /// opened too).
    mutating func announceRouterWebView(_ s: inout Session, _ id: ItemID) {
        guard let tree = s.tree, let token = token(of: id, in: s),
              let item = tree.locate(id).flatMap({ tree[$0.stack]?[$0.index] }) else { return }
        rememberToken(&s, id, token)
        emitWebviewOpen(&s, id, url: item.url, token: token, context: item.context)
        if s.isBrowser { browserObserve(&s, .webviewOpen(webview: id, url: item.url, token: token)) }
    }

    /// The result of a router action: the router's outcome, with `stack` as the contract has it.
    mutating func writeOutcome(_ client: ClientID, id: Int64, _ outcome: RouterOutcome, _ s: inout Session) {
        var json = outcome.toJSON()
        if case .object(var o) = json {
            o["stack"] = nil
            json = .object(o)
        }
        let stack = stackJSON(&s)
        let fields = json.objectValue ?? JSONObject()
        sendResult(client, id: id) { w in
            for (key, value) in fields {
                w.key(key); w.write(value)
            }
            w.key("stack"); w.raw(stack)
        }
    }

    // MARK: Requests

    mutating func routerRequest(_ method: RouterMethod, named name: BridgeMethod, _ client: ClientID, id: Int64, _ p: Params, now: Int64) throws(ProtocolError) {
        let needsConfiguration = ProtocolError(.unknownMethod, "\"\(name.name)\" needs a routing configuration: start bridged with --config FILE")
        // A session whose profile draws its tree has one without a configuration.
        if router == nil, method == .resolve || (try? p.string("session")).flatMap({ sessions[$0]?.profileDrawsTree }) != true {
            throw needsConfiguration
        }
        switch method {
        case .resolve:
            guard let router else { throw needsConfiguration }
            let url = try p.string("url")
            let resolution: Resolution
            do {
                resolution = try router.resolve(PageURL.stripClaim(url))
            } catch {
                throw ProtocolError(error)
            }
            let json = resolution.toJSON()
            sendResult(client, id: id) { w in
                for (key, value) in json.objectValue ?? JSONObject() { w.key(key); w.write(value) }
            }
        case .get:
            try withExistingSession(p) { b, s in
                // A read: the tree as the engine has it, drawn on a copy (router.get writes no state).
                var view = s
                _ = b.syncTree(&view)
                let tree = view.tree!.toJSON()
                let stack = b.stackJSON(&s)
                b.sendResult(client, id: id) { w in
                    w.key("tree"); w.write(tree)
                    w.key("stack"); w.raw(stack)
                }
            }
        case .perform:
            try withExistingSession(p) { (b, s) throws(ProtocolError) in
                guard let a = p.object["action"] else { throw ProtocolError(.invalidParams, "\"action\" is required") }
                try b.routerActionRequest(try Self.routerAction(a), &s, name, client, id: id, now: now)
            }
        case .deeplinkOpen:
            try withExistingSession(p) { (b, s) throws(ProtocolError) in
                try b.routerActionRequest(try Self.deeplinkAction(p), &s, name, client, id: id, now: now)
            }
        case .selectTab:
            try withExistingSession(p) { (b, s) throws(ProtocolError) in
                try b.routerActionRequest(.selectTab(try p.string("tab")), &s, name, client, id: id, now: now)
            }
        }
    }

    /// `router.perform`, `router.selectTab`, `deeplink.open`: the action, then its outcome as the reply.
    mutating func routerActionRequest(_ action: RouterAction, _ s: inout Session, _ method: BridgeMethod, _ client: ClientID, id: Int64, now: Int64) throws(ProtocolError) {
        if let profile = s.profile,
           try type(of: profile).routerAction(&self, action, &s, method: method, client: client, id: id, now: now) {
            return
        }
        if case .goBack = action, try engineBack(&s, client: client, id: id, cause: method.name, now: now) {
            return
        }
        try runRouterAction(action, on: &s, requester: nil, cause: method.name, now: now) { b, s, outcome in
            b.writeOutcome(client, id: id, outcome, &s)
        }
    }

    // MARK: Back

    /// The one back of a routed session, whoever asks (`router.perform goBack`,
    /// `navigation.back`, a page's `back`): whether the router decides it — the drawer is open
    /// (close it), or the active stack has one item (dismiss a modal; on a tab, its
    /// `back_behavior`) — rather than the contract's back algorithm on the active stack (so
    /// that the page is told to go back and the placeholder's foreground is shown).
    func routerDecidesBack(_ s: Session) -> Bool {
        guard case .some = router, !s.profileDrawsTree, let tree = s.tree else { return false }
        return tree.drawerOpen || !s.engine.canGoBack
    }

    /// `navigation.back` or a page's `back` that the router decides: its `goBack`, answered as
    /// the back algorithm answers (`{action, removed, stack}`; `action` is the router's:
    /// `drawer`, `dismiss`, `selectTab` or `none`). A refusal (a page not on top) answers an
    /// error, or, for an event, changes nothing.
    mutating func routerBack(_ s: inout Session, requester: ItemID?, replyTo: (ClientID, Int64)?, cause: String, now: Int64) {
        do throws(ProtocolError) {
            try runRouterAction(.goBack, on: &s, requester: requester, cause: cause, now: now) { b, s, outcome in
                if let action = BackAction(rawValue: outcome.kind.rawValue) { b.stats.back(action) }
                guard let (client, id) = replyTo else { return }
                let stack = b.stackJSON(&s)
                b.sendResult(client, id: id) { w in
                    w.key("action"); w.string(outcome.kind.rawValue)
                    w.key("removed"); Self.writeIDs(outcome.removed, into: &w)
                    w.key("stack"); w.raw(stack)
                }
            }
        } catch {
            if let (client, id) = replyTo { sendError(client, id: id, error) }
        }
    }

    /// `goBack` on an active stack with room to go back, the drawer closed: the engine's back
    /// algorithm (so the page is told to go back and the placeholder's foreground is shown).
    /// Returns false when the router must decide (`routerDecidesBack`).
    mutating func engineBack(_ s: inout Session, client: ClientID, id: Int64, cause: String, now: Int64) throws(ProtocolError) -> Bool {
        guard !routerDecidesBack(s), s.isRouted else { return false }
        let singleTab = singleTab(s)
        var list = takeEffectStorage()
        defer { returnEffectStorage(&list) }
        switch s.engine.handle(.back(requester: nil, singleTab: singleTab), at: now, into: &list) {
        case .success(.back(let action, let removed)):
            stats.back(action)
            let transitions = syncTree(&s)
            let after = s.tree!
            for r in removed { s.webTokens[r] = nil }
            let stack = stackJSON(&s)
            sendResult(client, id: id) { w in
                w.key("action"); w.string(action.rawValue)
                w.key("removed"); Self.writeIDs(removed, into: &w)
                w.key("item"); w.write(after.activeStack.last?.toJSON() ?? .null)
                w.key("route"); w.null()
                w.key("external"); w.null()
                w.key("transitions"); w.write(.array(transitions.map { $0.toJSON() }))
                w.key("tree"); w.write(after.toJSON())
                w.key("stack"); w.raw(stack)
            }
            flush(&list, &s, cause: cause, transitions: transitions, now: now)
            return true
        case .success(let other):
            preconditionFailure("the engine answered back with \(other)")
        case .failure(let e):
            throw ProtocolError(e)
        }
    }

    /// A router action from its JSON form; a malformed one is `invalid-params` (or the router's code).
    static func routerAction(_ json: JSONValue) throws(ProtocolError) -> RouterAction {
        do {
            return try RouterAction(json: json)
        } catch {
            throw ProtocolError(error)
        }
    }

    /// `deeplink.open {url, context?}` as the router's `navigate`.
    static func deeplinkAction(_ p: Params) throws(ProtocolError) -> RouterAction {
        var obj: JSONObject = ["type": "navigate", "url": .string(PageURL.stripClaim(try p.string("url")))]
        if let context = p.object["context"], context != .null { obj["context"] = context }
        return try routerAction(.object(obj))
    }

    /// A page's classic navigation with a routing configuration: the router's `push` (a classic
    /// navigation always stacks a new screen, as `navigateToUrl` does without a configuration).
    mutating func routeNavigate(_ s: inout Session, from webview: ItemID, client: ClientID, url: String, replyTo id: Int64?, now: Int64) {
        do throws(ProtocolError) {
            let action = try Self.routerAction(["type": "push", "url": .string(PageURL.stripClaim(url))])
            try runRouterAction(action, on: &s, requester: webview, cause: BridgeMethod.navigate.name, now: now) { b, s, outcome in
                if let id { b.writeOutcome(client, id: id, outcome, &s) }
            }
        } catch {
            failNavigate(client, id: id, url: url, error)
        }
    }
}
