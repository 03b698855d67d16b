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
    /// root `W1`; a tree of one tab `main` when the url is no screen of the app.
    func makeRouteSession(router: Router, url: String) -> RouteSession {
        if !url.isEmpty, let s = try? router.makeSession(rootURL: url),
           let root = s.tree.activeStack.first, root.id == "W1", root.kind == .webview {
            return s
        }
        var ids = ItemIDs()
        let w1 = RouteStackItem(id: ids.next(.webview), kind: .webview, url: url)
        return RouteSession(tree: NavigationTree(tabs: [TabStack(name: "main", items: [w1])]), ids: ids)
    }

    /// Tokens for every web view of the tree that has none yet (tab roots created up front).
    mutating func issueTokens(_ sid: String) {
        guard let tree = sessions[sid]?.route?.tree else { return }
        for stack in tree.stackIDs {
            for item in tree[stack] ?? [] where item.kind == .webview {
                guard let id = ItemID(parsing: item.id), sessions[sid]!.webTokens[id] == nil else { continue }
                sessions[sid]!.webTokens[id] = sessions[sid]!.engine.webView(id)?.token ?? randomHex(bytes: 16)
            }
        }
    }

    /// The token of a web view anywhere in the session (the engine's stack or the tree).
    func token(of webview: ItemID, in sid: String) -> String? {
        guard let s = sessions[sid] else { return nil }
        return s.engine.webView(webview)?.token ?? s.webTokens[webview]
    }

    /// Whether the web view exists in the session at all (active stack or another stack).
    func exists(_ webview: ItemID, in sid: String) -> Bool {
        guard let s = sessions[sid] else { return false }
        if s.engine.webView(webview) != nil { return true }
        return s.route?.tree.locate(webview.description) != nil
    }

    // MARK: Keeping the tree in step with the engine

    /// Writes the engine's stack into the tree's active stack, keeping each surviving item's
    /// routing data. Returns the transitions from the tree before to the tree after.
    mutating func syncTree(_ sid: String) -> [Transition] {
        guard let s = sessions[sid], var route = s.route else { return [] }
        let before = route.tree
        let old = Dictionary(route.tree.activeStack.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let items = s.engine.stack.map { item -> RouteStackItem in
            var r = old[item.id.description] ?? RouteStackItem(id: item.id.description, kind: .webview, url: item.url)
            switch item {
            case .webview(let w):
                r.kind = .webview
                r.url = w.url
                if let t = w.title { r.title = t }
            case .placeholder(let p):
                r.kind = .placeholder
                r.url = p.url
                r.of = p.of.description
                if let t = p.title { r.title = t }
            case .native(let n):
                r.kind = .native
                r.url = n.url
            }
            return r
        }
        route.tree[route.tree.activeStackID] = items
        let next = s.engine.nextIDs
        route.ids.nextWebview = max(route.ids.nextWebview, next.webview)
        route.ids.nextPlaceholder = max(route.ids.nextPlaceholder, next.placeholder)
        route.ids.nextNative = max(route.ids.nextNative, next.native)
        sessions[sid]!.route = route
        guard before != route.tree else { return [] }
        return TreeDiff.diff(before, route.tree)
    }

    /// The engine's items for a stack of the tree: known items as the engine has them, new ones
    /// made from the tree (web views with their tokens and whether a page speaks for them).
    func engineStack(_ items: [RouteStackItem], _ sid: String) -> [StackItem] {
        let s = sessions[sid]!
        return items.compactMap { r -> StackItem? in
            guard let id = ItemID(parsing: r.id) else { return nil }
            if let i = s.engine.index(of: id) {
                var item = s.engine.stack[i]
                if case .native = item { item = .native(NativeScreen(id: id, url: r.url)) }
                return item
            }
            switch r.kind {
            case .webview:
                return .webview(WebView(id: id, mode: .classic, url: r.url, title: r.title,
                                        connected: s.pages[id] != nil, token: s.webTokens[id] ?? ""))
            case .placeholder:
                return .placeholder(Placeholder(id: id, of: r.of.flatMap(ItemID.init(parsing:)) ?? id, url: r.url, title: r.title))
            case .native:
                return .native(NativeScreen(id: id, url: r.url))
            }
        }
    }

    // MARK: Router actions

    /// Performs a router action on a session: the tree changes, the engine adopts the new
    /// active stack, pages and controllers are told. Returns the outcome, or the error with
    /// nothing changed.
    mutating func runRouterAction(_ action: RouterAction, on sid: String, requester: ItemID?, cause: String, now: Int64) throws(ProtocolError) -> RouterOutcome {
        guard let router, sessions[sid]?.route != nil else {
            throw ProtocolError(.unknownMethod, "router methods need a routing configuration (--config)")
        }
        _ = syncTree(sid)
        // The reply, written after the action, goes before the events it caused.
        replyMark = effects.count
        let before = sessions[sid]!.route!.tree
        if let requester {
            guard sessions[sid]!.engine.top?.id == requester else {
                throw ProtocolError(.conflict, "\(action.name) from \(requester), which is not on top")
            }
        }
        var route = sessions[sid]!.route!
        let next = sessions[sid]!.engine.nextIDs
        route.ids.nextWebview = max(route.ids.nextWebview, next.webview)
        route.ids.nextPlaceholder = max(route.ids.nextPlaceholder, next.placeholder)
        route.ids.nextNative = max(route.ids.nextNative, next.native)
        let outcome: RouterOutcome
        do {
            outcome = try router.apply(action, on: &route)
        } catch {
            throw ProtocolError(error)
        }
        sessions[sid]!.route = route
        issueTokens(sid)

        // Web views that are new to the session, anywhere in the tree.
        var opened: [ItemID] = []
        for stack in route.tree.stackIDs {
            for item in route.tree[stack] ?? [] where item.kind == .webview && before.locate(item.id) == nil {
                if let id = ItemID(parsing: item.id) { opened.append(id) }
            }
        }
        let removed = outcome.removed.compactMap(ItemID.init(parsing:))
        let newStack = engineStack(route.tree.activeStack, sid)
        let singleTab = handler(of: "webview.open", in: sid) == nil
        let oldStackIDs = sessions[sid]!.engine.stack.map(\.id)
        let adopted = step(sid, .adopt(stack: newStack, removed: removed, singleTab: singleTab,
                                       nextIDs: IDCounters(webview: route.ids.nextWebview, placeholder: route.ids.nextPlaceholder,
                                                           native: route.ids.nextNative)), now: now)
        if case .failure(let e) = adopted {
            engineEffects.removeAll(keepingCapacity: true)
            throw ProtocolError(.internal, "the engine refused the router's stack: \(e.message)")
        }
        routerTransitions = outcome.transitions
        flush(sid, cause: cause, now: now)
        routerTransitions = nil
        if !outcome.transitions.isEmpty, sessions[sid]!.engine.stack.map(\.id) == oldStackIDs {
            // The engine saw no change of the active stack's ids (so it sent no `stack.changed`)
            // but another stack or the tree's shape changed: controllers still hear about it.
            emitStackChanged(sid, cause: cause, transitions: outcome.transitions)
        }
        // Web views removed from stacks other than the active one: their pages go too.
        for id in removed where id.kind == .webview && !oldStackIDs.contains(id) {
            if let client = sessions[sid]?.pages.removeValue(forKey: id) {
                clients[client]?.role = .detached(session: sid, webview: id, why: "its web view was removed")
                sendEvent(client, "closed") { w in w.key("reason"); w.string("popped") }
                effects.append(.close(client, code: 1000, reason: ""))
            }
            sessions[sid]?.webTokens[id] = nil
            emit(sid, "webview.closed") { w in w.key("webview"); w.string(id.description) }
        }
        for id in removed { sessions[sid]?.webTokens[id] = nil }
        for id in opened {
            guard let token = token(of: id, in: sid), let item = route.tree.locate(id.description).flatMap({ route.tree[$0.stack]?[$0.index] }) else { continue }
            let pageUrl = PageURL.withClaim(item.url, session: sid, webview: id, token: token)
            rememberToken(sid, id, token)
            emit(sid, "webview.open") { w in
                w.key("webview"); w.string(id.description)
                w.key("url"); w.string(item.url)
                w.key("token"); w.string(token)
                w.key("pageUrl"); w.string(pageUrl)
                if let context = item.context { w.key("context"); w.write(context) }
            }
        }
        if outcome.kind == .external, let url = outcome.externalURL {
            emit(sid, "external.open") { w in
                w.key("url"); w.string(url)
                if let requester { w.key("webview"); w.string(requester.description) }
            }
        }
        updateIdle(sid, now: now)
        return outcome
    }

    /// `stack.changed` with the router's fields, outside an engine flush.
    mutating func emitStackChanged(_ sid: String, cause: String, transitions: [Transition]) {
        guard hasSubscribers(sid, "stack.changed") else { return }
        let stack = stackJSON(sid)
        let tree = sessions[sid]?.route?.tree.toJSON() ?? .null
        emit(sid, "stack.changed") { w in
            w.key("stack"); w.raw(stack)
            w.key("cause"); w.string(cause)
            w.key("transitions"); w.write(.array(transitions.map { $0.toJSON() }))
            w.key("tree"); w.write(tree)
        }
    }

    /// The result of a router action: the router's outcome, with `stack` as the contract has it.
    mutating func writeOutcome(_ client: ClientID, id: Int64, _ outcome: RouterOutcome, _ sid: String) {
        var json = outcome.toJSON()
        if case .object(var o) = json {
            o["stack"] = nil
            json = .object(o)
        }
        let stack = stackJSON(sid)
        let fields = json.objectValue ?? JSONObject()
        let mark = replyMark
        replyMark = nil
        sendResult(client, id: id) { w in
            for (key, value) in fields {
                w.key(key); w.write(value)
            }
            w.key("stack"); w.raw(stack)
        }
        moveLastEffect(to: mark)
    }

    /// Moves the effect just appended (a reply) to `mark`, ahead of the events its request caused.
    mutating func moveLastEffect(to mark: Int?) {
        guard let mark, mark < effects.count - 1 else { return }
        let reply = effects.removeLast()
        effects.insert(reply, at: mark)
    }

    // MARK: Requests

    mutating func routerRequest(_ method: RouterMethod, _ client: ClientID, id: Int64, _ p: Params, now: Int64) throws(ProtocolError) {
        guard let router else {
            throw ProtocolError(.unknownMethod, "\"\(method.rawValue)\" needs a routing configuration: start bridged with --config FILE")
        }
        switch method {
        case .resolve:
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
            let sid = try existingSession(p)
            _ = syncTree(sid)
            let tree = sessions[sid]!.route!.tree.toJSON()
            let stack = stackJSON(sid)
            sendResult(client, id: id) { w in
                w.key("tree"); w.write(tree)
                w.key("stack"); w.raw(stack)
            }
        case .perform:
            let sid = try existingSession(p)
            guard let a = p.object["action"] else { throw ProtocolError(.invalidParams, "\"action\" is required") }
            try routerActionRequest(try Self.routerAction(a), sid, method, client, id: id, now: now)
        case .deeplinkOpen:
            let sid = try existingSession(p)
            try routerActionRequest(try Self.deeplinkAction(p), sid, method, client, id: id, now: now)
        case .selectTab:
            let sid = try existingSession(p)
            try routerActionRequest(.selectTab(try p.string("tab")), sid, method, client, id: id, now: now)
        }
    }

    /// `router.perform`, `router.selectTab`, `deeplink.open`: the action, then its outcome as the reply.
    mutating func routerActionRequest(_ action: RouterAction, _ sid: String, _ method: RouterMethod, _ client: ClientID, id: Int64, now: Int64) throws(ProtocolError) {
        if case .goBack = action, try engineBack(sid, client: client, id: id, cause: method.rawValue, now: now) {
            return
        }
        let outcome = try runRouterAction(action, on: sid, requester: nil, cause: method.rawValue, now: now)
        writeOutcome(client, id: id, outcome, sid)
    }

    /// `goBack` on an active stack with room to go back, the drawer closed: the engine's back
    /// algorithm (so the page is told to go back and the placeholder's foreground is shown).
    /// Returns false when the router must decide (drawer, dismissing a modal, tabs).
    mutating func engineBack(_ sid: String, client: ClientID, id: Int64, cause: String, now: Int64) throws(ProtocolError) -> Bool {
        guard let route = sessions[sid]?.route, !route.tree.drawerOpen, sessions[sid]!.engine.canGoBack else { return false }
        let singleTab = handler(of: "webview.open", in: sid) == nil
        let mark = effects.count
        switch step(sid, .back(requester: nil, singleTab: singleTab), now: now) {
        case .success(.back(let action, let removed)):
            let transitions = flush(sid, cause: cause, now: now)
            let after = sessions[sid]!.route!.tree
            for r in removed { sessions[sid]?.webTokens[r] = nil }
            let stack = stackJSON(sid)
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
            moveLastEffect(to: mark)
            return true
        case .success:
            engineEffects.removeAll(keepingCapacity: true)
            return false
        case .failure(let e):
            engineEffects.removeAll(keepingCapacity: true)
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
    mutating func routeNavigate(_ sid: String, from webview: ItemID, client: ClientID, url: String, replyTo id: Int64?, now: Int64) {
        do throws(ProtocolError) {
            let action = try Self.routerAction(["type": "push", "url": .string(PageURL.stripClaim(url))])
            let outcome = try runRouterAction(action, on: sid, requester: webview, cause: "navigate", now: now)
            if let id { writeOutcome(client, id: id, outcome, sid) }
        } catch {
            failNavigate(client, id: id, url: url, error)
        }
    }
}
