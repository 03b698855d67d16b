/// The requests a page may send (contract section 5), by their wire names.
///
/// `deeplink.open` is in both tables: a page opens a link in its own session, a controller in
/// any session.
///
/// (The page's names are matched by a `switch` over string literals, written out: the
/// synthesized `init(rawValue:)` goes through a generic table search, measurably dearer on the
/// path every page request takes.)
enum PageMethod: String, CaseIterable {
    case pwaNavigate = "pwa-navigate"
    case pwaRendered = "pwa-rendered"
    case back
    case navigate
    case ping
    case deeplinkOpen = "deeplink.open"

    init?(rawValue name: String) {
        switch name {
        case "pwa-navigate": self = .pwaNavigate
        case "pwa-rendered": self = .pwaRendered
        case "back": self = .back
        case "navigate": self = .navigate
        case "ping": self = .ping
        case "deeplink.open": self = .deeplinkOpen
        default: return nil
        }
    }
}

/// The events a page may send (contract section 5); any other name is an app event.
enum PageEventName: String, CaseIterable {
    case pwaNavigate = "pwa-navigate"
    case pwaRendered = "pwa-rendered"
    case back
    case navigate
    case pwaNavigated = "pwa-navigated"

    init?(rawValue name: String) {
        switch name {
        case "pwa-navigate": self = .pwaNavigate
        case "pwa-rendered": self = .pwaRendered
        case "back": self = .back
        case "navigate": self = .navigate
        case "pwa-navigated": self = .pwaNavigated
        default: return nil
        }
    }
}

/// The requests a controller may send (contract section 6 and the router's methods), grouped
/// by the file that handles them.
enum ControllerMethod: Equatable {
    case session(SessionMethod)
    case navigation(NavigationMethod)
    case router(RouterMethod)
    case host(HostMethod)
    /// `bridge.reply` of hotwire-native sessions (Bridge+Hotwire.swift).
    case bridgeReply
    case ping

    init?(_ name: String) {
        if let m = SessionMethod(rawValue: name) { self = .session(m) }
        else if let m = NavigationMethod(rawValue: name) { self = .navigation(m) }
        else if let m = RouterMethod(rawValue: name) { self = .router(m) }
        else if let m = HostMethod(rawValue: name) { self = .host(m) }
        else if name == "bridge.reply" { self = .bridgeReply }
        else if name == "ping" { self = .ping }
        else { return nil }
    }

    /// Every controller method, for tables and tests.
    static var all: [ControllerMethod] {
        SessionMethod.allCases.map { .session($0) } + NavigationMethod.allCases.map { .navigation($0) }
            + RouterMethod.allCases.map { .router($0) } + HostMethod.allCases.map { .host($0) } + [.bridgeReply, .ping]
    }

    var name: String {
        switch self {
        case .session(let m): m.rawValue
        case .navigation(let m): m.rawValue
        case .router(let m): m.rawValue
        case .host(let m): m.rawValue
        case .bridgeReply: "bridge.reply"
        case .ping: "ping"
        }
    }
}

/// `session.*` (Sessions.swift).
enum SessionMethod: String, CaseIterable {
    case create = "session.create"
    case list = "session.list"
    case get = "session.get"
    case close = "session.close"
    case subscribe = "session.subscribe"
    case unsubscribe = "session.unsubscribe"
}

/// `navigation.*` (Navigation.swift).
enum NavigationMethod: String, CaseIterable {
    case navigateToUrl = "navigation.navigateToUrl"
    case back = "navigation.back"
    case canGoBack = "navigation.canGoBack"
    case popToRoot = "navigation.popToRoot"
}

/// The methods that need a routing configuration, `--config` (RouterMethods.swift).
enum RouterMethod: String, CaseIterable {
    case resolve = "router.resolve"
    case perform = "router.perform"
    case get = "router.get"
    case selectTab = "router.selectTab"
    case deeplinkOpen = "deeplink.open"
}
