@testable import BridgeProtocol

/// A third profile, made only of this folder and one registration line (`ProfileRegistry.withKiosk`,
/// ProfileSeamTests.swift), as a profile of `Sources/BridgeProtocol/Profiles/` is made of its
/// folder and one line of Registry.swift: a kiosk shell that keeps its sessions on one site.
///
/// `session.create {profile: "kiosk", home: "http://k/"}` (no browser needed): a page's classic
/// navigation or a controller's `navigation.navigateToUrl` away from `home` is refused — answered
/// `{handledBy: "kiosk"}` or `{stack}`, nothing stacked, controllers hear `kiosk.blocked` — and
/// every other question goes to the core (`false` / `nil`). `navigation.back` on the root is
/// `kiosk.home`. A page's `kiosk.ping` event is the profile's; tabs get ` Kiosk/1.0` in their
/// user agent and the plain page client with the Astro shim.
struct KioskProfile: ProfileConfiguration, ProfileBehavior, Equatable {
    static let name = "kiosk"
    static let paramNames = ["home"]
    static let needsBrowser = false
    static let checkRules = "astro"
    static let scriptAsset: String? = nil
    static let methods: [BridgeMethod] = []
    static let namedMethods: [String] = []

    var home: String

    init(params: JSONObject) throws(ProfileError) {
        guard let home = params["home"]?.stringValue, home.hasPrefix("http") else {
            throw ProfileError("kiosk needs \"home\", an http(s) URL", param: "home")
        }
        self.home = home
    }

    var params: JSONObject { ["home": .string(home)] }
    var astroShim: Bool { true }
    var pageScript: ProfilePageScript? { nil }
    var servedOrigin: String? { nil }
    func userAgent(base: String) -> String { base + " Kiosk/1.0" }

    func start<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, url: String) {
        s.profile = KioskState(profile: self)
    }
}

/// One kiosk session's state: what it refused.
struct KioskState: ProfileState, Equatable {
    var profile: KioskProfile
    var blocked: [String] = []

    var configuration: any ProfileConfiguration { profile }
    var drawsTree: Bool { false }
    func canGoBack(_ s: Session) -> Bool? { nil }
    func hasWebView(_ webview: ItemID) -> Bool { false }
    func injectsPageScript(into webview: ItemID) -> Bool { true }
    func keepsTab(of webview: ItemID) -> Bool { false }
    func sessionInfo(_ s: Session) -> [(String, JSONValue)] {
        [("home", .string(profile.home)), ("blocked", .int(Int64(blocked.count)))]
    }

    static func pageConnected<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, _ s: inout Session, webview: ItemID) {}

    static func pageEvent<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, name: String, _ params: JSONObject,
                               _ s: inout Session, webview: ItemID, now: Int64) throws(ProtocolError) -> Bool {
        guard name == "kiosk.ping" else { return false }
        b.emit(&s, .kioskPong) { w in w.key("webview"); w.string(webview.description) }
        return true
    }

    static func navigate<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID?, _ s: inout Session, url: String,
                              from webview: ItemID?, reply: ProfileNavigateReply, now: Int64) -> Bool {
        guard var state = s.profile as? KioskState, !url.hasPrefix(state.profile.home) else { return false }
        state.blocked.append(url)
        s.profile = state
        b.emit(&s, .kioskBlocked) { w in w.key("url"); w.string(url) }
        guard let client else { return true }
        switch reply {
        case .none: break
        case .handledBy(let id): b.sendResult(client, id: id) { w in w.key("handledBy"); w.string(KioskProfile.name) }
        case .stack(let id):
            let stack = b.stackJSON(&s)
            b.sendResult(client, id: id) { w in w.key("stack"); w.raw(stack) }
        }
        return true
    }

    static func back<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, client: ClientID?, id: Int64?, now: Int64) -> Bool {
        guard !s.engine.canGoBack else { return false }
        b.emit(&s, .kioskHome) { _ in }
        if let client, let id {
            let stack = b.stackJSON(&s)
            b.sendResult(client, id: id) { w in
                w.key("action"); w.string("none")
                w.key("removed"); w.write(.array([]))
                w.key("stack"); w.raw(stack)
            }
        }
        return true
    }

    static func routerAction<RNG>(_ b: inout Bridge<RNG>, _ action: RouterAction, _ s: inout Session, method: BridgeMethod,
                                  client: ClientID, id: Int64, now: Int64) throws(ProtocolError) -> Bool { false }
    static func request<RNG>(_ b: inout Bridge<RNG>, _ method: BridgeMethod, _ client: ClientID, id: Int64, _ p: Params,
                             _ s: inout Session, now: Int64) throws(ProtocolError) {}
    static func namedRequest<RNG>(_ b: inout Bridge<RNG>, _ name: String, _ client: ClientID, id: Int64, _ p: Params,
                                  _ s: inout Session, now: Int64) throws(ProtocolError) {}
    static func hostResult<RNG>(_ b: inout Bridge<RNG>, _ result: HostResult, _ s: inout Session, now: Int64) {}
    static func resume<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, _ s: inout Session, _ waiting: any ProfileValue, now: Int64) {}

    static func historyTraversed<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, webview: ItemID, now: Int64) -> Bool { false }
}

/// The kiosk's events to controllers, named in its folder as a profile's are.
extension ControllerEventName {
    static let kioskPong = ControllerEventName("kiosk.pong")
    static let kioskBlocked = ControllerEventName("kiosk.blocked")
    static let kioskHome = ControllerEventName("kiosk.home")
}
