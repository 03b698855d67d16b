// What a URL resolves to: the route value and the screen chosen for it.

/// A URL matched against the route table: its name and every parameter it carries.
public struct Route: Sendable, Equatable {
    /// The matched route's name; `nil` when no template matched (a plain web page of the app,
    /// or an external link).
    public var name: String?
    /// The matched template's source.
    public var template: String?
    /// The URL as given.
    public var url: String
    /// The lower-cased scheme.
    public var scheme: String
    /// The route path the table saw (raw, no leading `/`), e.g. `products/42`.
    public var path: String
    /// Parameters captured by the template (decoded).
    public var pathParams: [String: String]
    /// Query parameters (decoded, `+` is a space, a repeated key: the last wins).
    public var query: [String: String]
    /// `key=value` pairs of the fragment (decoded); other fragments carry no parameters.
    public var fragmentParams: [String: String]
    /// The raw fragment, `nil` when the URL has none.
    public var fragment: String?

    /// All parameters in one map: path parameters win over query parameters, which win over
    /// fragment parameters.
    public var params: [String: String] {
        var all = fragmentParams
        for (k, v) in query { all[k] = v }
        for (k, v) in pathParams { all[k] = v }
        return all
    }

    /// The conventional `is_modal` query parameter: `true`/`1`/`yes` or `false`/`0`/`no`;
    /// `nil` when absent. (Other values are refused when the URL is resolved.)
    public var isModal: Bool? { Route.parseBool(query["is_modal"]) ?? nil }

    /// The conventional `title` query parameter.
    public var title: String? { query["title"] }

    /// `.some(nil)` for an unparsable value, `nil` when absent.
    static func parseBool(_ text: String?) -> Bool?? {
        guard let text else { return nil }
        switch text.lowercased() {
        case "true", "1", "yes": return .some(true)
        case "false", "0", "no": return .some(false)
        default: return .some(nil)
        }
    }

    public func toJSON() -> JSONValue {
        let o: JSONObject = [
            "name": name.map { .string($0) } ?? .null,
            "template": template.map { .string($0) } ?? .null,
            "url": .string(url),
            "scheme": .string(scheme),
            "path": .string(path),
            "params": jsonObject(params),
            "pathParams": jsonObject(pathParams),
            "query": jsonObject(query),
            "fragmentParams": jsonObject(fragmentParams),
            "fragment": fragment.map { .string($0) } ?? .null,
            "isModal": isModal.map { .bool($0) } ?? .null,
            "title": title.map { .string($0) } ?? .null,
        ]
        return .object(o)
    }
}

/// The screen that handles a URL.
public enum Screen: Sendable, Equatable {
    /// A native screen, by name.
    case native(String)
    /// A web view on this URL.
    case webview(String)
    /// Opened outside the app (external-link policy `open`); never stacked.
    case external(String)

    public func toJSON() -> JSONValue {
        switch self {
        case .native(let name): return ["kind": "native", "screen": .string(name)]
        case .webview(let url): return ["kind": "webview", "url": .string(url)]
        case .external(let url): return ["kind": "external", "url": .string(url)]
        }
    }
}

/// Which rule chose the screen (for `router.resolve` and tests).
public enum ScreenRule: String, Sendable, Equatable, CaseIterable {
    /// Rule 1: a native-only route gets its native screen.
    case nativeOnly = "native-only"
    /// Rule 2: the route's feature flag is off: web view.
    case featureFlagOff = "feature-flag-off"
    /// Rule 3: the route has a native screen that the app has: native.
    case nativeAvailable = "native-available"
    /// Rule 4: anything else: web view.
    case web = "web"
    /// A web scheme (`os://`) asks for a web view (rules 2–4 do not apply).
    case webScheme = "web-scheme"
    /// An external link under the policy `open` or `push`.
    case external = "external"
}

/// How a screen is shown.
public enum Presentation: String, Sendable, Equatable {
    case push
    case modal
}

/// The dry-run answer for a URL: its route, the screen, how and where it would be stacked.
public struct Resolution: Sendable, Equatable {
    public var route: Route
    public var screen: Screen
    public var rule: ScreenRule
    public var presentation: Presentation
    /// The stack the route belongs to: `.modal` when presented modally, its configured tab, or
    /// `nil` (the active stack).
    public var stack: StackID?
    /// The screen title: `?title=`, else the route's configured title.
    public var title: String?

    public func toJSON() -> JSONValue {
        [
            "route": route.toJSON(),
            "screen": screen.toJSON(),
            "rule": .string(rule.rawValue),
            "presentation": .string(presentation.rawValue),
            "stack": stack.map { .string($0.description) } ?? .null,
            "title": title.map { .string($0) } ?? .null,
        ]
    }
}
