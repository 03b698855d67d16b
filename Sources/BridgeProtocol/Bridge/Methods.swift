/// Every request method of the protocol, by its wire name: the one place a method's name is
/// written. Dispatch (the role enums below are cut from it, by case), the metrics' `method`
/// label (`BridgeStats.methods`), the causes of `stack.changed` and the docs' tables (the
/// `MethodTableTests` read docs/PROTOCOL.md against it) all take their names from here.
///
/// A request's name is matched once, when its frame arrives (`init(name:)`), in declaration
/// order: a page's own methods, nearly every request a daemon sees, come first.
public enum BridgeMethod: String, CaseIterable, Sendable {
    // A page's (contract section 5); `ping` and `deeplink.open` are a controller's too.
    case pwaRendered = "pwa-rendered"
    case pwaNavigate = "pwa-navigate"
    case back
    case navigate
    case ping
    case hello
    case deeplinkOpen = "deeplink.open"
    // `session.*` (Sessions.swift).
    case sessionCreate = "session.create"
    case sessionList = "session.list"
    case sessionGet = "session.get"
    case sessionClose = "session.close"
    case sessionSubscribe = "session.subscribe"
    case sessionUnsubscribe = "session.unsubscribe"
    // `navigation.*` (Navigation.swift).
    case navigateToUrl = "navigation.navigateToUrl"
    case navigationBack = "navigation.back"
    case canGoBack = "navigation.canGoBack"
    case popToRoot = "navigation.popToRoot"
    // With a routing configuration, `--config` (RouterMethods.swift).
    case routerResolve = "router.resolve"
    case routerPerform = "router.perform"
    case routerGet = "router.get"
    case routerSelectTab = "router.selectTab"
    // What a browser session's browser answers (Bridge+Host.swift).
    case webviewEvaluate = "webview.evaluate"
    case webviewClick = "webview.click"
    case webviewType = "webview.type"
    case sessionScreenshot = "session.screenshot"
    case placeholderSnapshot = "placeholder.snapshot"
    // The shell's duties in browser sessions (Bridge+Shell.swift).
    case dialogAnswer = "webview.dialog.answer"
    case webviewReload = "webview.reload"
    case webviewSetFiles = "webview.setFiles"
    case sessionSetGeolocation = "session.setGeolocation"
    // What a session's profile answers (Profiles/, `ProfileBehavior.methods`).
    case bridgeReply = "bridge.reply"

    /// The wire name.
    public var name: String { rawValue }

    /// Every wire name, in declaration order (`names[m.index] == m.name`).
    public static let names: [String] = allCases.map(\.rawValue)
    static let ordered: [BridgeMethod] = allCases

    /// The method called `name`, if there is one. (Not the synthesized `init(rawValue:)`: that
    /// goes through a generic table search, measurably dearer on the path every request takes;
    /// this compares small strings in declaration order.)
    @inline(__always)
    public init?(name: String) {
        let names = Self.names
        let length = name.utf8.count
        var i = 0
        while i < names.count {
            // (The length first: comparing two different small strings goes through the
            // standard library's general comparison, ≈ 22 instructions, 4 times for a `ping`.)
            if names[i].utf8.count == length, names[i] == name {
                self = Self.ordered[i]
                return
            }
            i &+= 1
        }
        return nil
    }

    /// Every wire name's bytes, end to end, and where each ends (`utf8Ends[m.index]`).
    static let utf8Names: [UInt8] = names.flatMap { Array($0.utf8) }
    static let utf8Ends: [Int] = {
        var end = 0
        return names.map { end += $0.utf8.count; return end }
    }()

    /// The method whose wire name is the bytes `name`, if there is one: what `init(name:)`
    /// answers for the same name, without making a `String` of the bytes first (the envelope's
    /// fast path, `FastRequest`, matches a request's method straight from its frame).
    init?(utf8 name: UnsafeRawBufferPointer) {
        let found: Int? = Self.utf8Names.withUnsafeBufferPointer { table in
            Self.utf8Ends.withUnsafeBufferPointer { ends in
                var start = 0
                for i in 0..<ends.count {
                    let end = ends[i]
                    if end &- start == name.count, Self.equal(table.baseAddress! + start, name) { return i }
                    start = end
                }
                return nil
            }
        }
        guard let found else { return nil }
        self = Self.ordered[found]
    }

    @inline(__always)
    private static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafeRawBufferPointer) -> Bool {
        for k in 0..<b.count where a[k] != b[k] { return false }
        return true
    }

    /// The position in `allCases` (the metrics' row): the case's tag, which Swift numbers in
    /// declaration order (checked by `MethodTableTests`).
    @inline(__always)
    public var index: Int { Int(unsafeBitCast(self, to: UInt8.self)) }
}

/// The requests a page may send (contract section 5).
enum PageMethod: CaseIterable {
    case pwaNavigate, pwaRendered, back, navigate, ping, deeplinkOpen

    @inline(__always)
    init?(_ method: BridgeMethod) {
        switch method {
        case .pwaRendered: self = .pwaRendered
        case .pwaNavigate: self = .pwaNavigate
        case .back: self = .back
        case .navigate: self = .navigate
        case .ping: self = .ping
        case .deeplinkOpen: self = .deeplinkOpen
        default: return nil
        }
    }
}

/// The events a page may send (contract section 5); any other name is an app event. Four are
/// also requests and have the method's name.
enum PageEventName: CaseIterable {
    case pwaNavigate, pwaRendered, back, navigate, pwaNavigated

    var name: String {
        switch self {
        case .pwaNavigate: BridgeMethod.pwaNavigate.name
        case .pwaRendered: BridgeMethod.pwaRendered.name
        case .back: BridgeMethod.back.name
        case .navigate: BridgeMethod.navigate.name
        case .pwaNavigated: "pwa-navigated"
        }
    }

    static let all: [PageEventName] = allCases
    static let names: [String] = allCases.map(\.name)

    init?(name: String) {
        let names = Self.names
        for i in names.indices where names[i] == name {
            self = Self.all[i]
            return
        }
        return nil
    }
}

/// The requests a controller may send (contract section 6 and the router's methods), grouped
/// by the file that handles them.
enum ControllerMethod: Equatable {
    case session(SessionMethod)
    case navigation(NavigationMethod)
    case router(RouterMethod)
    case host(HostMethod)
    case shell(ShellMethod)
    /// A method a session's profile answers (`ProfileBehavior.methods`): to the session's profile.
    case profile(BridgeMethod)
    case ping

    init?(_ method: BridgeMethod) {
        switch method {
        case .sessionCreate: self = .session(.create)
        case .sessionList: self = .session(.list)
        case .sessionGet: self = .session(.get)
        case .sessionClose: self = .session(.close)
        case .sessionSubscribe: self = .session(.subscribe)
        case .sessionUnsubscribe: self = .session(.unsubscribe)
        case .navigateToUrl: self = .navigation(.navigateToUrl)
        case .navigationBack: self = .navigation(.back)
        case .canGoBack: self = .navigation(.canGoBack)
        case .popToRoot: self = .navigation(.popToRoot)
        case .routerResolve: self = .router(.resolve)
        case .routerPerform: self = .router(.perform)
        case .routerGet: self = .router(.get)
        case .routerSelectTab: self = .router(.selectTab)
        case .deeplinkOpen: self = .router(.deeplinkOpen)
        case .webviewEvaluate: self = .host(.evaluate)
        case .webviewClick: self = .host(.click)
        case .webviewType: self = .host(.type)
        case .sessionScreenshot: self = .host(.screenshot)
        case .placeholderSnapshot: self = .host(.snapshot)
        case .dialogAnswer: self = .shell(.dialogAnswer)
        case .webviewReload: self = .shell(.reload)
        case .webviewSetFiles: self = .shell(.setFiles)
        case .sessionSetGeolocation: self = .shell(.setGeolocation)
        case .bridgeReply: self = .profile(method)
        case .ping: self = .ping
        case .pwaRendered, .pwaNavigate, .back, .navigate, .hello: return nil
        }
    }
}

/// `session.*` (Sessions.swift).
enum SessionMethod: CaseIterable {
    case create, list, get, close, subscribe, unsubscribe
}

/// `navigation.*` (Navigation.swift).
enum NavigationMethod: CaseIterable {
    case navigateToUrl, back, canGoBack, popToRoot
}

/// The methods that need a routing configuration, `--config` (RouterMethods.swift).
enum RouterMethod: CaseIterable {
    case resolve, perform, get, selectTab, deeplinkOpen
}

/// The controller methods a browser session's browser answers (Bridge+Host.swift).
enum HostMethod: CaseIterable {
    case evaluate, click, type, screenshot, snapshot
}

/// The controller methods of the shell's duties in browser sessions (Bridge+Shell.swift).
enum ShellMethod: CaseIterable {
    case dialogAnswer, reload, setFiles, setGeolocation
}

extension Bridge {
    /// The methods an observer may call (BridgeObserver.swift).
    static var observerMethods: [BridgeMethod] {
        [.sessionList, .sessionGet, .sessionSubscribe, .sessionUnsubscribe, .canGoBack, .ping]
    }
}
