// The router's configuration as plain values. `BridgeConfig` fills it from a YAML file;
// `Router.init(config:)` validates it and reports problems by key path.

/// What happens to an http(s) link to an origin that is not the app's own.
public enum ExternalLinkPolicy: String, Sendable, Equatable, CaseIterable {
    /// Not stacked: reported to the caller (`external.open` to controllers).
    case open
    /// Refused with `not-allowed`.
    case deny
    /// Pushed as a web view like any page.
    case push
}

/// What `goBack` does on a tab whose stack has a single screen.
public enum BackBehavior: String, Sendable, Equatable, CaseIterable {
    /// Nothing (the contract's back algorithm: a stack of one item stays).
    case none
    /// Select the initial tab (when another tab is active).
    case initialTab = "initial-tab"
}

/// A tab: a name and the URL of its root screen.
public struct TabConfig: Sendable, Equatable {
    public var name: String
    public var url: String
    public var title: String?

    public init(name: String, url: String, title: String? = nil) {
        self.name = name
        self.url = url
        self.title = title
    }
}

/// One entry of the route table.
public struct RouteConfig: Sendable, Equatable {
    /// Unique route name (`product`).
    public var name: String
    /// The template (`products/:product_id`).
    public var template: String
    /// The native screen that can handle this route, if the app has one.
    public var native: String?
    /// The route has no web version: always its native screen.
    public var nativeOnly: Bool
    /// The native screen is used only while this feature flag is on.
    public var featureFlag: String?
    /// Presented modally (a `?is_modal=` query parameter overrides it per link).
    public var modal: Bool
    /// The tab whose stack the route belongs to (`navigate` switches to it).
    public var tab: String?
    /// Default title of the screen (a `?title=` query parameter overrides it).
    public var title: String?

    public init(
        name: String, template: String, native: String? = nil, nativeOnly: Bool = false,
        featureFlag: String? = nil, modal: Bool = false, tab: String? = nil, title: String? = nil
    ) {
        self.name = name
        self.template = template
        self.native = native
        self.nativeOnly = nativeOnly
        self.featureFlag = featureFlag
        self.modal = modal
        self.tab = tab
        self.title = title
    }
}

/// Everything the router needs to know about an app.
public struct RouterConfig: Sendable, Equatable {
    /// Base URL of the app's web pages (`os://path` opens `<webBase>path`); its origin is the
    /// app's own origin. A trailing `/` is added when missing.
    public var webBase: String
    /// Custom schemes that open native screens (`tt`).
    public var nativeSchemes: [String]
    /// Custom schemes that open web views on the web base (`os`).
    public var webSchemes: [String]
    /// More origins (`scheme://host[:port]`) that count as the app's own.
    public var ownOrigins: [String]
    public var externalLinks: ExternalLinkPolicy
    public var backBehavior: BackBehavior
    /// The tabs, in display order. None: one implicit tab `main` rooted at the web base (or at
    /// the URL a session is created with).
    public var tabs: [TabConfig]
    /// The tab selected at start and by `resetHome`; default the first.
    public var initialTab: String?
    public var routes: [RouteConfig]
    /// The native screens this build of the app has.
    public var nativeScreens: [String]
    public var featureFlags: [String: Bool]
    /// Maximum number of items in one stack (`--max-stack-depth`).
    public var maxStackDepth: Int

    public init(
        webBase: String, nativeSchemes: [String] = ["tt"], webSchemes: [String] = ["os"],
        ownOrigins: [String] = [], externalLinks: ExternalLinkPolicy = .open,
        backBehavior: BackBehavior = .none, tabs: [TabConfig] = [], initialTab: String? = nil,
        routes: [RouteConfig] = [], nativeScreens: [String] = [], featureFlags: [String: Bool] = [:],
        maxStackDepth: Int = 256
    ) {
        self.webBase = webBase
        self.nativeSchemes = nativeSchemes
        self.webSchemes = webSchemes
        self.ownOrigins = ownOrigins
        self.externalLinks = externalLinks
        self.backBehavior = backBehavior
        self.tabs = tabs
        self.initialTab = initialTab
        self.routes = routes
        self.nativeScreens = nativeScreens
        self.featureFlags = featureFlags
        self.maxStackDepth = maxStackDepth
    }
}

/// Names used in configurations (tabs, routes, screens, flags): letters, digits, `_ - .`.
func isValidConfigName(_ s: String) -> Bool {
    !s.isEmpty && s.unicodeScalars.allSatisfy { isASCIILetter($0) || isASCIIDigit($0) || $0 == "_" || $0 == "-" || $0 == "." }
}
