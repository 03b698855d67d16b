// The `capacitor` profile of a browser session: what `session.create` asked for
// (docs/CAPACITOR.md), on the seam of Profiles/Profile.swift.

/// A browser session's Capacitor profile: the app's options (`CapacitorOptions`: platform,
/// app info, plugins, allowed hosts) and the URL it starts on (what `WEBVIEW_SERVER_URL` is made
/// from when the app is served by its own server).
public struct CapacitorProfile: Equatable, Sendable {
    public static let name = CapacitorOptions.profileName

    public var options: CapacitorOptions
    /// The session's start URL (`session.create {url}`).
    public var appURL: String
    /// Whether the app's files are served at `options.localOrigin` (`--web-dir`): then
    /// `WEBVIEW_SERVER_URL` is that origin.
    public var servesWebDir: Bool
    /// The params it was made from (without `profile`), written back as they came.
    var raw: JSONObject

    /// From `session.create`'s params whose `profile` is `capacitor`: refused (nothing made) as
    /// `CapacitorOptions.parse` refuses, with the param at fault.
    public init(params: JSONObject) throws(ProfileError) {
        var p = params
        p["profile"] = .string(Self.name)
        do {
            options = try CapacitorOptions.parse(p) ?? CapacitorOptions()
        } catch {
            throw ProfileError(error.message, param: error.param)
        }
        if let w = params["webDir"] {
            guard case .bool(let served) = w else { throw ProfileError("webDir must be a boolean, not \(w.jsonString)", param: "webDir") }
            servesWebDir = served
        } else {
            servesWebDir = false
        }
        appURL = params["url"]?.stringValue.map(PageURL.stripClaim) ?? ""
        var kept = JSONObject()
        for key in Self.paramNames { if let v = params[key] { kept[key] = v } }
        raw = kept
    }

    /// The origin of the app's own pages: the local origin with `--web-dir`, else the start
    /// URL's (a `server.url` app).
    public var appOrigin: String {
        servesWebDir ? options.localOrigin : ((try? RouteURL.parse(appURL))?.origin ?? options.localOrigin)
    }
}

extension CapacitorProfile: ProfileConfiguration, ProfileBehavior {
    public static let paramNames = ["platform", "capacitor", "appendUserAgent", "webDir"]
    public static let needsBrowser = true
    public static let checkRules = name
    public static let scriptAsset: String? = "capacitor.js"
    static let methods: [BridgeMethod] = []
    /// `capacitor.*` and the app's native lifecycle (docs/PROTOCOL.md §6).
    static let namedMethods = CapacitorMethod.allCases.map(\.rawValue)

    public var params: JSONObject { raw }

    /// A Capacitor app is no Astro site: the page client without its shim.
    public var astroShim: Bool { false }

    /// capacitor.js with `{platform, plugins, config, serverUrl, debug}`.
    public var pageScript: ProfilePageScript? {
        ProfilePageScript(asset: Self.scriptAsset!, marker: "/*@CAPACITOR_CONFIG@*/ null",
                          config: options.injectedConfig(serverURL: options.serverURL(appURL: appURL, webDir: servesWebDir)))
    }

    /// With `webDir`: the app's files at its device origin (`options.localOrigin`).
    public var servedOrigin: String? { servesWebDir ? options.localOrigin : nil }

    /// Chromium's, with `appendUserAgent` after it (as Capacitor's web view does).
    public func userAgent(base: String) -> String {
        guard let extra = options.appendUserAgent, !extra.isEmpty else { return base }
        return base + " " + extra
    }

    func start<RNG>(_ b: inout Bridge<RNG>, _ s: inout Session, url: String) {
        s.profile = CapacitorState(profile: self, store: CapacitorStore(options: options))
    }
}

/// The controller methods of a capacitor session (`ProfileBehavior.namedMethods`).
enum CapacitorMethod: String, CaseIterable {
    case mock = "capacitor.mock"
    case reply = "capacitor.reply"
    case emit = "capacitor.emit"
    case openUrl = "navigation.openUrl"
    case pause = "app.pause"
    case resume = "app.resume"
}

/// Capacitor's events to controllers (docs/PROTOCOL.md, docs/CAPACITOR.md).
extension ControllerEventName {
    public static let capacitorCall = ControllerEventName("capacitor.call")
    public static let capacitorResult = ControllerEventName("capacitor.result")
    public static let capacitorReady = ControllerEventName("capacitor.ready")
}
