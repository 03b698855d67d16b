// The Hotwire Native path configuration: a JSON document of rules, each a list of regular
// expressions and the properties a matching URL gets (docs/HOTWIRE.md, "Path configuration").
// Pure: Swift's own Regex (no Foundation), no I/O; the daemon fetches a `pathConfigurationUrl`.

/// The platform a hotwire-native session plays. Where hotwire-native-ios and -android decide
/// differently, the session follows the one named here.
public enum HotwirePlatform: String, Sendable, CaseIterable {
    case ios
    case android
}

/// The navigation context of a path: the main stack (`default`) or the modal stack (`modal`).
public enum HotwireContext: String, Sendable, CaseIterable {
    case `default`
    case modal

    /// The name of the stack in the session's navigation tree: `main` or `modal`.
    public var stackName: String { self == .default ? "main" : "modal" }
}

/// The `presentation` property. An unknown value is `default`; `push` is an Android value (on
/// iOS it is unknown, so `default`).
public enum HotwirePresentation: String, Sendable, CaseIterable {
    case `default`
    case push
    case pop
    case replace
    case refresh
    case clearAll = "clear_all"
    case replaceRoot = "replace_root"
    case none
}

/// The properties of one URL: the rules that match it merged in order, later wins, then read
/// with the platform's defaults.
public struct HotwirePathProperties: Equatable, Sendable {
    /// Every merged property as the document gives it (unknown ones kept).
    public var raw: JSONObject
    public var context: HotwireContext
    public var presentation: HotwirePresentation
    /// `query_string_presentation: replace`: locations compare by path only.
    public var queryStringReplace: Bool
    /// The native screen this URL is (iOS `view_controller`; Android a `uri` that is not a
    /// `hotwire://fragment/web…` destination); `nil` for a web screen.
    public var nativeScreen: String?
    public var historicalLocation: Bool
    public var animated: Bool
    public var pullToRefreshEnabled: Bool

    public init(raw: JSONObject, platform: HotwirePlatform) {
        self.raw = raw
        context = raw["context"]?.stringValue == "modal" ? .modal : .default
        var presentation = raw["presentation"]?.stringValue.flatMap(HotwirePresentation.init(rawValue:)) ?? .default
        if presentation == .push && platform == .ios { presentation = .default }
        self.presentation = presentation
        queryStringReplace = raw["query_string_presentation"]?.stringValue == "replace"
        switch platform {
        case .ios:
            nativeScreen = raw["view_controller"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        case .android:
            if let uri = raw["uri"]?.stringValue, !uri.isEmpty, !uri.hasPrefix("hotwire://fragment/web") {
                nativeScreen = uri
            } else {
                nativeScreen = nil
            }
        }
        historicalLocation = raw["historical_location"]?.boolValue ?? false
        animated = raw["animated"]?.boolValue ?? true
        pullToRefreshEnabled = raw["pull_to_refresh_enabled"]?.boolValue ?? (platform == .ios)
    }
}

/// Why a path configuration document was refused; nothing is kept from a refused document.
public struct HotwireConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    /// The `session.create` param at fault (`platform`, `pathConfiguration`,
    /// `pathConfigurationUrl`, `bridgeComponents`), or `nil` for the profile itself or a
    /// document parsed on its own: a front end (the CLI) names its own flag from it.
    public var param: String?
    public init(_ message: String, param: String? = nil) {
        self.message = message
        self.param = param
    }
    public var description: String { message }
}

/// A parsed path configuration. `properties(for:)` runs the document's rules in order and then
/// the three built-in historical-location rules, merging the properties of every match.
public struct HotwirePathConfiguration: Sendable, Equatable {
    /// Size limits of a document (a pathConfigurationUrl answer is untrusted input).
    public struct Limits: Sendable, Equatable {
        /// Rules in one document (default 1000).
        public var maxRules: Int
        /// Patterns in one rule (default 100).
        public var maxPatternsPerRule: Int
        /// UTF-8 bytes of one pattern (default 1024).
        public var maxPatternBytes: Int
        public init(maxRules: Int = 1000, maxPatternsPerRule: Int = 100, maxPatternBytes: Int = 1024) {
            self.maxRules = maxRules
            self.maxPatternsPerRule = maxPatternsPerRule
            self.maxPatternBytes = maxPatternBytes
        }
        public static let `default` = Limits()
    }

    public struct Rule: Sendable, Equatable {
        public static func == (a: Rule, b: Rule) -> Bool { a.patterns == b.patterns && a.properties == b.properties }

        public var patterns: [String]
        public var properties: JSONObject
        // Compiled once; matching never compiles. Swift's Regex is not Sendable; the values are
        // immutable after init and only read.
        nonisolated(unsafe) var caseSensitive: [Regex<AnyRegexOutput>]
        nonisolated(unsafe) var caseInsensitive: [Regex<AnyRegexOutput>]

        init(patterns: [String], properties: JSONObject) throws(HotwireConfigurationError) {
            self.patterns = patterns
            self.properties = properties
            var sensitive: [Regex<AnyRegexOutput>] = []
            for pattern in patterns {
                do {
                    sensitive.append(try Regex(pattern))
                } catch {
                    throw HotwireConfigurationError("pattern '\(pattern)' is not a valid regular expression: \(error)")
                }
            }
            caseSensitive = sensitive
            caseInsensitive = sensitive.map { $0.ignoresCase() }
        }

        func matches(_ subject: String, platform: HotwirePlatform) -> Bool {
            let regexes = platform == .android ? caseInsensitive : caseSensitive
            for regex in regexes {
                if (try? regex.firstMatch(in: subject)) != nil { return true }
            }
            return false
        }
    }

    /// The document's `settings` (kept, not interpreted).
    public var settings: JSONObject
    /// The document's rules, in order (the historical-location rules are not among them).
    public var rules: [Rule]

    /// The built-in rules appended after the document's (both platforms).
    public static let historicalLocationRules: [Rule] = {
        func rule(_ path: String, _ presentation: String) -> Rule {
            // Fixed, valid patterns: compiling them cannot fail.
            try! Rule(
                patterns: [path],
                properties: ["presentation": .string(presentation), "context": "default", "historical_location": true])
        }
        return [
            rule("/recede_historical_location", "pop"),
            rule("/resume_historical_location", "none"),
            rule("/refresh_historical_location", "refresh"),
        ]
    }()

    /// The document as `init(json:)` reads it.
    public var document: JSONValue {
        .object([
            "settings": .object(settings),
            "rules": .array(rules.map { .object(["patterns": .array($0.patterns.map(JSONValue.string)), "properties": .object($0.properties)]) }),
        ])
    }

    /// No rules: every URL gets the defaults (plus the historical-location rules).
    public init() {
        settings = JSONObject()
        rules = []
    }

    /// Parses the document `{"settings"?: {…}, "rules": [{"patterns": [String], "properties": {…}}]}`.
    /// `rules` is required; a rule needs `patterns` (strings) and may omit `properties`.
    public init(json: JSONValue, limits: Limits = .default) throws(HotwireConfigurationError) {
        guard case .object(let document) = json else {
            throw HotwireConfigurationError("a path configuration is a JSON object")
        }
        if let settings = document["settings"] {
            guard case .object(let object) = settings else {
                throw HotwireConfigurationError("'settings' must be an object")
            }
            self.settings = object
        } else {
            settings = JSONObject()
        }
        guard let rulesValue = document["rules"] else {
            throw HotwireConfigurationError("a path configuration needs 'rules'")
        }
        guard case .array(let list) = rulesValue else {
            throw HotwireConfigurationError("'rules' must be an array")
        }
        guard list.count <= limits.maxRules else {
            throw HotwireConfigurationError("\(list.count) rules: at most \(limits.maxRules)")
        }
        var rules: [Rule] = []
        rules.reserveCapacity(list.count)
        for (index, item) in list.enumerated() {
            guard case .object(let rule) = item else {
                throw HotwireConfigurationError("rules[\(index)] must be an object")
            }
            guard case .array(let patternValues)? = rule["patterns"] else {
                throw HotwireConfigurationError("rules[\(index)] needs 'patterns', an array of strings")
            }
            guard patternValues.count <= limits.maxPatternsPerRule else {
                throw HotwireConfigurationError(
                    "rules[\(index)] has \(patternValues.count) patterns: at most \(limits.maxPatternsPerRule)")
            }
            var patterns: [String] = []
            for value in patternValues {
                guard case .string(let pattern) = value else {
                    throw HotwireConfigurationError("rules[\(index)].patterns must hold strings")
                }
                guard pattern.utf8.count <= limits.maxPatternBytes else {
                    throw HotwireConfigurationError(
                        "rules[\(index)] has a pattern of \(pattern.utf8.count) bytes: at most \(limits.maxPatternBytes)")
                }
                patterns.append(pattern)
            }
            var properties = JSONObject()
            if let value = rule["properties"] {
                guard case .object(let object) = value else {
                    throw HotwireConfigurationError("rules[\(index)].properties must be an object")
                }
                properties = object
            }
            do {
                rules.append(try Rule(patterns: patterns, properties: properties))
            } catch {
                throw HotwireConfigurationError("rules[\(index)]: \(error.message)")
            }
        }
        self.rules = rules
    }

    /// Parses the document from its text.
    public init(text: String, limits: Limits = .default) throws(HotwireConfigurationError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(text)
        } catch {
            throw HotwireConfigurationError("the path configuration is not JSON: \(error)")
        }
        try self.init(json: value, limits: limits)
    }

    /// What a rule's patterns are matched against: iOS the path plus `?query` when there is
    /// one; Android the path alone (and case-insensitively). `url` is absolute or a path.
    public static func subject(of url: String, platform: HotwirePlatform) -> String {
        var path: String
        var query: String?
        if let parsed = try? RouteURL.parse(url), parsed.authority != nil || parsed.path.hasPrefix("/") {
            path = parsed.path
            query = parsed.query
        } else {
            var rest = Substring(url)
            if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
            if let q = rest.firstIndex(of: "?") {
                query = String(rest[rest.index(after: q)...])
                rest = rest[..<q]
            }
            path = String(rest)
        }
        if path.isEmpty { path = "/" }
        if platform == .ios, let query, !query.isEmpty { return path + "?" + query }
        return path
    }

    /// The merged raw properties of `url`: every matching rule in order, later wins, the
    /// historical-location rules last.
    public func rawProperties(for url: String, platform: HotwirePlatform) -> JSONObject {
        let subject = Self.subject(of: url, platform: platform)
        var merged = JSONObject()
        for rule in rules where rule.matches(subject, platform: platform) {
            for (key, value) in zip(rule.properties.keys, rule.properties.values) { merged[key] = value }
        }
        for rule in Self.historicalLocationRules where rule.matches(subject, platform: platform) {
            for (key, value) in zip(rule.properties.keys, rule.properties.values) { merged[key] = value }
        }
        return merged
    }

    public func properties(for url: String, platform: HotwirePlatform) -> HotwirePathProperties {
        HotwirePathProperties(raw: rawProperties(for: url, platform: platform), platform: platform)
    }
}
