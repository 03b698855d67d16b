// Router actions over a session's navigation tree.

/// What an action did.
public struct RouterOutcome: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// A screen was pushed.
        case push
        /// Screens were popped (`removed`).
        case pop
        /// The back algorithm swapped a web view with its placeholder.
        case swap
        /// The modal stack was dismissed.
        case dismiss
        /// `navigate` found the screen in the stack and went back to it (possibly popping
        /// nothing when it was on top).
        case popTo
        case replace
        case reset
        case selectTab
        /// The drawer opened or closed.
        case drawer
        case setParams
        /// An external link under the `open` policy: nothing stacked; the caller reports
        /// `external.open` `{url}`.
        case external
        /// Nothing happened (e.g. `goBack` on a stack of one).
        case none
    }

    public var kind: Kind
    /// Ids of the items removed from the tree, top first.
    public var removed: [ItemID]
    /// The item now on top of the stack the action worked on (the new screen for a push).
    public var item: RouteStackItem?
    /// How the target URL resolved (navigate, push, replace; the last screen of a reset).
    public var resolution: Resolution?
    /// For `.external`: the URL to open outside the app.
    public var externalURL: String?
    /// The ordered transitions from the old tree to `tree`.
    public var transitions: [Transition]
    /// The tree after the action.
    public var tree: NavigationTree

    /// `{"action","removed","item","route","external","transitions","tree","stack"}`; `stack` is
    /// the active stack (the contract's meaning of `stack`).
    public func toJSON() -> JSONValue {
        [
            "action": .string(kind.rawValue),
            "removed": .array(removed.map { .string($0.description) }),
            "item": item?.toJSON() ?? .null,
            "route": resolution?.toJSON() ?? .null,
            "external": externalURL.map { .string($0) } ?? .null,
            "transitions": .array(transitions.map { $0.toJSON() }),
            "tree": tree.toJSON(),
            "stack": .array(tree.activeStack.map { $0.toJSON() }),
        ]
    }
}

extension Router {
    /// Applies an action to a session. On success the session changes and the outcome lists the ordered
    /// transitions; on error (`RouterError`, e.g. `unknown-route`, `invalid-params`,
    /// `not-allowed`, `conflict`, `limit-exceeded`) the session is left exactly as it was.
    public func apply(_ action: RouterAction, on session: inout RouteSession) throws(RouterError) -> RouterOutcome {
        var s = session
        let before = s.tree
        var result = try apply(action, to: &s)
        if let broken = s.tree.validate() {
            throw RouterError(.conflict, "\(action.name) would break the navigation tree: \(broken)")
        }
        result.transitions = TreeDiff.diff(before, s.tree)
        result.tree = s.tree
        session = s
        return result
    }

    /// Applies an action to a tree whose new items draw their ids from `ids` (in the daemon:
    /// the session engine's allocator, so router and engine never draw the same id). On error
    /// neither changes.
    public func apply(_ action: RouterAction, on tree: inout NavigationTree, ids: inout ItemIDAllocator) throws(RouterError) -> RouterOutcome {
        var s = RouteSession(tree: tree, ids: ids)
        let result = try apply(action, on: &s)
        tree = s.tree
        ids = s.ids
        return result
    }

    /// Resolves a target without touching any session.
    public func resolve(_ target: RouteTarget) throws(RouterError) -> Resolution {
        switch target {
        case .url(let url): return try resolve(url)
        case .route(let name, let params): return try resolve(url(forRoute: name, params: params))
        }
    }

    private func outcome(_ kind: RouterOutcome.Kind, removed: [ItemID] = [], item: RouteStackItem? = nil, resolution: Resolution? = nil, tree: NavigationTree) -> RouterOutcome {
        RouterOutcome(kind: kind, removed: removed, item: item, resolution: resolution, externalURL: nil, transitions: [], tree: tree)
    }

    private func apply(_ action: RouterAction, to s: inout RouteSession) throws(RouterError) -> RouterOutcome {
        switch action {
        case .goBack:
            return goBack(&s)
        case .setParams(let params, let itemID):
            let id = itemID ?? s.tree.activeStack.last!.id
            guard let (stack, index) = s.tree.locate(id) else {
                throw .invalidParams("no item '\(id)' in the navigation tree")
            }
            var items = s.tree[stack]!
            for (k, v) in params {
                if let v { items[index].params[k] = v } else { items[index].params.removeValue(forKey: k) }
            }
            s.tree[stack] = items
            return outcome(.setParams, item: items[index], tree: s.tree)
        case .navigate(let target, let ref, let context):
            return try push(target, ref, context, reuse: true, &s)
        case .push(let target, let ref, let context):
            return try push(target, ref, context, reuse: false, &s)
        case .replace(let target, let ref, let context):
            let r = try resolve(target)
            if case .external(let url) = r.screen { return externalOutcome(url, r, s.tree) }
            let dest = try stackID(ref ?? .active, s.tree)
            var items = s.tree[dest]!
            guard !items.isEmpty else { throw RouterError(.conflict, "cannot replace in \(dest): it is empty") }
            let start = screenStart(items)
            let removed = items[start...].reversed().map(\.id)
            items.removeSubrange(start...)
            let item = makeItem(r, context: context, ids: &s.ids)!
            items.append(item)
            try checkDepth(items, dest)
            let dismissed = show(dest, &s.tree)
            s.tree[dest] = items
            return outcome(.replace, removed: dismissed + removed, item: item, resolution: r, tree: s.tree)
        case .pop(let count, let ref):
            guard count >= 1 else { throw .invalidParams("pop count must be at least 1") }
            let dest = try stackID(ref ?? .active, s.tree)
            return popScreens(dest, count: count, &s.tree)
        case .popToTop(let ref):
            let dest = try stackID(ref ?? .active, s.tree)
            var items = s.tree[dest]!
            guard let first = items.firstIndex(where: { $0.kind != .placeholder }), first < items.count - 1 else {
                return outcome(.none, item: items.last, tree: s.tree)
            }
            let removed = items[(first + 1)...].reversed().map(\.id)
            items.removeSubrange((first + 1)...)
            s.tree[dest] = items
            return outcome(.pop, removed: removed, item: items.last, tree: s.tree)
        case .reset(let targets, let ref):
            guard !targets.isEmpty else { throw .invalidParams("reset needs at least one screen") }
            let dest = try stackID(ref ?? .active, s.tree)
            var resolutions: [Resolution] = []
            for (i, t) in targets.enumerated() {
                let r = try resolve(t)
                if case .external(let url) = r.screen {
                    throw .invalidParams("reset: screen \(i) ('\(url)') is an external link; it cannot be stacked")
                }
                resolutions.append(r)
            }
            let removed = (s.tree[dest] ?? []).reversed().map(\.id)
            let items = resolutions.map { makeItem($0, context: nil, ids: &s.ids)! }
            try checkDepth(items, dest)
            let dismissed = dest == .modal ? [] : show(dest, &s.tree)
            s.tree.drawerOpen = false
            s.tree[dest] = items
            return outcome(.reset, removed: dismissed + removed, item: items.last, resolution: resolutions.last, tree: s.tree)
        case .resetHome:
            var removed = s.tree.modal.reversed().map(\.id)
            s.tree.modal = []
            s.tree.drawerOpen = false
            for t in s.tree.tabs.indices {
                var items = s.tree.tabs[t].items
                if let first = items.firstIndex(where: { $0.kind != .placeholder }), first < items.count - 1 {
                    removed += items[(first + 1)...].reversed().map(\.id)
                    items.removeSubrange((first + 1)...)
                }
                s.tree.tabs[t].items = items
            }
            s.tree.activeTab = s.tree.tabIndex(initialTab) ?? 0
            return outcome(.reset, removed: removed, item: s.tree.activeStack.last, tree: s.tree)
        case .openDrawer, .closeDrawer, .toggleDrawer:
            let open: Bool
            switch action {
            case .openDrawer: open = true
            case .closeDrawer: open = false
            default: open = !s.tree.drawerOpen
            }
            let changed = s.tree.drawerOpen != open
            s.tree.drawerOpen = open
            return outcome(changed ? .drawer : .none, item: s.tree.activeStack.last, tree: s.tree)
        case .selectTab(let name):
            guard let i = s.tree.tabIndex(name) else {
                throw .invalidParams("no tab '\(name)' (tabs: \(s.tree.tabs.map(\.name).joined(separator: ", ")))")
            }
            let removed = s.tree.modal.reversed().map(\.id)
            s.tree.modal = []
            s.tree.drawerOpen = false
            s.tree.activeTab = i
            return outcome(.selectTab, removed: removed, item: s.tree.activeStack.last, tree: s.tree)
        }
    }

    // MARK: - Pieces

    private func externalOutcome(_ url: String, _ r: Resolution, _ tree: NavigationTree) -> RouterOutcome {
        RouterOutcome(kind: .external, removed: [], item: nil, resolution: r, externalURL: url, transitions: [], tree: tree)
    }

    private func stackID(_ ref: StackRef, _ tree: NavigationTree) throws(RouterError) -> StackID {
        switch ref {
        case .active: return tree.activeStackID
        case .stack(let id):
            guard tree[id] != nil else {
                throw .invalidParams("no stack '\(id)' (stacks: \(tree.stackIDs.map(\.description).joined(separator: ", ")))")
            }
            return id
        }
    }

    /// Makes a stack visible before a screen is added to it: a tab is selected and the modal
    /// dismissed; the drawer closes.
    /// Returns the ids of the dismissed modal items, top first.
    private func show(_ stack: StackID, _ tree: inout NavigationTree) -> [ItemID] {
        tree.drawerOpen = false
        guard case .tab(let name) = stack else { return [] }
        let dismissed = tree.modal.reversed().map(\.id)
        tree.modal = []
        tree.activeTab = tree.tabIndex(name)!
        return dismissed
    }

    private func checkDepth(_ items: [RouteStackItem], _ stack: StackID) throws(RouterError) {
        if items.count > config.maxStackDepth {
            throw RouterError(.limitExceeded, "\(stack) would hold \(items.count) items; the maximum is \(config.maxStackDepth)")
        }
    }

    /// Index of the first item of the top screen: the top item and the placeholders right
    /// below it.
    func screenStart(_ items: [RouteStackItem]) -> Int {
        var i = items.count - 1
        while i > 0 && items[i - 1].kind == .placeholder { i -= 1 }
        return max(i, 0)
    }

    private func push(_ target: RouteTarget, _ ref: StackRef?, _ context: JSONValue?, reuse: Bool, _ s: inout RouteSession) throws(RouterError) -> RouterOutcome {
        let r = try resolve(target)
        if case .external(let url) = r.screen { return externalOutcome(url, r, s.tree) }
        let dest = try stackID(ref ?? r.stack.map { .stack($0) } ?? .active, s.tree)
        let dismissed = show(dest, &s.tree)
        var items = s.tree[dest]!
        var removed: [ItemID] = []
        if reuse, let i = sameScreen(r, in: items) {
            removed = items[(i + 1)...].reversed().map(\.id)
            items.removeSubrange((i + 1)...)
            for (k, v) in r.route.params { items[i].params[k] = v }
            if let title = r.title { items[i].title = title }
            if let context { items[i].context = context }
            s.tree[dest] = items
            return outcome(.popTo, removed: dismissed + removed, item: items[i], resolution: r, tree: s.tree)
        }
        let item = makeItem(r, context: context, ids: &s.ids)!
        items.append(item)
        try checkDepth(items, dest)
        s.tree[dest] = items
        return outcome(.push, removed: dismissed, item: item, resolution: r, tree: s.tree)
    }

    /// The highest item of `items` showing the same screen as `r`: same kind and route with the
    /// same template parameters, or, for a plain page (no route), the same URL.
    private func sameScreen(_ r: Resolution, in items: [RouteStackItem]) -> Int? {
        let kind: RouteStackItem.Kind
        switch r.screen {
        case .native: kind = .native
        case .webview: kind = .webview
        case .external: return nil
        }
        let identity = r.route.name.map { identityParams(ofRoute: $0) } ?? []
        return items.lastIndex { item in
            guard item.kind == kind else { return false }
            if let name = r.route.name {
                return item.route == name && identity.allSatisfy { item.params[$0] == r.route.pathParams[$0] }
            }
            if case .webview(let url) = r.screen { return item.route == nil && item.url == url }
            return false
        }
    }

    private func popScreens(_ dest: StackID, count: Int, _ tree: inout NavigationTree) -> RouterOutcome {
        var items = tree[dest]!
        var removed: [ItemID] = []
        var popped = 0
        let keepOne = dest != .modal
        while popped < count, !items.isEmpty {
            let start = screenStart(items)
            if keepOne && start == 0 { break }
            removed += items[start...].reversed().map(\.id)
            items.removeSubrange(start...)
            popped += 1
        }
        tree[dest] = items
        if popped == 0 { return outcome(.none, item: items.last, tree: tree) }
        if dest == .modal && items.isEmpty {
            return outcome(.dismiss, removed: removed, item: tree.activeStack.last, tree: tree)
        }
        return outcome(.pop, removed: removed, item: items.last, tree: tree)
    }

    /// `goBack`: the drawer, else the contract's back algorithm on the active stack.
    private func goBack(_ s: inout RouteSession) -> RouterOutcome {
        if s.tree.drawerOpen {
            s.tree.drawerOpen = false
            return outcome(.drawer, item: s.tree.activeStack.last, tree: s.tree)
        }
        let dest = s.tree.activeStackID
        var items = s.tree[dest]!
        if items.count == 1 {
            if dest == .modal {
                s.tree.modal = []
                return outcome(.dismiss, removed: [items[0].id], item: s.tree.activeStack.last, tree: s.tree)
            }
            // (A session whose url is no screen of the app has one tab, `main`, and no initial tab.)
            if config.backBehavior == .initialTab, s.tree.activeTabName != initialTab, let initial = s.tree.tabIndex(initialTab) {
                s.tree.activeTab = initial
                return outcome(.selectTab, item: s.tree.activeStack.last, tree: s.tree)
            }
            return outcome(.none, item: items[0], tree: s.tree)
        }
        let top = items.count - 1
        if items[top].kind == .webview, items[top - 1].kind == .placeholder {
            let placeholder = items.remove(at: top - 1)
            items[top - 1].url = placeholder.url
            s.tree[dest] = items
            return outcome(.swap, removed: [placeholder.id], item: items.last, tree: s.tree)
        }
        let popped = items.removeLast()
        s.tree[dest] = items
        return outcome(.pop, removed: [popped.id], item: items.last, tree: s.tree)
    }
}
