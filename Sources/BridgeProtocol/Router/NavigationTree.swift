// A session's navigation tree: tabs, each with its stack, a modal stack on top, a drawer.

/// Names a stack of the tree: `tab:<name>` or `modal`.
public enum StackID: Sendable, Hashable, CustomStringConvertible {
    case tab(String)
    case modal

    public var description: String {
        switch self {
        case .tab(let name): return "tab:\(name)"
        case .modal: return "modal"
        }
    }

    /// Parses `tab:<name>` or `modal`.
    public init?(_ text: String) {
        if text == "modal" {
            self = .modal
        } else if text.hasPrefix("tab:"), text.count > 4 {
            self = .tab(String(text.dropFirst(4)))
        } else {
            return nil
        }
    }
}

/// One item of a stack. Ids follow the contract: `W1…` web views, `P1…` placeholders,
/// `N1…` native screens, per session, never reused; the id's kind is the item's kind.
public struct RouteStackItem: Sendable, Equatable {
    public typealias Kind = ItemID.Kind

    public var id: ItemID
    public var kind: Kind { id.kind }
    /// Web view: the page URL. Native: the URL that opened it. Placeholder: the snapshot URL.
    public var url: String
    /// Placeholder: the web view it belongs to.
    public var of: ItemID?
    /// Native: the screen name.
    public var screen: String?
    /// The route name, when a route matched.
    public var route: String?
    /// Route parameters (path, query, fragment merged), updated by `setParams`.
    public var params: [String: String]
    public var title: String?
    /// The JSON `context` the navigation carried (the new screen receives it).
    public var context: JSONValue?
    /// Hotwire Native sessions: Turbo's restoration identifier of the screen (docs/HOTWIRE.md).
    public var restorationIdentifier: String?
    /// Hotwire Native sessions: the HTTP status of the screen's failed visit (its error state).
    public var statusCode: Int?

    public init(
        id: ItemID, url: String, of: ItemID? = nil, screen: String? = nil, route: String? = nil,
        params: [String: String] = [:], title: String? = nil, context: JSONValue? = nil
    ) {
        self.id = id
        self.url = url
        self.of = of
        self.screen = screen
        self.route = route
        self.params = params
        self.title = title
        self.context = context
    }

    /// `{"id","kind","url"}` plus `of`, `screen`, `route`, `params`, `title`, `context`,
    /// `restorationIdentifier`, `error: {statusCode}` when set.
    public func toJSON() -> JSONValue {
        var o: JSONObject = ["id": .string(id.description), "kind": .string(kind.name), "url": .string(url)]
        if let of { o["of"] = .string(of.description) }
        if let screen { o["screen"] = .string(screen) }
        if let route { o["route"] = .string(route) }
        if !params.isEmpty { o["params"] = jsonObject(params) }
        if let title { o["title"] = .string(title) }
        if let context { o["context"] = context }
        if let restorationIdentifier { o["restorationIdentifier"] = .string(restorationIdentifier) }
        if let statusCode { o["error"] = ["statusCode": .int(Int64(statusCode))] }
        return .object(o)
    }
}

/// A tab and its stack (bottom first).
public struct TabStack: Sendable, Equatable {
    public var name: String
    public var items: [RouteStackItem]

    public init(name: String, items: [RouteStackItem]) {
        self.name = name
        self.items = items
    }
}

/// The navigation tree of a session.
///
/// Invariants (checked by `validate()`): at least one tab; tab names unique; `activeTab` in
/// range; every tab stack non-empty; no stack has a placeholder on top; item ids unique across
/// the tree. The modal stack is empty when no modal is presented.
public struct NavigationTree: Sendable, Equatable {
    public var tabs: [TabStack]
    public var activeTab: Int
    /// The modal stack presented over the tabs (bottom first); empty: none.
    public var modal: [RouteStackItem]
    public var drawerOpen: Bool

    public init(tabs: [TabStack], activeTab: Int = 0, modal: [RouteStackItem] = [], drawerOpen: Bool = false) {
        self.tabs = tabs
        self.activeTab = activeTab
        self.modal = modal
        self.drawerOpen = drawerOpen
    }

    /// The stack that `stack` means in the contract: the modal stack when one is presented,
    /// else the selected tab's.
    public var activeStackID: StackID { modal.isEmpty ? .tab(tabs[activeTab].name) : .modal }

    public var activeTabName: String { tabs[activeTab].name }

    /// The active stack's items (bottom first).
    public var activeStack: [RouteStackItem] { self[activeStackID] ?? [] }

    /// Every stack id in tree order: the tabs, then the modal.
    public var stackIDs: [StackID] { tabs.map { .tab($0.name) } + [.modal] }

    public func tabIndex(_ name: String) -> Int? { tabs.firstIndex { $0.name == name } }

    /// The items of a stack; `nil` for an unknown tab.
    public subscript(stack: StackID) -> [RouteStackItem]? {
        get {
            switch stack {
            case .modal: return modal
            case .tab(let name): return tabIndex(name).map { tabs[$0].items }
            }
        }
        set {
            guard let newValue else { return }
            switch stack {
            case .modal: modal = newValue
            case .tab(let name): if let i = tabIndex(name) { tabs[i].items = newValue }
            }
        }
    }

    /// Where an item is: its stack and index.
    public func locate(_ id: ItemID) -> (stack: StackID, index: Int)? {
        for stack in stackIDs {
            if let i = self[stack]!.firstIndex(where: { $0.id == id }) { return (stack, i) }
        }
        return nil
    }

    /// The first broken invariant, or `nil`.
    public func validate() -> String? {
        if tabs.isEmpty { return "no tabs" }
        if !tabs.indices.contains(activeTab) { return "active tab \(activeTab) out of range" }
        var names: Set<String> = []
        var ids: Set<ItemID> = []
        for stack in stackIDs {
            if case .tab(let name) = stack, !names.insert(name).inserted { return "tab '\(name)' twice" }
            let items = self[stack]!
            if case .tab = stack, items.isEmpty { return "\(stack) is empty" }
            if items.last?.kind == .placeholder { return "\(stack) has a placeholder on top" }
            for item in items where !ids.insert(item.id).inserted { return "item \(item.id) twice" }
        }
        return nil
    }

    /// `{"tabs":[{"name","stack":[…]}…],"activeTab":"home","modal":[…]|null,"drawer":"open"|"closed",
    /// "active":"tab:home"|"modal"}`.
    public func toJSON() -> JSONValue {
        [
            "tabs": .array(tabs.map { ["name": .string($0.name), "stack": .array($0.items.map { $0.toJSON() })] }),
            "activeTab": .string(activeTabName),
            "modal": modal.isEmpty ? .null : .array(modal.map { $0.toJSON() }),
            "drawer": drawerOpen ? "open" : "closed",
            "active": .string(activeStackID.description),
        ]
    }
}

/// A router session on its own (tests, tools): the tree and the allocator its ids come from.
/// In the daemon the tree lives in the session and the allocator is the engine's.
public struct RouteSession: Sendable, Equatable {
    public var tree: NavigationTree
    public var ids: ItemIDAllocator

    public init(tree: NavigationTree, ids: ItemIDAllocator) {
        self.tree = tree
        self.ids = ids
    }
}
