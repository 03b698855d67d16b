// The `hotwire-native` profile of a browser session: what `session.create` asked for.

/// A browser session's Hotwire Native profile: the platform it plays, the bridge components
/// its native side registers, and its path configuration.
public struct HotwireProfile: Equatable, Sendable {
    /// The name of the profile in `session.create {profile}` and in its result.
    public static let name = "hotwire-native"
    /// Bridge components a session may register (default limit).
    public static let maxComponents = 64

    public var platform: HotwirePlatform
    public var components: [String]
    public var configuration: HotwirePathConfiguration
    /// `pathConfigurationUrl`: the document the daemon fetches before the session starts.
    public var configurationURL: String?

    public init(platform: HotwirePlatform = .ios, components: [String] = [],
                configuration: HotwirePathConfiguration = HotwirePathConfiguration(), configurationURL: String? = nil) {
        self.platform = platform
        self.components = components
        self.configuration = configuration
        self.configurationURL = configurationURL
    }

    /// The profile `session.create`'s params ask for: `nil` without `profile` or with `"astro"`
    /// (the default: an Astro shell); an error (and
    /// nothing made) for a profile other than `hotwire-native`, a platform other than `ios` or
    /// `android`, a path configuration that does not parse, both `pathConfiguration` and
    /// `pathConfigurationUrl`, a `pathConfigurationUrl` that is not http(s), or a bridge
    /// component name that is not a word (letters, digits, `-`, `_`; at most 64 of them).
    public static func parse(_ params: JSONObject) throws(HotwireConfigurationError) -> HotwireProfile? {
        guard let value = params["profile"], value.stringValue != "astro" else {
            for key in ["platform", "pathConfiguration", "pathConfigurationUrl", "bridgeComponents"] where params[key] != nil {
                throw HotwireConfigurationError("'\(key)' needs \"profile\": \"\(name)\"", param: key)
            }
            return nil
        }
        guard value.stringValue == name else {
            throw HotwireConfigurationError("unknown profile \(value.jsonString): \"astro\" (the default) or \"\(name)\"")
        }
        var profile = HotwireProfile()
        if let p = params["platform"] {
            guard let text = p.stringValue, let platform = HotwirePlatform(rawValue: text) else {
                throw HotwireConfigurationError("platform must be \"ios\" or \"android\", not \(p.jsonString)", param: "platform")
            }
            profile.platform = platform
        }
        if params["pathConfiguration"] != nil && params["pathConfigurationUrl"] != nil {
            throw HotwireConfigurationError("give pathConfiguration or pathConfigurationUrl, not both", param: "pathConfiguration")
        }
        if let document = params["pathConfiguration"] {
            do {
                profile.configuration = try HotwirePathConfiguration(json: document)
            } catch {
                throw HotwireConfigurationError(error.message, param: "pathConfiguration")
            }
        }
        if let u = params["pathConfigurationUrl"] {
            guard let url = u.stringValue, let parsed = try? RouteURL.parse(url),
                  parsed.scheme == "http" || parsed.scheme == "https", parsed.origin != nil else {
                throw HotwireConfigurationError("pathConfigurationUrl must be an http(s) URL, not \(u.jsonString)", param: "pathConfigurationUrl")
            }
            profile.configurationURL = url
        }
        if let list = params["bridgeComponents"] {
            guard case .array(let items) = list else {
                throw HotwireConfigurationError("bridgeComponents must be an array of names", param: "bridgeComponents")
            }
            guard items.count <= maxComponents else {
                throw HotwireConfigurationError("\(items.count) bridge components: at most \(maxComponents)", param: "bridgeComponents")
            }
            for item in items {
                guard let n = item.stringValue, HotwireUserAgent.isValidComponentName(n) else {
                    throw HotwireConfigurationError(
                        "bridge component \(item.jsonString) is not a name (letters, digits, '-', '_'; at most 64 bytes)", param: "bridgeComponents")
                }
                if !profile.components.contains(n) { profile.components.append(n) }
            }
        }
        return profile
    }
}
