// The `hotwire-native` profile of a browser session: what `session.create` asked for.

/// One tab of Hotwire Native's tab bar (`HotwireTab` on iOS, `HotwireBottomTab` on Android):
/// its title (the tree's tab name) and the URL its navigator starts on (the first tab's is the
/// session's `url`).
public struct HotwireTab: Equatable, Sendable {
    public var title: String
    public var url: String?

    public init(title: String, url: String? = nil) {
        self.title = title
        self.url = url
    }
}

/// A browser session's Hotwire Native profile: the platform it plays, the bridge components
/// its native side registers, its path configuration, and its tabs.
public struct HotwireProfile: Equatable, Sendable {
    /// The name of the profile in `session.create {profile}` and in its result.
    public static let name = "hotwire-native"
    /// Bridge components a session may register (default limit).
    public static let maxComponents = 64
    /// Tabs a session may have (`tabs`; a tab bar shows at most five, a "More" tab the rest).
    public static let maxTabs = 10

    public var platform: HotwirePlatform
    public var components: [String]
    public var configuration: HotwirePathConfiguration
    /// `pathConfigurationUrl`: the document the daemon fetches before the session starts.
    public var configurationURL: String?
    /// `tabs`: a navigator per tab (empty: one navigator, tab `main`).
    public var tabs: [HotwireTab] = []

    public init(platform: HotwirePlatform = .ios, components: [String] = [],
                configuration: HotwirePathConfiguration = HotwirePathConfiguration(), configurationURL: String? = nil) {
        self.platform = platform
        self.components = components
        self.configuration = configuration
        self.configurationURL = configurationURL
    }

    /// The profile `session.create`'s params ask for: `nil` without `profile` or with `"astro"`
    /// (the default); refused as `SessionProfile.parse` refuses (`ProfileError`'s message and
    /// param).
    public static func parse(_ params: JSONObject) throws(HotwireConfigurationError) -> HotwireProfile? {
        do {
            return try SessionProfile.parse(params).configuration as? HotwireProfile
        } catch {
            throw HotwireConfigurationError(error.message, param: error.param)
        }
    }

    /// From `session.create`'s params whose `profile` is `hotwire-native`: refused (nothing
    /// made) for a platform other than `ios` or `android`, a path configuration that does not
    /// parse, both `pathConfiguration` and `pathConfigurationUrl`, a `pathConfigurationUrl` that
    /// is not http(s), or a bridge component name that is not a word (letters, digits, `-`,
    /// `_`; at most 64 of them).
    public init(params: JSONObject) throws(ProfileError) {
        var profile = HotwireProfile()
        if let p = params["platform"] {
            guard let text = p.stringValue, let platform = HotwirePlatform(rawValue: text) else {
                throw ProfileError("platform must be \"ios\" or \"android\", not \(p.jsonString)", param: "platform")
            }
            profile.platform = platform
        }
        if params["pathConfiguration"] != nil && params["pathConfigurationUrl"] != nil {
            throw ProfileError("give pathConfiguration or pathConfigurationUrl, not both", param: "pathConfiguration")
        }
        if let document = params["pathConfiguration"] {
            do {
                profile.configuration = try HotwirePathConfiguration(json: document)
            } catch {
                throw ProfileError(error.message, param: "pathConfiguration")
            }
        }
        if let u = params["pathConfigurationUrl"] {
            guard let url = u.stringValue, let parsed = try? RouteURL.parse(url),
                  parsed.scheme == "http" || parsed.scheme == "https", parsed.origin != nil else {
                throw ProfileError("pathConfigurationUrl must be an http(s) URL, not \(u.jsonString)", param: "pathConfigurationUrl")
            }
            profile.configurationURL = url
        }
        if let list = params["tabs"] {
            profile.tabs = try Self.parseTabs(list, sessionURL: params["url"]?.stringValue)
        }
        if let list = params["bridgeComponents"] {
            guard case .array(let items) = list else {
                throw ProfileError("bridgeComponents must be an array of names", param: "bridgeComponents")
            }
            guard items.count <= Self.maxComponents else {
                throw ProfileError("\(items.count) bridge components: at most \(Self.maxComponents)", param: "bridgeComponents")
            }
            for item in items {
                guard let n = item.stringValue, HotwireUserAgent.isValidComponentName(n) else {
                    throw ProfileError(
                        "bridge component \(item.jsonString) is not a name (letters, digits, '-', '_'; at most 64 bytes)", param: "bridgeComponents")
                }
                if !profile.components.contains(n) { profile.components.append(n) }
            }
        }
        self = profile
    }
}

extension HotwireProfile {
    /// `tabs: [{title, url?}]`, 1 to `maxTabs`: titles of 1 to 64 bytes, each once; every tab but
    /// the first has an http(s) `url` to start on; the first starts on the session's `url` (a
    /// `url` given for it must be that one).
    static func parseTabs(_ list: JSONValue, sessionURL: String?) throws(ProfileError) -> [HotwireTab] {
        guard case .array(let items) = list, !items.isEmpty else {
            throw ProfileError("tabs must be a non-empty array of {title, url}", param: "tabs")
        }
        guard items.count <= maxTabs else {
            throw ProfileError("\(items.count) tabs: at most \(maxTabs)", param: "tabs")
        }
        var tabs: [HotwireTab] = []
        for (i, item) in items.enumerated() {
            guard case .object(let o) = item, let title = o["title"]?.stringValue, !title.isEmpty, title.utf8.count <= 64 else {
                throw ProfileError("tabs[\(i)] must be {title, url} with a title of 1 to 64 bytes, not \(item.jsonString)", param: "tabs")
            }
            guard !tabs.contains(where: { $0.title == title }) else {
                throw ProfileError("tabs: the title \(title.debugDescription) is given twice", param: "tabs")
            }
            var url: String?
            if let u = o["url"] {
                guard let text = u.stringValue, let parsed = try? RouteURL.parse(text),
                      parsed.scheme == "http" || parsed.scheme == "https", parsed.origin != nil else {
                    throw ProfileError("tabs[\(i)].url must be an http(s) URL, not \(u.jsonString)", param: "tabs")
                }
                url = text
            }
            if i == 0, let url, let sessionURL, url != sessionURL {
                throw ProfileError("tabs[0] starts on the session's url (\(sessionURL)), not \(url): give that one, or none", param: "tabs")
            }
            if i > 0, url == nil {
                throw ProfileError("tabs[\(i)] (\(title)) needs the url it starts on", param: "tabs")
            }
            tabs.append(HotwireTab(title: title, url: i == 0 ? nil : url))
        }
        return tabs
    }
}

extension HotwireProfile: ProfileConfiguration, ProfileBehavior {
    public static let paramNames = ["platform", "pathConfiguration", "pathConfigurationUrl", "bridgeComponents", "tabs"]
    public static let needsBrowser = true
    public static let checkRules = name
    public static let scriptAsset: String? = "hotwire.js"
    static let methods: [BridgeMethod] = [.bridgeReply]
    static let namedMethods: [String] = []

    /// As `init(params:)` reads them; a fetched path configuration's URL, not its document.
    public var params: JSONObject {
        var out: JSONObject = ["platform": .string(platform.rawValue)]
        if !components.isEmpty { out["bridgeComponents"] = .array(components.map(JSONValue.string)) }
        if !tabs.isEmpty {
            out["tabs"] = .array(tabs.map { t in
                var o: JSONObject = ["title": .string(t.title)]
                if let url = t.url { o["url"] = .string(url) }
                return .object(o)
            })
        }
        if let configurationURL {
            out["pathConfigurationUrl"] = .string(configurationURL)
        } else if !configuration.rules.isEmpty || !configuration.settings.isEmpty {
            out["pathConfiguration"] = configuration.document
        }
        return out
    }

    /// The page gets `hotwire.js` (docs/HOTWIRE.md), not the Astro shim.
    public var astroShim: Bool { false }

    /// `hotwire.js` with the platform and the components (the `pathConfigurationUrl` is the
    /// daemon's to fetch: no page is told it).
    public var pageScript: ProfilePageScript? {
        ProfilePageScript(asset: Self.scriptAsset!, marker: "/*@HOTWIRE_CONFIG@*/ null", config: .object([
            "platform": .string(platform.rawValue),
            "components": .array(components.map(JSONValue.string)),
        ]))
    }

    public var servedOrigin: String? { nil }

    public func userAgent(base: String) -> String {
        HotwireUserAgent.build(base: base, platform: platform, components: components)
    }
}

/// Hotwire's events to controllers (docs/PROTOCOL.md, docs/HOTWIRE.md).
extension ControllerEventName {
    public static let hotwireMessage = ControllerEventName("hotwire.message")
    public static let hotwirePathConfiguration = ControllerEventName("hotwire.pathConfiguration")
    public static let bridgeMessage = ControllerEventName("bridge.message")
    public static let bridgeReady = ControllerEventName("bridge.ready")
}
