// Router actions and their JSON form.

/// What to open: a URL, or a route by name (its template filled with `params`).
public enum RouteTarget: Sendable, Equatable {
    case url(String)
    case route(String, params: [String: String])
}

/// Which stack an action works on.
public enum StackRef: Sendable, Equatable {
    /// The active stack (the modal stack when one is presented, else the selected tab's).
    case active
    case stack(StackID)
}

/// An action over a session's navigation tree.
public enum RouterAction: Sendable, Equatable {
    /// Close the drawer if open; else the back algorithm on the active stack (a modal stack of
    /// one screen is dismissed; a tab of one screen stays, or, with `back_behavior:
    /// initial-tab`, the initial tab is selected).
    case goBack
    /// Merge into an item's params (the active stack's top by default); new values win, `nil`
    /// removes a key.
    case setParams([String: String?], item: ItemID?)
    /// Go to a route: to the given stack, else the route's (modal, or its tab), else the active
    /// one; if that stack already holds the same screen (same route and path parameters, or
    /// the same URL for a plain page), pop back to it and merge its params; else push.
    case navigate(RouteTarget, stack: StackRef?, context: JSONValue?)
    /// Push a new screen (stack chosen as for `navigate`), even if the same screen is below.
    case push(RouteTarget, stack: StackRef?, context: JSONValue?)
    /// Replace the top screen of a stack (default: the active one).
    case replace(RouteTarget, stack: StackRef?, context: JSONValue?)
    /// Pop `count` screens (a web view with its placeholders is one screen). A tab keeps its
    /// first screen; a modal stack popped empty is dismissed.
    case pop(count: Int, stack: StackRef?)
    /// Back to the first screen of a stack (default: the active one).
    case popToTop(stack: StackRef?)
    /// Replace a stack (default: the active one) with new screens, bottom first.
    case reset([RouteTarget], stack: StackRef?)
    /// Dismiss the modal, close the drawer, pop every tab to its first screen, select the
    /// initial tab.
    case resetHome
    case openDrawer
    case closeDrawer
    case toggleDrawer
    /// Select a tab (dismisses the modal and closes the drawer).
    case selectTab(String)

    /// The action's `type` in JSON.
    public var name: String {
        switch self {
        case .goBack: return "goBack"
        case .setParams: return "setParams"
        case .navigate: return "navigate"
        case .push: return "push"
        case .replace: return "replace"
        case .pop: return "pop"
        case .popToTop: return "popToTop"
        case .reset: return "reset"
        case .resetHome: return "resetHome"
        case .openDrawer: return "openDrawer"
        case .closeDrawer: return "closeDrawer"
        case .toggleDrawer: return "toggleDrawer"
        case .selectTab: return "selectTab"
        }
    }

    /// Parses an action: a bare string for actions without parameters (`"goBack"`), or an
    /// object `{"type": …, …}`. Unknown types and fields are `invalid-params` errors.
    public init(json: JSONValue) throws(RouterError) {
        if case .string(let type) = json {
            try self.init(json: ["type": .string(type)])
            return
        }
        guard case .object(let o) = json else {
            throw .invalidParams("an action is a string or an object with 'type'")
        }
        guard let type = o["type"]?.stringValue else {
            throw .invalidParams("an action needs a string 'type' (goBack, navigate, push, replace, pop, popToTop, reset, resetHome, setParams, openDrawer, closeDrawer, toggleDrawer, selectTab)")
        }
        func only(_ allowed: Set<String>) throws(RouterError) {
            for key in o.keys.sorted() where key != "type" && !allowed.contains(key) {
                throw .invalidParams("unknown field '\(key)' in a '\(type)' action (fields: \(allowed.sorted().joined(separator: ", ")))")
            }
        }
        func stack() throws(RouterError) -> StackRef? {
            guard let v = o["stack"], !v.isNull else { return nil }
            guard let s = v.stringValue else { throw .invalidParams("'stack' must be a string: \"active\", \"modal\" or \"tab:<name>\"") }
            if s == "active" { return .active }
            guard let id = StackID(s) else { throw .invalidParams("unknown stack '\(s)': use \"active\", \"modal\" or \"tab:<name>\"") }
            return .stack(id)
        }
        func context() throws(RouterError) -> JSONValue? {
            guard let v = o["context"], !v.isNull else { return nil }
            guard case .object = v else { throw .invalidParams("'context' must be a JSON object") }
            return v
        }
        func target(_ o: JSONObject, _ what: String) throws(RouterError) -> RouteTarget {
            let url = o["url"]
            let route = o["route"]
            switch (url, route) {
            case (.some(.string(let u)), nil):
                if o["params"] != nil { throw .invalidParams("\(what): 'params' goes with 'route', not with 'url'") }
                return .url(u)
            case (nil, .some(.string(let r))):
                var params: [String: String] = [:]
                if let p = o["params"], !p.isNull {
                    guard case .object(let members) = p else { throw .invalidParams("\(what): 'params' must be an object") }
                    for (k, v) in members {
                        guard let s = RouterAction.paramText(v) else {
                            throw .invalidParams("\(what): params.\(k) must be a string, a number or a boolean")
                        }
                        params[k] = s
                    }
                }
                return .route(r, params: params)
            case (.some, .some):
                throw .invalidParams("\(what): give either 'url' or 'route', not both")
            default:
                throw .invalidParams("\(what) needs a string 'url' or a string 'route'")
            }
        }
        func count() throws(RouterError) -> Int {
            guard let v = o["count"], !v.isNull else { return 1 }
            guard case .int(let n) = v, n >= 1, n <= 1_000_000 else {
                throw .invalidParams("'count' must be a positive integer")
            }
            return Int(n)
        }

        switch type {
        case "goBack": try only([]); self = .goBack
        case "resetHome": try only([]); self = .resetHome
        case "openDrawer": try only([]); self = .openDrawer
        case "closeDrawer": try only([]); self = .closeDrawer
        case "toggleDrawer": try only([]); self = .toggleDrawer
        case "navigate", "push", "replace":
            try only(["url", "route", "params", "stack", "context"])
            let t = try target(o, type)
            let (s, c) = (try stack(), try context())
            switch type {
            case "navigate": self = .navigate(t, stack: s, context: c)
            case "push": self = .push(t, stack: s, context: c)
            default: self = .replace(t, stack: s, context: c)
            }
        case "pop":
            try only(["count", "stack"])
            self = .pop(count: try count(), stack: try stack())
        case "popToTop":
            try only(["stack"])
            self = .popToTop(stack: try stack())
        case "reset":
            try only(["urls", "routes", "stack"])
            var targets: [RouteTarget] = []
            switch (o["urls"], o["routes"]) {
            case (.some(.array(let urls)), nil):
                for (i, u) in urls.enumerated() {
                    guard let s = u.stringValue else { throw .invalidParams("reset: urls[\(i)] must be a string") }
                    targets.append(.url(s))
                }
            case (nil, .some(.array(let routes))):
                for (i, r) in routes.enumerated() {
                    guard case .object(let ro) = r else { throw .invalidParams("reset: routes[\(i)] must be an object {route, params?}") }
                    for key in ro.keys.sorted() where key != "route" && key != "params" {
                        throw .invalidParams("reset: unknown field '\(key)' in routes[\(i)]")
                    }
                    guard ro["route"] != nil else { throw .invalidParams("reset: routes[\(i)] needs a string 'route'") }
                    targets.append(try target(ro, "reset: routes[\(i)]"))
                }
            default:
                throw .invalidParams("reset needs an array 'urls' or an array 'routes' (not both)")
            }
            guard !targets.isEmpty else { throw .invalidParams("reset needs at least one screen") }
            self = .reset(targets, stack: try stack())
        case "selectTab":
            try only(["tab"])
            guard let tab = o["tab"]?.stringValue else { throw .invalidParams("selectTab needs a string 'tab'") }
            self = .selectTab(tab)
        case "setParams":
            try only(["params", "item"])
            guard case .object(let members)? = o["params"] else { throw .invalidParams("setParams needs an object 'params'") }
            var params: [String: String?] = [:]
            for (k, v) in members {
                if v.isNull {
                    params[k] = .some(nil)
                } else if let s = RouterAction.paramText(v) {
                    params[k] = .some(s)
                } else {
                    throw .invalidParams("setParams: params.\(k) must be a string, a number, a boolean or null")
                }
            }
            var item: ItemID?
            if let v = o["item"], !v.isNull {
                guard let s = v.stringValue else { throw .invalidParams("setParams: 'item' must be an item id") }
                // An id that is no id names no item: the same error as an unknown one.
                guard let id = ItemID(parsing: s) else { throw .invalidParams("no item '\(s)' in the navigation tree") }
                item = id
            }
            self = .setParams(params, item: item)
        default:
            throw .invalidParams("unknown action type '\(type)' (goBack, navigate, push, replace, pop, popToTop, reset, resetHome, setParams, openDrawer, closeDrawer, toggleDrawer, selectTab)")
        }
    }

    /// Route parameters are text: strings as they are, numbers and booleans as JSON writes them.
    static func paramText(_ v: JSONValue) -> String? {
        switch v {
        case .string(let s): return s
        case .int, .double, .bool: return v.jsonString
        default: return nil
        }
    }
}
