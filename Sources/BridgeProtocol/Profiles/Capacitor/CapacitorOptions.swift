// What a `capacitor` session was created with (`session.create {profile: "capacitor", platform,
// capacitor: {…}}`), its defaults, the config capacitor.js gets, the app's origin and the
// navigation rule (docs/CAPACITOR.md). Pure.

/// The device a session plays: what `Device` answers.
public struct CapacitorDevice: Equatable, Sendable {
    public var name: String
    public var model: String
    public var manufacturer: String
    public var osVersion: String
    /// Android: the SDK level (`androidSDKVersion`); iOS: `iOSVersion` (e.g. 170500).
    public var osVersionNumber: Int64
    public var webViewVersion: String
    public var identifier: String
    public var languageCode: String
    public var languageTag: String
    public var batteryLevel: Double
    public var isCharging: Bool
    public var memUsed: Int64

    public static func defaults(platform: CapacitorPlatform) -> CapacitorDevice {
        switch platform {
        case .android:
            return CapacitorDevice(name: "Pixel 8", model: "Pixel 8", manufacturer: "Google", osVersion: "14", osVersionNumber: 34,
                                   webViewVersion: "130.0.0.0", identifier: "b9f6c2d41e7a3058", languageCode: "en", languageTag: "en-US",
                                   batteryLevel: 1, isCharging: true, memUsed: 104_857_600)
        case .ios:
            return CapacitorDevice(name: "iPhone", model: "iPhone", manufacturer: "Apple", osVersion: "17.5", osVersionNumber: 170_500,
                                   webViewVersion: "17.5", identifier: "6F1A7C2E-3B4D-4E5F-8A9B-0C1D2E3F4A5B", languageCode: "en",
                                   languageTag: "en-US", batteryLevel: 1, isCharging: true, memUsed: 104_857_600)
        }
    }
}

/// A `session.create` param of the profile that is refused: the message, and the param at fault.
public struct CapacitorConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var param: String?
    public init(_ message: String, param: String? = nil) {
        self.message = message
        self.param = param
    }
    public var description: String { message }
}

/// A capacitor session's options.
public struct CapacitorOptions: Equatable, Sendable {
    /// The name of the profile in `session.create {profile}`.
    public static let profileName = "capacitor"
    /// At most this many plugins in `capacitor.plugins`.
    public static let maxPlugins = 128

    public var platform: CapacitorPlatform
    public var appId: String
    public var appName: String
    public var version: String
    public var build: String
    /// The URL the app was launched with (a deep link on a cold start): `getLaunchUrl`.
    public var launchUrl: String?
    /// The plugins native registers, in order (default: every official plugin).
    public var plugins: [CapacitorPluginSpec]
    /// `server.allowNavigation`: hosts (wildcards `*.example.com`) the web view may show itself.
    public var allowNavigation: [String]
    /// `server.hostname` (default `localhost`) and `server.androidScheme` (`https`, Capacitor 6+;
    /// `http` for 3–5): the origin of the app's own files (`--web-dir`).
    public var hostname: String
    public var androidScheme: String
    /// The app's capacitor.config (`plugins.CapacitorCookies.enabled`, …), handed to the page.
    public var config: JSONObject
    /// `appendUserAgent`: added to the browser's user agent (nothing else changes it).
    public var appendUserAgent: String?
    public var device: CapacitorDevice

    public init(platform: CapacitorPlatform = .android) {
        self.platform = platform
        appId = "com.example.app"
        appName = "Example"
        version = "1.0.0"
        build = "1"
        launchUrl = nil
        plugins = CapacitorPlugins.official
        allowNavigation = []
        hostname = "localhost"
        androidScheme = "https"
        config = [:]
        appendUserAgent = nil
        device = CapacitorDevice.defaults(platform: platform)
    }

    /// The session's plugin named `name`.
    public func plugin(_ name: String) -> CapacitorPluginSpec? {
        plugins.first { $0.name == name }
    }

    /// The origin of the app's own files on this platform (served from `--web-dir`): Android
    /// `<androidScheme>://<hostname>`; iOS `https://<hostname>` (Chromium loads no `capacitor:`
    /// URL; `https://localhost` keeps the host and a secure context, see docs/CAPACITOR.md).
    public var localOrigin: String {
        switch platform {
        case .android: return "\(androidScheme)://\(hostname)"
        case .ios: return "https://\(hostname)"
        }
    }

    /// `WEBVIEW_SERVER_URL`: the local origin with `--web-dir`; without it the app is served by
    /// its own server (`server.url`): Android then uses that URL's origin, iOS keeps its local
    /// origin (as native does).
    public func serverURL(appURL: String, webDir: Bool) -> String {
        if webDir || platform == .ios { return localOrigin }
        return (try? RouteURL.parse(appURL))?.origin ?? localOrigin
    }

    /// What the daemon puts in place of capacitor.js's `/*@CAPACITOR_CONFIG@*/ null`.
    public func injectedConfig(serverURL: String, debug: Bool = false) -> JSONValue {
        [
            "platform": .string(platform.rawValue),
            "plugins": CapacitorPlugins.headers(plugins, platform: platform),
            "config": .object(config),
            "serverUrl": .string(serverURL),
            "debug": .bool(debug),
        ]
    }

    /// Whether a top-level navigation to `url` stays in the web view (else it opens outside the
    /// app: `external.open`). Stays: `data:`/`blob:`/`about:`, the app's origin (scheme and
    /// host), a host matching `allowNavigation` (`*.x.com` matches `a.x.com`, not `x.com`).
    public func navigationStays(_ url: String, appOrigin: String) -> Bool {
        let lower = url.lowercased()
        if lower.hasPrefix("data:") || lower.hasPrefix("blob:") || lower.hasPrefix("about:") || lower.hasPrefix("javascript:") { return true }
        guard let target = try? RouteURL.parse(url), let origin = target.origin else { return false }
        if let app = try? RouteURL.parse(appOrigin), let appOrigin = app.origin, appOrigin == origin { return true }
        guard let host = Self.host(of: target) else { return false }
        return allowNavigation.contains { Self.matches(pattern: $0, host: host) }
    }

    static func host(of url: RouteURL) -> String? {
        guard let authority = url.authority, let (host, _) = try? RouteURL.hostAndPort(authority) else { return nil }
        return host.lowercased()
    }

    static func matches(pattern raw: String, host: String) -> Bool {
        var pattern = raw.lowercased()
        let parts = pattern.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].hasSuffix(":"), parts[1].isEmpty { pattern = String(parts[2]) } // scheme://host
        if let slash = pattern.firstIndex(of: "/") { pattern = String(pattern[..<slash]) }
        if pattern == "*" { return true }
        if pattern.hasPrefix("*.") {
            let suffix = pattern.dropFirst(1) // ".x.com"
            return host.hasSuffix(suffix) && host.count > suffix.count
        }
        return host == pattern
    }

    /// The profile `session.create`'s params ask for: `nil` when `profile` is not
    /// `"capacitor"`; an error (nothing made) for a platform other than `android`/`ios`, a
    /// `capacitor` that is not an object, a field of the wrong type, an unknown official plugin
    /// name, a plugin twice.
    public static func parse(_ params: JSONObject) throws(CapacitorConfigurationError) -> CapacitorOptions? {
        guard params["profile"]?.stringValue == profileName else { return nil }
        var options = CapacitorOptions()
        if let p = params["platform"] {
            guard let text = p.stringValue, let platform = CapacitorPlatform(rawValue: text) else {
                throw CapacitorConfigurationError("platform must be \"android\" or \"ios\", not \(p.jsonString)", param: "platform")
            }
            options = CapacitorOptions(platform: platform)
        }
        if let a = params["appendUserAgent"] {
            guard let text = a.stringValue else { throw CapacitorConfigurationError("appendUserAgent must be a string", param: "appendUserAgent") }
            options.appendUserAgent = text
        }
        guard let value = params["capacitor"] else { return options }
        guard case .object(let c) = value else {
            throw CapacitorConfigurationError("capacitor must be an object, not \(value.jsonString)", param: "capacitor")
        }
        func string(_ key: String) throws(CapacitorConfigurationError) -> String? {
            guard let v = c[key] else { return nil }
            guard let s = v.stringValue else {
                throw CapacitorConfigurationError("capacitor.\(key) must be a string, not \(v.jsonString)", param: "capacitor")
            }
            return s
        }
        if let s = try string("appId") { options.appId = s }
        if let s = try string("appName") { options.appName = s }
        if let s = try string("version") { options.version = s }
        if let s = try string("build") { options.build = s }
        if let s = try string("launchUrl") { options.launchUrl = s }
        if let s = try string("hostname") {
            guard !s.isEmpty, !s.contains("/"), !s.contains(":") else {
                throw CapacitorConfigurationError("capacitor.hostname must be a host name, not \"\(s)\"", param: "capacitor")
            }
            options.hostname = s.lowercased()
        }
        if let s = try string("androidScheme") {
            guard s == "http" || s == "https" else {
                throw CapacitorConfigurationError("capacitor.androidScheme must be \"http\" or \"https\", not \"\(s)\"", param: "capacitor")
            }
            options.androidScheme = s
        }
        if let s = try string("appendUserAgent") { options.appendUserAgent = s }
        if let v = c["config"] {
            guard case .object(let o) = v else { throw CapacitorConfigurationError("capacitor.config must be an object", param: "capacitor") }
            options.config = o
        }
        if let v = c["allowNavigation"] {
            guard case .array(let items) = v, items.allSatisfy({ $0.stringValue != nil }) else {
                throw CapacitorConfigurationError("capacitor.allowNavigation must be an array of hosts", param: "capacitor")
            }
            options.allowNavigation = items.compactMap(\.stringValue)
        }
        if let v = c["plugins"] { options.plugins = try parsePlugins(v) }
        return options
    }

    /// `capacitor.plugins`: official names (`"App"`, `"Storage"`, …) or the app's own plugins
    /// as `{name, methods: [name | {name, rtype}]}` (answered only by mocks).
    static func parsePlugins(_ value: JSONValue) throws(CapacitorConfigurationError) -> [CapacitorPluginSpec] {
        guard case .array(let items) = value else {
            throw CapacitorConfigurationError("capacitor.plugins must be an array of plugin names", param: "capacitor")
        }
        guard items.count <= maxPlugins else {
            throw CapacitorConfigurationError("\(items.count) plugins: at most \(maxPlugins)", param: "capacitor")
        }
        var specs: [CapacitorPluginSpec] = []
        for item in items {
            let spec: CapacitorPluginSpec
            if let name = item.stringValue {
                guard let known = CapacitorPlugins.spec(named: name) else {
                    throw CapacitorConfigurationError(
                        "unknown plugin \"\(name)\": an official plugin's JS name (\(CapacitorPlugins.officialNames.joined(separator: ", "))), or {name, methods} for the app's own",
                        param: "capacitor")
                }
                spec = known
            } else if case .object(let o) = item, let name = o["name"]?.stringValue, isPluginName(name) {
                var methods: [CapacitorMethodHeader] = []
                for m in o["methods"]?.arrayValue ?? [] {
                    if let n = m.stringValue, isPluginName(n) {
                        methods.append(CapacitorMethodHeader(n))
                    } else if let n = m["name"]?.stringValue, isPluginName(n) {
                        let rtype = m["rtype"]?.stringValue.flatMap(CapacitorReturnType.init(rawValue:)) ?? .promise
                        methods.append(CapacitorMethodHeader(n, rtype))
                    } else {
                        throw CapacitorConfigurationError("plugin \(name): a method is a name or {name, rtype}, not \(m.jsonString)", param: "capacitor")
                    }
                }
                let events = (o["events"]?.arrayValue ?? []).compactMap(\.stringValue)
                spec = CapacitorPlugins.spec(named: name) ?? CapacitorPluginSpec(name, methods: methods, events: events, kind: .controller)
            } else {
                throw CapacitorConfigurationError("capacitor.plugins: \(item.jsonString) is neither a plugin name nor {name, methods}", param: "capacitor")
            }
            guard !specs.contains(where: { $0.name == spec.name }) else {
                throw CapacitorConfigurationError("plugin \"\(spec.name)\" is listed twice", param: "capacitor")
            }
            specs.append(spec)
        }
        return specs
    }

    /// A JS identifier-like name: letters, digits, `_`, `$`; not starting with a digit; at most 64 bytes.
    static func isPluginName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 64, !(first >= "0" && first <= "9") else { return false }
        return name.unicodeScalars.allSatisfy { s in
            (s >= "a" && s <= "z") || (s >= "A" && s <= "Z") || (s >= "0" && s <= "9") || s == "_" || s == "$"
        }
    }
}
