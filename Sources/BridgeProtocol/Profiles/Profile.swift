/// Session profiles: the app shell a session plays (docs/ARCHITECTURE.md, "Profiles").
///
/// A session has one profile, parsed once by `SessionProfile.parse` from `session.create`'s
/// params (`bridged open` and `bridged check` turn their flags into those params and parse them
/// with the same call), kept as a typed value, and written back as params (`SessionProfile.params`)
/// where text is needed (a trace, `check`'s `session.create`). The plain profile (`astro`, the
/// default) is no profile at all: the core's own behaviour, `SessionProfile.plain`.
///
/// Every other profile is a folder of `Profiles/` and one line of `ProfileRegistry.standard`
/// (Registry.swift). Its configuration type conforms to
///
/// - `ProfileConfiguration` (public): its name and params, its parser, what a page of its
///   sessions gets injected (script, user agent) and which `check` rules judge it — the
///   questions of the daemon, `check` and the CLI;
/// - `ProfileBehavior`: how its sessions start (their `ProfileState`);
///
/// and its per-session state to `ProfileState`, whose hooks the Bridge calls at the seam:
/// a page connected, a page's event, a navigation to decide, `navigation.back`, a router
/// action, a controller method of the profile's, a host result the core does not handle, a
/// proposal resumed after its snapshot, and what `session.get` adds. `Bridge/` and `Engine/`
/// name no profile: they ask `Session.profile`.

/// A profile's params refused: why, and the param at fault (a front end names its own flag
/// from it), or nil for the profile itself.
public struct ProfileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var param: String?
    public init(_ message: String, param: String? = nil) {
        self.message = message
        self.param = param
    }
    public var description: String { message }
}

/// A page script a profile adds to every tab of its sessions, after the page client: the
/// daemon's asset `asset` (Sources/BridgeServer/Assets) with `marker` replaced by `config`.
public struct ProfilePageScript: Equatable, Sendable {
    public var asset: String
    public var marker: String
    public var config: JSONValue
    public init(asset: String, marker: String, config: JSONValue) {
        self.asset = asset
        self.marker = marker
        self.config = config
    }
}

/// What a registered profile is to the daemon, `check` and the CLI.
public protocol ProfileConfiguration: Sendable {
    /// Its name in `session.create {profile}`, in results and in `session.get`.
    static var name: String { get }
    /// Its own params of `session.create` (each refused without `profile: name`).
    static var paramNames: [String] { get }
    /// Whether its sessions must be browser sessions (`browser: true`).
    static var needsBrowser: Bool { get }
    /// The rule set `bridged check` judges it by (BridgeCheck's `CheckProfile`).
    static var checkRules: String { get }
    /// The daemon asset its page script is made of, if it has one (`pageScript`).
    static var scriptAsset: String? { get }
    /// From `session.create`'s params, whose `profile` is `name`.
    init(params: JSONObject) throws(ProfileError)
    /// Its params as `parse` reads them (without `profile`).
    var params: JSONObject { get }
    /// Whether a page of its sessions gets the Astro shim of the page client.
    var astroShim: Bool { get }
    /// The script every tab of its sessions runs after the page client.
    var pageScript: ProfilePageScript? { get }
    /// The origin at which the daemon serves the app's own files (`bridged open --web-dir`), if
    /// the profile's sessions have one (nil: the app comes from its URL).
    var servedOrigin: String? { get }
    /// The user agent of its tabs, made from Chromium's (with the daemon's suffix).
    func userAgent(base: String) -> String
    /// Equality across the existential (`Equatable` conformers get it).
    func isEqual(to other: any ProfileConfiguration) -> Bool
}

extension ProfileConfiguration where Self: Equatable {
    public func isEqual(to other: any ProfileConfiguration) -> Bool { (other as? Self) == self }
}

/// A session's profile: nil configuration is the plain (Astro) profile.
public struct SessionProfile: Equatable, Sendable, CustomStringConvertible {
    /// The profile's configuration; nil: plain.
    public let configuration: (any ProfileConfiguration)?

    public init(_ configuration: (any ProfileConfiguration)?) {
        self.configuration = configuration
    }

    /// No profile: an Astro shell, the default.
    public static let plain = SessionProfile(nil)
    /// The plain profile's name (`session.create {profile: "astro"}` is the default).
    public static let plainName = "astro"

    public var isPlain: Bool { configuration == nil }
    public var name: String { configuration.map { type(of: $0).name } ?? Self.plainName }
    public var description: String { name }
    public var needsBrowser: Bool { configuration.map { type(of: $0).needsBrowser } ?? false }
    /// The `check` rule set (`astro` for the plain profile).
    public var checkRules: String { configuration.map { type(of: $0).checkRules } ?? Self.plainName }
    public var astroShim: Bool { configuration?.astroShim ?? true }
    public var pageScript: ProfilePageScript? { configuration?.pageScript }
    public var servedOrigin: String? { configuration?.servedOrigin }
    /// The tabs' user agent from Chromium's; nil: Chromium's (with the daemon's suffix).
    public var userAgent: (@Sendable (String) -> String)? {
        guard let configuration else { return nil }
        return { base in configuration.userAgent(base: base) }
    }

    /// The profile as `session.create`'s params: `profile` and the profile's own (empty for plain).
    public var params: JSONObject {
        guard let configuration else { return JSONObject() }
        var out: JSONObject = ["profile": .string(name)]
        for (key, value) in zip(configuration.params.keys, configuration.params.values) { out[key] = value }
        return out
    }

    /// The profile `session.create`'s params ask for: plain without `profile` or with `"astro"`;
    /// refused: a profile `registry` does not know, a profile's param without that profile, and
    /// whatever the profile's own parser refuses.
    public static func parse(_ params: JSONObject, registry: ProfileRegistry = .standard) throws(ProfileError) -> SessionProfile {
        guard let value = params["profile"], value.stringValue != plainName else {
            for kind in registry.kinds {
                for key in kind.paramNames where params[key] != nil {
                    throw ProfileError("'\(key)' needs \"profile\": \"\(kind.name)\"", param: key)
                }
            }
            return .plain
        }
        guard let name = value.stringValue, let kind = registry.kind(named: name) else {
            let names = ["\"\(plainName)\" (the default)"] + registry.kinds.map { "\"\($0.name)\"" }
            let known = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names.last!
            throw ProfileError("unknown profile \(value.jsonString): \(known)")
        }
        for other in registry.kinds where other.name != name {
            for key in other.paramNames where params[key] != nil && !kind.paramNames.contains(key) {
                throw ProfileError("'\(key)' needs \"profile\": \"\(other.name)\"", param: key)
            }
        }
        return SessionProfile(try kind.init(params: params))
    }

    public static func == (a: SessionProfile, b: SessionProfile) -> Bool {
        switch (a.configuration, b.configuration) {
        case (nil, nil): true
        case let (x?, y?): x.isEqual(to: y)
        default: false
        }
    }

    /// The Bridge's side of the profile (nil: plain).
    var behavior: (any ProfileBehavior)? { configuration as? any ProfileBehavior }
}

/// The profiles a Bridge (and `check`, the CLI) knows, by name: `standard` (Registry.swift), or
/// another list (a test's).
public struct ProfileRegistry: Sendable, Equatable {
    let kinds: [any ProfileBehavior.Type]

    init(_ kinds: [any ProfileBehavior.Type]) {
        self.kinds = kinds
    }

    /// The registered profiles' names, in registration order.
    public var names: [String] { kinds.map { $0.name } }

    func kind(named name: String) -> (any ProfileBehavior.Type)? {
        kinds.first { $0.name == name }
    }

    /// The profile whose `namedMethods` has `name`, if one has.
    func owner(named name: String) -> (any ProfileBehavior.Type)? {
        kinds.first { $0.namedMethods.contains(name) }
    }

    /// The profile that answers controller method `method`, if one does.
    func owner(of method: BridgeMethod) -> (any ProfileBehavior.Type)? {
        kinds.first { $0.methods.contains(method) }
    }

    /// The daemon assets the registered profiles' page scripts are made of.
    public var scriptAssets: [String] { kinds.compactMap { $0.scriptAsset } }

    public static func == (a: ProfileRegistry, b: ProfileRegistry) -> Bool { a.names == b.names }
}

// MARK: The Bridge's side

/// A registered profile as the Bridge sees it: how its sessions start.
protocol ProfileBehavior: ProfileConfiguration {
    /// The controller methods (of `BridgeMethod`'s table) its sessions answer (`ProfileState.request`).
    static var methods: [BridgeMethod] { get }
    /// Controller methods of its own, by wire name, outside `BridgeMethod`'s table (names the core
    /// does not know: `ProfileState.namedRequest`); none may be a `BridgeMethod`'s name.
    static var namedMethods: [String] { get }
    /// A session of this profile was made (its engine has the root web view `W1` on `url`): its
    /// state goes into `s.profile` (and its tree into `s.tree` when it draws one). Called before
    /// the creator's reply and the root tab are written.
    func start<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, url: String)
}

/// What a profile's navigation answers, when it is asked to decide one.
enum ProfileNavigateReply: Equatable {
    /// Nobody waits (a navigation the browser stopped, a page's `navigate` event).
    case none
    /// A page's `navigate` request: `{handledBy: <profile>}`.
    case handledBy(Int64)
    /// `navigation.navigateToUrl`: `{stack}`, before the events the navigation caused.
    case stack(Int64)

    /// The id of the request that waits for it, if any.
    var request: Int64? {
        switch self {
        case .none: nil
        case .handledBy(let id), .stack(let id): id
        }
    }
}

/// A value a profile has the core keep for it (a proposal waiting for a snapshot), compared by
/// the profile.
protocol ProfileValue {
    func isEqual(to other: any ProfileValue) -> Bool
}

extension ProfileValue where Self: Equatable {
    func isEqual(to other: any ProfileValue) -> Bool { (other as? Self) == self }
}

/// A `ProfileValue` in an `Equatable` place.
struct ProfileBox: Equatable {
    var value: any ProfileValue
    init(_ value: any ProfileValue) { self.value = value }
    static func == (a: ProfileBox, b: ProfileBox) -> Bool { a.value.isEqual(to: b.value) }
}

/// One session's profile side, in `Session.profile` (nil: plain): its state, and its answers
/// to the core's questions. Every hook is answered by every profile (no defaults): `false` /
/// `nil` leaves the question to the core, as for a plain session. The static hooks get the
/// Bridge and the session (whose `profile` is this state) to change both.
protocol ProfileState: ProfileValue {
    /// The configuration the session has now (`session.get`, the daemon's tabs).
    var configuration: any ProfileConfiguration { get }
    /// Whether the profile keeps the session's tree itself (not the router: `router.*` works on
    /// it without a routing configuration, the router's back and tab fronting stay out).
    var drawsTree: Bool { get }
    /// `session.get`'s `canGoBack`; nil: the engine's.
    func canGoBack(_ s: Session) -> Bool?
    /// Whether `webview` is one of the profile's web views beyond the engine's stack.
    func hasWebView(_ webview: ItemID) -> Bool
    /// Whether the tab of `webview` gets the profile's page script (`false`: a web view that
    /// is not the app's, as an in-app browser's).
    func injectsPageScript(into webview: ItemID) -> Bool
    /// Whether the tab of `webview`, which just closed, is kept for a later web view of the
    /// profile's (`HostWork.keepTab`) instead of closed.
    func keepsTab(of webview: ItemID) -> Bool
    /// What `session.get` adds after `"profile": name`.
    func sessionInfo(_ s: Session) -> [(String, JSONValue)]

    /// A page claimed `webview` (browser sessions, each time its page connects).
    static func pageConnected<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, _ s: inout Session, webview: ItemID)
    /// A page's event: `true` when the profile handled it (else the core's events follow).
    static func pageEvent<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, name: String, _ params: JSONObject,
                               _ s: inout Session, webview: ItemID, now: Int64) throws(ProtocolError) -> Bool
    /// A navigation to decide: a page's `navigate` (from its web view), one the browser stopped,
    /// or `navigation.navigateToUrl` (`from` nil). `true`: decided (and `reply` answered).
    static func navigate<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID?, _ s: inout Session, url: String,
                              from webview: ItemID?, reply: ProfileNavigateReply, now: Int64) -> Bool
    /// `navigation.back` (`client`/`id` to answer `{action, removed, stack}`). `true`: done.
    static func back<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, client: ClientID?, id: Int64?, now: Int64) -> Bool
    /// `router.perform`, `router.selectTab`, `deeplink.open`. `true`: done (answered).
    static func routerAction<RNG>(_ b: inout Bridge<RNG>, _ action: RouterAction, _ s: inout Session, method: BridgeMethod,
                                  client: ClientID, id: Int64, now: Int64) throws(ProtocolError) -> Bool
    /// A controller method of the profile's (`ProfileBehavior.methods`).
    static func request<RNG>(_ b: inout Bridge<RNG>, _ method: BridgeMethod, _ client: ClientID, id: Int64, _ p: Params,
                             _ s: inout Session, now: Int64) throws(ProtocolError)
    /// A controller method of the profile's own by name (`ProfileBehavior.namedMethods`).
    static func namedRequest<RNG>(_ b: inout Bridge<RNG>, _ name: String, _ client: ClientID, id: Int64, _ p: Params,
                                  _ s: inout Session, now: Int64) throws(ProtocolError)
    /// A host result the core leaves to profiles (`pathConfigurationFetched`, `historyRead`).
    static func hostResult<RNG>(_ b: inout Bridge<RNG>, _ result: HostResult, _ s: inout Session, now: Int64)
    /// The browser stopped a traversal of `webview`'s history to another document (a page's
    /// `history.back()` across documents). `true`: the profile decided (else the core's back of
    /// that web view, as a page's `back`).
    static func historyTraversed<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, webview: ItemID, now: Int64) -> Bool
    /// What the profile had wait for a snapshot (`Bridge.holdForSnapshot`), now with the picture
    /// in hand (`Bridge.snapshotInHand`).
    static func resume<RNG>(_ b: inout Bridge<RNG>, _ client: ClientID, _ s: inout Session, _ waiting: any ProfileValue, now: Int64)
}

extension Session {
    /// Whether the session's profile keeps its tree itself.
    var profileDrawsTree: Bool {
        if let profile { profile.drawsTree } else { false }
    }
}

/// Equality of two sessions' profile sides.
func profileStatesEqual(_ a: (any ProfileState)?, _ b: (any ProfileState)?) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case let (x?, y?): x.isEqual(to: y)
    default: false
    }
}
