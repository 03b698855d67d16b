import Testing

@testable import BridgeProtocol

@Suite struct HotwirePathConfigurationTests {
    static let demo = """
        {"settings": {"screenshots_enabled": true},
         "rules": [
           {"patterns": [".*"], "properties": {"context": "default", "pull_to_refresh_enabled": true}},
           {"patterns": ["/new$", "/edit$", "/modal"], "properties": {"context": "modal", "pull_to_refresh_enabled": false}},
           {"patterns": ["/numbers$"], "properties": {"view_controller": "numbers", "uri": "hotwire://fragment/numbers"}},
           {"patterns": ["/web$"], "properties": {"uri": "hotwire://fragment/web"}},
           {"patterns": ["\\\\?tab=x"], "properties": {"title": "tab x"}},
           {"patterns": ["^/$"], "properties": {"presentation": "clear_all"}},
           {"patterns": ["/recede_historical_location"], "properties": {"presentation": "none", "mine": 1}}
         ]}
        """

    struct Case: CustomTestStringConvertible, Sendable {
        var url: String
        var platform: HotwirePlatform
        var context: HotwireContext
        var presentation: HotwirePresentation
        var native: String?
        var pullToRefresh: Bool
        var testDescription: String { "\(platform) \(url)" }
    }

    static let cases: [Case] = [
        .init(url: "http://a.test/items", platform: .ios, context: .default, presentation: .default, native: nil, pullToRefresh: true),
        .init(url: "http://a.test/items/new", platform: .ios, context: .modal, presentation: .default, native: nil, pullToRefresh: false),
        // unanchored: /modal anywhere in the path
        .init(url: "http://a.test/x/modal/y", platform: .ios, context: .modal, presentation: .default, native: nil, pullToRefresh: false),
        // $ anchors on the subject's end: iOS matches path plus query, so a query defeats /new$
        .init(url: "http://a.test/items/new?x=1", platform: .ios, context: .default, presentation: .default, native: nil, pullToRefresh: true),
        // Android matches the path alone
        .init(url: "http://a.test/items/new?x=1", platform: .android, context: .modal, presentation: .default, native: nil, pullToRefresh: false),
        // Android is case-insensitive, iOS is not
        .init(url: "http://a.test/items/NEW", platform: .android, context: .modal, presentation: .default, native: nil, pullToRefresh: false),
        .init(url: "http://a.test/items/NEW", platform: .ios, context: .default, presentation: .default, native: nil, pullToRefresh: true),
        .init(url: "http://a.test/numbers", platform: .ios, context: .default, presentation: .default, native: "numbers", pullToRefresh: true),
        .init(url: "http://a.test/numbers", platform: .android, context: .default, presentation: .default, native: "hotwire://fragment/numbers", pullToRefresh: true),
        .init(url: "http://a.test/web", platform: .android, context: .default, presentation: .default, native: nil, pullToRefresh: true),
        .init(url: "http://a.test/", platform: .ios, context: .default, presentation: .clearAll, native: nil, pullToRefresh: true),
        .init(url: "http://a.test", platform: .ios, context: .default, presentation: .clearAll, native: nil, pullToRefresh: true),
        // the built-in rule comes after the document's: its pop wins over the document's none
        .init(url: "http://a.test/recede_historical_location", platform: .ios, context: .default, presentation: .pop, native: nil, pullToRefresh: true),
        .init(url: "http://a.test/resume_historical_location", platform: .android, context: .default, presentation: .none, native: nil, pullToRefresh: true),
        .init(url: "http://a.test/refresh_historical_location", platform: .ios, context: .default, presentation: .refresh, native: nil, pullToRefresh: true),
        .init(url: "/items/new", platform: .ios, context: .modal, presentation: .default, native: nil, pullToRefresh: false),
    ]

    @Test(arguments: cases)
    func properties(_ c: Case) throws {
        let config = try HotwirePathConfiguration(text: Self.demo)
        let p = config.properties(for: c.url, platform: c.platform)
        #expect(p.context == c.context)
        #expect(p.presentation == c.presentation)
        #expect(p.nativeScreen == c.native)
        #expect(p.pullToRefreshEnabled == c.pullToRefresh)
    }

    @Test func mergedLaterWinsAndUnknownKept() throws {
        let config = try HotwirePathConfiguration(text: Self.demo)
        let raw = config.rawProperties(for: "http://a.test/recede_historical_location", platform: .ios)
        #expect(raw["mine"] == .int(1))  // kept from the document's rule
        #expect(raw["presentation"] == "pop")  // overridden by the built-in rule
        #expect(raw["historical_location"] == true)
        #expect(config.settings["screenshots_enabled"] == true)
        #expect(config.properties(for: "http://a.test/h?tab=x", platform: .ios).raw["title"] == "tab x")
        #expect(config.properties(for: "http://a.test/h?tab=x", platform: .android).raw["title"] == nil)
    }

    @Test func defaultsWithoutRules() {
        let config = HotwirePathConfiguration()
        let ios = config.properties(for: "http://a.test/x", platform: .ios)
        let android = config.properties(for: "http://a.test/x", platform: .android)
        #expect(ios.context == .default && ios.presentation == .default && ios.animated)
        #expect(ios.pullToRefreshEnabled)
        #expect(!android.pullToRefreshEnabled)
        #expect(!ios.queryStringReplace && !ios.historicalLocation)
    }

    @Test(arguments: [
        ("nope", .ios, HotwirePresentation.default),
        ("push", .ios, .default),
        ("push", .android, .push),
        ("replace_root", .ios, .replaceRoot),
        ("clear_all", .android, .clearAll),
    ] as [(String, HotwirePlatform, HotwirePresentation)])
    func presentationValues(_ value: String, _ platform: HotwirePlatform, _ expected: HotwirePresentation) throws {
        let config = try HotwirePathConfiguration(
            json: ["rules": [["patterns": [".*"], "properties": ["presentation": .string(value)]]]])
        #expect(config.properties(for: "/x", platform: platform).presentation == expected)
    }

    @Test(arguments: [
        ("[]", "a path configuration is a JSON object"),
        ("{}", "a path configuration needs 'rules'"),
        ("{\"rules\": {}}", "'rules' must be an array"),
        ("{\"rules\": [], \"settings\": 1}", "'settings' must be an object"),
        ("{\"rules\": [1]}", "rules[0] must be an object"),
        ("{\"rules\": [{}]}", "rules[0] needs 'patterns', an array of strings"),
        ("{\"rules\": [{\"patterns\": [1]}]}", "rules[0].patterns must hold strings"),
        ("{\"rules\": [{\"patterns\": [\"a\"], \"properties\": []}]}", "rules[0].properties must be an object"),
    ])
    func refused(_ text: String, _ message: String) {
        #expect(throws: HotwireConfigurationError(message)) { try HotwirePathConfiguration(text: text) }
    }

    @Test func refusesBadRegexAndNonJSON() {
        #expect(throws: HotwireConfigurationError.self) { try HotwirePathConfiguration(text: "{\"rules\": [{\"patterns\": [\"(\"]}]}") }
        #expect(throws: HotwireConfigurationError.self) { try HotwirePathConfiguration(text: "{") }
    }

    @Test func limitsAtAndOverTheLimit() throws {
        let limits = HotwirePathConfiguration.Limits(maxRules: 3, maxPatternsPerRule: 2, maxPatternBytes: 4)
        func doc(rules: Int, patterns: Int, bytes: Int) -> JSONValue {
            let pattern = JSONValue.string(String(repeating: "a", count: bytes))
            let rule: JSONValue = ["patterns": .array(Array(repeating: pattern, count: patterns))]
            return ["rules": .array(Array(repeating: rule, count: rules))]
        }
        _ = try HotwirePathConfiguration(json: doc(rules: 3, patterns: 2, bytes: 4), limits: limits)
        #expect(throws: HotwireConfigurationError("4 rules: at most 3")) {
            try HotwirePathConfiguration(json: doc(rules: 4, patterns: 2, bytes: 4), limits: limits)
        }
        #expect(throws: HotwireConfigurationError("rules[0] has 3 patterns: at most 2")) {
            try HotwirePathConfiguration(json: doc(rules: 1, patterns: 3, bytes: 4), limits: limits)
        }
        #expect(throws: HotwireConfigurationError("rules[0] has a pattern of 5 bytes: at most 4")) {
            try HotwirePathConfiguration(json: doc(rules: 1, patterns: 1, bytes: 5), limits: limits)
        }
        #expect(HotwirePathConfiguration.Limits.default == .init(maxRules: 1000, maxPatternsPerRule: 100, maxPatternBytes: 1024))
    }

    @Test(arguments: [
        ("http://a.test/p?q=1#f", HotwirePlatform.ios, "/p?q=1"),
        ("http://a.test/p?q=1#f", .android, "/p"),
        ("http://a.test", .ios, "/"),
        ("http://a.test/p?", .ios, "/p"),
        ("/p?q", .ios, "/p?q"),
    ])
    func subject(_ url: String, _ platform: HotwirePlatform, _ expected: String) {
        #expect(HotwirePathConfiguration.subject(of: url, platform: platform) == expected)
    }

    @Test func userAgent() {
        let base = "Mozilla/5.0 Chrome/140"
        #expect(HotwireUserAgent.build(base: base, platform: .ios, components: ["form", "menu"])
            == "Mozilla/5.0 Chrome/140 Hotwire Native iOS; Turbo Native iOS; bridge-components: [form menu]")
        #expect(HotwireUserAgent.build(base: base, platform: .android, components: ["form"])
            == "Hotwire Native Android; Turbo Native Android; bridge-components: [form]; Mozilla/5.0 Chrome/140")
        #expect(HotwireUserAgent.substring(platform: .ios, components: []).hasSuffix("bridge-components: []"))
        #expect(HotwireUserAgent.isValidComponentName("overflow-menu"))
        #expect(!HotwireUserAgent.isValidComponentName("a b"))
        #expect(!HotwireUserAgent.isValidComponentName(""))
        #expect(HotwireUserAgent.isValidComponentName(String(repeating: "a", count: 64)))
        #expect(!HotwireUserAgent.isValidComponentName(String(repeating: "a", count: 65)))
    }
}
