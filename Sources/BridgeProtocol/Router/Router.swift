// The router: URL → route → screen, and sessions' navigation trees.

/// A validated router configuration and the operations over it. A value type, `Sendable`, no
/// I/O: resolve URLs (`resolve`), create a session's tree (`makeSession`), perform actions on
/// it (`perform`, in RouterPerform.swift).
public struct Router: Sendable {
    public let config: RouterConfig
    /// Feature flags, initially the configuration's; the daemon may flip them at run time.
    public var featureFlags: [String: Bool]

    struct CompiledRoute: Sendable {
        var config: RouteConfig
        var template: RouteTemplate
        var index: Int
    }

    let routes: [CompiledRoute]
    let routesByName: [String: Int]
    let webBase: RouteURL
    /// The web base with a trailing `/`.
    let webBaseText: String
    /// Path of the web base without the leading `/`, with a trailing `/` (`app/`), or "".
    let webBasePath: String
    let ownOrigins: Set<String>
    let nativeSchemes: Set<String>
    let webSchemes: Set<String>
    let nativeScreens: Set<String>
    /// Tabs as configured, or the implicit `main` tab.
    public let tabs: [TabConfig]
    public let initialTab: String

    /// Validates the configuration. Errors name the key (`routes[2].template`, `tabs[0].url`).
    public init(config: RouterConfig) throws(RouterConfigError) {
        self.config = config
        featureFlags = config.featureFlags

        // web_base
        let base: RouteURL
        do { base = try RouteURL.parse(config.webBase) } catch {
            throw RouterConfigError(key: "web_base", "'\(config.webBase)' is not an absolute URL")
        }
        guard base.scheme == "http" || base.scheme == "https", base.origin != nil else {
            throw RouterConfigError(key: "web_base", "'\(config.webBase)' must be an http(s) URL with a host")
        }
        guard base.query == nil, base.fragment == nil else {
            throw RouterConfigError(key: "web_base", "'\(config.webBase)' must not have a query or a fragment")
        }
        var baseText = config.webBase
        if !baseText.hasSuffix("/") { baseText += "/" }
        webBase = base
        webBaseText = baseText
        var basePath = base.path.drop(while: { $0 == "/" })
        if !basePath.isEmpty && !basePath.hasSuffix("/") { basePath += "/" }
        webBasePath = String(basePath)

        // schemes
        var native: Set<String> = []
        var web: Set<String> = []
        for (key, list) in [("schemes.native", config.nativeSchemes), ("schemes.web", config.webSchemes)] {
            for (i, s) in list.enumerated() {
                let k = "\(key)[\(i)]"
                guard RouteURL.isValidScheme(Substring(s)) else {
                    throw RouterConfigError(key: k, "'\(s)' is not a valid scheme (letters, digits, '+', '-', '.'; a letter first; no ':')")
                }
                let lower = s.lowercased()
                if lower == "http" || lower == "https" {
                    throw RouterConfigError(key: k, "'\(s)' cannot be a custom scheme")
                }
                if native.contains(lower) || web.contains(lower) {
                    throw RouterConfigError(key: k, "scheme '\(s)' is listed twice")
                }
                if key == "schemes.native" { native.insert(lower) } else { web.insert(lower) }
            }
        }
        nativeSchemes = native
        webSchemes = web

        // own origins
        var origins: Set<String> = [base.origin!]
        for (i, o) in config.ownOrigins.enumerated() {
            let k = "own_origins[\(i)]"
            guard let u = try? RouteURL.parse(o), let origin = u.origin, u.path.isEmpty || u.path == "/",
                u.query == nil, u.fragment == nil
            else {
                throw RouterConfigError(key: k, "'\(o)' is not an origin (write scheme://host[:port], http or https)")
            }
            origins.insert(origin)
        }
        ownOrigins = origins

        // native screens and flags
        var screens: Set<String> = []
        for (i, s) in config.nativeScreens.enumerated() {
            guard isValidConfigName(s) else {
                throw RouterConfigError(key: "native_screens[\(i)]", "'\(s)' is not a valid name (letters, digits, '_', '-', '.')")
            }
            guard screens.insert(s).inserted else {
                throw RouterConfigError(key: "native_screens[\(i)]", "screen '\(s)' is listed twice")
            }
        }
        nativeScreens = screens
        for name in config.featureFlags.keys.sorted() where !isValidConfigName(name) {
            throw RouterConfigError(key: "feature_flags.\(name)", "'\(name)' is not a valid name (letters, digits, '_', '-', '.')")
        }

        // tabs
        var tabs = config.tabs
        if tabs.isEmpty { tabs = [TabConfig(name: "main", url: baseText)] }
        var tabNames: Set<String> = []
        for (i, t) in config.tabs.enumerated() {
            guard isValidConfigName(t.name) else {
                throw RouterConfigError(key: "tabs[\(i)].name", "'\(t.name)' is not a valid name (letters, digits, '_', '-', '.')")
            }
            guard tabNames.insert(t.name).inserted else {
                throw RouterConfigError(key: "tabs[\(i)].name", "tab '\(t.name)' is defined twice")
            }
        }
        self.tabs = tabs
        if let initial = config.initialTab {
            guard tabs.contains(where: { $0.name == initial }) else {
                throw RouterConfigError(key: "initial_tab", "'\(initial)' is not a tab (tabs: \(tabs.map(\.name).joined(separator: ", ")))")
            }
            initialTab = initial
        } else {
            initialTab = tabs[0].name
        }

        // routes
        var compiled: [CompiledRoute] = []
        var byName: [String: Int] = [:]
        for (i, r) in config.routes.enumerated() {
            let k = "routes[\(i)]"
            guard isValidConfigName(r.name) else {
                throw RouterConfigError(key: "\(k).name", "'\(r.name)' is not a valid name (letters, digits, '_', '-', '.')")
            }
            if let j = byName[r.name] {
                throw RouterConfigError(key: "\(k).name", "route '\(r.name)' is already defined by routes[\(j)]")
            }
            let template: RouteTemplate
            do { template = try RouteTemplate(r.template) } catch {
                throw RouterConfigError(key: "\(k).template", error.message)
            }
            for other in compiled where other.template.hasSameShape(as: template) {
                throw RouterConfigError(
                    key: "\(k).template",
                    "'\(r.template)' conflicts with routes[\(other.index)] ('\(other.config.name)': '\(other.config.template)'): both match exactly the same paths"
                )
            }
            if let n = r.native, !isValidConfigName(n) {
                throw RouterConfigError(key: "\(k).native", "'\(n)' is not a valid name (letters, digits, '_', '-', '.')")
            }
            if r.nativeOnly {
                guard let n = r.native else {
                    throw RouterConfigError(key: "\(k).native_only", "a native-only route needs 'native' (its screen)")
                }
                guard screens.contains(n) else {
                    throw RouterConfigError(key: "\(k).native", "native-only route '\(r.name)' needs screen '\(n)', which is not in native_screens")
                }
            }
            if let f = r.featureFlag, config.featureFlags[f] == nil {
                throw RouterConfigError(key: "\(k).feature_flag", "'\(f)' is not declared in feature_flags")
            }
            if let t = r.tab {
                guard tabs.contains(where: { $0.name == t }) else {
                    throw RouterConfigError(key: "\(k).tab", "'\(t)' is not a tab (tabs: \(tabs.map(\.name).joined(separator: ", ")))")
                }
                if r.modal {
                    throw RouterConfigError(key: "\(k).tab", "a modal route is shown in the modal stack, not in a tab: drop 'tab' or 'modal'")
                }
            }
            byName[r.name] = i
            compiled.append(CompiledRoute(config: r, template: template, index: i))
        }
        routes = compiled
        routesByName = byName

        guard config.maxStackDepth >= 1 else {
            throw RouterConfigError(key: "max_stack_depth", "must be at least 1 (got \(config.maxStackDepth))")
        }

        // Every tab root must resolve to something stackable.
        for (i, t) in tabs.enumerated() {
            let key = config.tabs.isEmpty ? "web_base" : "tabs[\(i)].url"
            let r: Resolution
            do { r = try resolve(t.url) } catch { throw RouterConfigError(key: key, error.message) }
            if case .external = r.screen {
                throw RouterConfigError(key: key, "'\(t.url)' is an external link; a tab's root must be a screen of the app")
            }
        }
    }

    // MARK: - Resolving

    /// Resolves a URL without touching any session: its route, parameters and screen.
    ///
    /// - `native` schemes (`tt://path`): the route table must match `path` (else
    ///   `unknown-route`); the route rules choose the screen.
    /// - `web` schemes (`os://path`): a web view on `<web base>path` (a native-only route
    ///   still gets its native screen); unmatched paths are plain web pages.
    /// - http(s) on an own origin: the path below the web base is matched; the route rules
    ///   choose; unmatched paths are plain web pages on that URL.
    /// - http(s) elsewhere: the external-link policy (`open`: `.external`; `deny`:
    ///   `not-allowed`; `push`: a web view).
    /// - anything else: `unknown-route`.
    public func resolve(_ url: String) throws(RouterError) -> Resolution {
        let parsed = try RouteURL.parse(url)
        if nativeSchemes.contains(parsed.scheme) {
            return try finish(parsed, url: url, kind: .native, rawPath: parsed.customPath)
        }
        if webSchemes.contains(parsed.scheme) {
            return try finish(parsed, url: url, kind: .web, rawPath: parsed.customPath)
        }
        guard parsed.scheme == "http" || parsed.scheme == "https" else {
            let known = (nativeSchemes.sorted() + webSchemes.sorted() + ["http", "https"]).map { "\($0):" }
            throw .unknownRoute("unknown scheme '\(parsed.scheme):' in '\(url)' (known: \(known.joined(separator: ", ")))")
        }
        guard let authority = parsed.authority, !authority.isEmpty, !(try RouteURL.hostAndPort(authority)).0.isEmpty,
            let origin = parsed.origin
        else {
            throw .unknownRoute("malformed URL '\(url)': no host")
        }
        let path = parsed.path.drop(while: { $0 == "/" })
        guard ownOrigins.contains(origin) else {
            return try finish(parsed, url: url, kind: .external, rawPath: path)
        }
        // Own origin: the path below the web base (`https://app/app` is the base's root too).
        if path.hasPrefix(webBasePath) {
            return try finish(parsed, url: url, kind: .own, rawPath: path.dropFirst(webBasePath.count))
        }
        if !webBasePath.isEmpty, path + "/" == webBasePath {
            return try finish(parsed, url: url, kind: .own, rawPath: "")
        }
        return try finish(parsed, url: url, kind: .own, rawPath: path)
    }

    enum URLKind { case native, web, own, external }

    private func finish(_ parsed: RouteURL, url: String, kind: URLKind, rawPath: Substring) throws(RouterError) -> Resolution {
        let query = try parsed.query.map { (q) throws(RouterError) in try PercentEncoding.parsePairs(q) } ?? [:]
        let fragmentParams = try parsed.fragment.map { (f) throws(RouterError) in try PercentEncoding.parsePairs(f, bareKeys: false) } ?? [:]
        var route = Route(
            name: nil, template: nil, url: url, scheme: parsed.scheme, path: String(rawPath), pathParams: [:],
            query: query, fragmentParams: fragmentParams, fragment: parsed.fragment)
        if case .some(.none) = Route.parseBool(query["is_modal"]) {
            throw .unknownRoute("malformed link '\(url)': is_modal must be true or false (got '\(query["is_modal"]!)')")
        }

        if kind == .external {
            switch config.externalLinks {
            case .deny:
                throw RouterError(.notAllowed, "external link '\(url)' is denied by the external-link policy")
            case .open:
                return Resolution(route: route, screen: .external(url), rule: .external, presentation: .push, stack: nil, title: route.title)
            case .push:
                return Resolution(
                    route: route, screen: .webview(url), rule: .external, presentation: route.isModal == true ? .modal : .push,
                    stack: route.isModal == true ? .modal : nil, title: route.title)
            }
        }

        let segments = try RoutePath.segments(rawPath)
        // The web URL of this link: os:// maps onto the web base; own-origin links are web URLs.
        let webURL: String
        switch kind {
        case .own: webURL = url
        default: webURL = webBaseText + String(rawPath) + (parsed.query.map { "?" + $0 } ?? "") + (parsed.fragment.map { "#" + $0 } ?? "")
        }

        guard let (matched, pathParams) = match(segments) else {
            if kind == .native {
                throw .unknownRoute("no route matches '\(rawPath)' (\(url))")
            }
            let modal = route.isModal == true
            return Resolution(
                route: route, screen: .webview(webURL), rule: kind == .web ? .webScheme : .web,
                presentation: modal ? .modal : .push, stack: modal ? .modal : nil, title: route.title)
        }
        let rc = matched.config
        route.name = rc.name
        route.template = rc.template
        route.pathParams = pathParams

        let screen: Screen
        let rule: ScreenRule
        if rc.nativeOnly, let n = rc.native {
            (screen, rule) = (.native(n), .nativeOnly)
        } else if kind == .web {
            (screen, rule) = (.webview(webURL), .webScheme)
        } else if let flag = rc.featureFlag, featureFlags[flag] != true {
            (screen, rule) = (.webview(webURL), .featureFlagOff)
        } else if let n = rc.native, nativeScreens.contains(n) {
            (screen, rule) = (.native(n), .nativeAvailable)
        } else {
            (screen, rule) = (.webview(webURL), .web)
        }
        let modal = route.isModal ?? rc.modal
        let stack: StackID? = modal ? .modal : rc.tab.map { .tab($0) }
        return Resolution(
            route: route, screen: screen, rule: rule, presentation: modal ? .modal : .push, stack: stack,
            title: route.title ?? rc.title)
    }

    /// The most specific route whose template matches.
    func match(_ segments: [String]) -> (CompiledRoute, [String: String])? {
        var best: (CompiledRoute, [String: String])?
        for r in routes {
            guard let params = r.template.match(segments) else { continue }
            if let b = best, !r.template.isMoreSpecific(than: b.0.template) { continue }
            best = (r, params)
        }
        return best
    }

    /// The URL of a route by name: its template filled with `params` (percent-encoded), the
    /// other parameters as the query, on the first native scheme (or the web base when the
    /// router has none). Errors: unknown route, missing path parameter (`invalid-params`).
    public func url(forRoute name: String, params: [String: String] = [:]) throws(RouterError) -> String {
        guard let i = routesByName[name] else {
            throw .unknownRoute("no route named '\(name)'")
        }
        let (path, unused) = try routes[i].template.fill(params)
        var url = config.nativeSchemes.first.map { "\($0.lowercased())://\(path)" } ?? (webBaseText + path)
        if !unused.isEmpty {
            url += "?" + unused.keys.sorted().map { "\(PercentEncoding.encode($0))=\(PercentEncoding.encode(unused[$0]!))" }.joined(separator: "&")
        }
        return url
    }

    /// The names of a route's template parameters (those that identify its screen).
    func identityParams(ofRoute name: String) -> [String] {
        guard let i = routesByName[name] else { return [] }
        return routes[i].template.parameterNames
    }

    // MARK: - Sessions

    /// A new session's tree: every tab with its root screen (the initial tab's first, so a
    /// session's first web view is `W1`), the initial tab selected. `rootURL` (the page that
    /// created the session) replaces the initial tab's configured root.
    public func makeSession(rootURL: String? = nil) throws(RouterError) -> RouteSession {
        var ids = ItemIDAllocator()
        let tree = try makeTree(rootURL: rootURL, ids: &ids)
        return RouteSession(tree: tree, ids: ids)
    }

    /// A new session's tree, its items' ids drawn from `ids` (unchanged on error).
    public func makeTree(rootURL: String? = nil, ids allocator: inout ItemIDAllocator) throws(RouterError) -> NavigationTree {
        var ids = allocator
        var stacks: [TabStack] = tabs.map { TabStack(name: $0.name, items: []) }
        let initialIndex = tabs.firstIndex { $0.name == initialTab }!
        var order = Array(tabs.indices)
        order.removeAll { $0 == initialIndex }
        order.insert(initialIndex, at: 0)
        for i in order {
            let url = (i == initialIndex ? rootURL : nil) ?? tabs[i].url
            let resolution = try resolve(url)
            guard let item = makeItem(resolution, context: nil, ids: &ids, title: tabs[i].title) else {
                throw .invalidParams("'\(url)' is an external link; it cannot be a tab's root")
            }
            stacks[i].items = [item]
        }
        allocator = ids
        return NavigationTree(tabs: stacks, activeTab: initialIndex)
    }

    /// A new stack item for a resolution; `nil` for an external screen.
    func makeItem(_ r: Resolution, context: JSONValue?, ids: inout ItemIDAllocator, title: String? = nil) -> RouteStackItem? {
        switch r.screen {
        case .external: return nil
        case .native(let screen):
            return RouteStackItem(
                id: ids.next(.native), url: r.route.url, screen: screen, route: r.route.name,
                params: r.route.params, title: r.title ?? title, context: context)
        case .webview(let url):
            return RouteStackItem(
                id: ids.next(.webview), url: url, route: r.route.name, params: r.route.params,
                title: r.title ?? title, context: context)
        }
    }
}

extension Router: Equatable {
    /// The same configuration, web base and feature flags (everything else is derived from them).
    public static func == (a: Router, b: Router) -> Bool {
        a.config == b.config && a.webBaseText == b.webBaseText && a.featureFlags == b.featureFlags
    }
}
