import BridgeConfig
import BridgeProtocol
import Testing

@Suite struct ConfigFileTests {
    /// The repository's examples/app.yaml.
    static let examplePath: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/BridgeProtocolTests/ConfigFileTests.swift
        return parts.joined(separator: "/") + "/examples/app.yaml"
    }()

    func error(_ yaml: String, origin: String? = "http://127.0.0.1:8787") -> ConfigFileError? {
        do {
            _ = try RouterConfigFile.router(yaml: yaml, file: "app.yaml", origin: origin)
            return nil
        } catch {
            return error
        }
    }

    @Test func theExampleLoadsAndRoutes() throws {
        let router = try RouterConfigFile.loadRouter(path: Self.examplePath, origin: "http://127.0.0.1:8787")
        #expect(router.config.webBase == "http://127.0.0.1:8787/app/")
        #expect(router.tabs.map(\.name) == ["home", "deals", "settings"])
        #expect(try router.resolve("tt://products/42").screen == .webview("http://127.0.0.1:8787/app/products/42"))  // flag off
        #expect(try router.resolve("tt://settings").screen == .native("SettingsScreen"))
        #expect(try router.resolve("tt://cart").presentation == .modal)
        #expect(try router.resolve("http://127.0.0.1:8787/app/classic.html").route.name == "classic")
        #expect(try router.resolve("https://example.org/").screen == .external("https://example.org/"))
        let s = try router.makeSession(rootURL: "http://127.0.0.1:8787/app/")
        #expect(s.tree.tabs[0].items[0].id == "W1")
        #expect(s.tree.tabs[0].items[0].route == "home")
        // Another port: the path web_base follows the daemon's origin.
        let other = try RouterConfigFile.loadRouter(path: Self.examplePath, maxStackDepth: 9, origin: "http://127.0.0.1:9000")
        #expect(other.config.webBase == "http://127.0.0.1:9000/app/")
        #expect(other.config.maxStackDepth == 9)
    }

    @Test func everyFieldIsRead() throws {
        let yaml = """
            version: 1
            web_base: https://shop.example/app
            schemes:
              native: app
              web: [os, web]
            own_origins: [http://localhost:3000]
            external_links: deny
            back_behavior: initial-tab
            max_stack_depth: 12
            initial_tab: b
            tabs:
              - {name: a, url: "os://a", title: A}
              - name: b
                url: app://b
            routes:
              - name: b
                template: b
                native: B
                native_only: yes
                feature_flag: f
                title: Bee
              - name: c
                template: c/:id
                modal: true
              - name: d
                template: d
                tab: a
                title: ~
            native_screens: [B]
            feature_flags:
              f: false
            """
        let (c, _) = try RouterConfigFile.parse(yaml)
        #expect(
            c
                == RouterConfig(
                    webBase: "https://shop.example/app", nativeSchemes: ["app"], webSchemes: ["os", "web"],
                    ownOrigins: ["http://localhost:3000"], externalLinks: .deny, backBehavior: .initialTab,
                    tabs: [TabConfig(name: "a", url: "os://a", title: "A"), TabConfig(name: "b", url: "app://b")], initialTab: "b",
                    routes: [
                        RouteConfig(name: "b", template: "b", native: "B", nativeOnly: true, featureFlag: "f", title: "Bee"),
                        RouteConfig(name: "c", template: "c/:id", modal: true),
                        RouteConfig(name: "d", template: "d", tab: "a"),
                    ],
                    nativeScreens: ["B"], featureFlags: ["f": false], maxStackDepth: 12))
        let router = try RouterConfigFile.router(yaml: yaml)
        #expect(try router.resolve("web://x").screen == .webview("https://shop.example/app/x"))
        #expect(try router.resolve("http://localhost:3000/c/1").presentation == .modal)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var yaml: String
        var line: Int?
        var key: String
        var messagePart: String
        var testDescription: String { name }
    }

    static let base = "web_base: https://shop.example/app/\n"

    static let cases: [Case] = [
        .init(
            name: "bad template", yaml: base + "routes:\n  - name: a\n    template: a\n  - name: b\n    template: b\n  - name: p\n    template: \"products/:\"\n",
            line: 8, key: "routes[2].template", messagePart: "unknown parameter syntax ':'"),
        .init(
            name: "conflicting templates",
            yaml: base + "routes:\n  - name: a\n    template: products/:id\n  - name: b\n    template: products/:sku\n", line: 6,
            key: "routes[1].template", messagePart: "conflicts with routes[0]"),
        .init(name: "unknown top key", yaml: base + "tabz: []\n", line: 2, key: "tabz", messagePart: "unknown key 'tabz'"),
        .init(
            name: "unknown route key", yaml: base + "routes:\n  - name: a\n    template: a\n    natve: X\n", line: 5,
            key: "routes[0].natve", messagePart: "unknown key 'natve'"),
        .init(name: "wrong type", yaml: base + "routes: yes\n", line: 2, key: "routes", messagePart: "expected a list"),
        .init(
            name: "bool expected", yaml: base + "routes:\n  - name: a\n    template: a\n    modal: maybe\n", line: 5,
            key: "routes[0].modal", messagePart: "expected true or false"),
        .init(name: "missing web_base", yaml: "tabs: []\n", line: 1, key: "web_base", messagePart: "missing"),
        .init(name: "empty file", yaml: "", line: nil, key: "", messagePart: "empty"),
        .init(name: "not a mapping", yaml: "- a\n- b\n", line: 1, key: "", messagePart: "expected a mapping"),
        .init(name: "version", yaml: "version: 2\n" + base, line: 1, key: "version", messagePart: "version 1"),
        .init(name: "enum", yaml: base + "external_links: maybe\n", line: 2, key: "external_links", messagePart: "open, deny, push"),
        .init(name: "syntax", yaml: base + "routes:\n  - name: [a\n", line: 4, key: "", messagePart: "YAML syntax error"),
        .init(name: "duplicate key", yaml: base + "initial_tab: a\ninitial_tab: b\n", line: nil, key: "", messagePart: "duplicate key"),
        .init(
            name: "route missing template", yaml: base + "routes:\n  - name: a\n", line: 3, key: "routes[0].template",
            messagePart: "missing"),
        .init(
            name: "duplicate route", yaml: base + "routes:\n  - name: a\n    template: a\n  - name: a\n    template: b\n", line: 5,
            key: "routes[1].name", messagePart: "already defined by routes[0]"),
        .init(
            name: "unknown tab", yaml: base + "tabs:\n  - name: home\n    url: os://\nroutes:\n  - name: a\n    template: a\n    tab: hom\n",
            line: 8, key: "routes[0].tab", messagePart: "'hom' is not a tab"),
        .init(
            name: "undeclared flag", yaml: base + "routes:\n  - name: a\n    template: a\n    feature_flag: nope\n", line: 5,
            key: "routes[0].feature_flag", messagePart: "not declared in feature_flags"),
        .init(
            name: "native-only without screen", yaml: base + "routes:\n  - name: a\n    template: a\n    native: A\n    native_only: true\n",
            line: 5, key: "routes[0].native", messagePart: "not in native_screens"),
        .init(
            name: "native-only without native", yaml: base + "routes:\n  - name: a\n    template: a\n    native_only: true\n", line: 5,
            key: "routes[0].native_only", messagePart: "needs 'native'"),
        .init(name: "bad web base", yaml: "web_base: ftp://x/\n", line: 1, key: "web_base", messagePart: "http(s)"),
        .init(
            name: "tab to an external link", yaml: base + "tabs:\n  - name: x\n    url: https://elsewhere.example/\n", line: 4,
            key: "tabs[0].url", messagePart: "external link"),
        .init(
            name: "tab to an unknown route", yaml: base + "tabs:\n  - name: x\n    url: tt://nothing\n", line: 4, key: "tabs[0].url",
            messagePart: "no route matches 'nothing'"),
        .init(
            name: "bad scheme", yaml: base + "schemes:\n  native: [\"t t\"]\n", line: 3, key: "schemes.native[0]",
            messagePart: "not a valid scheme"),
        .init(name: "bad origin", yaml: base + "own_origins: [localhost]\n", line: 2, key: "own_origins[0]", messagePart: "not an origin"),
        .init(name: "flag value", yaml: base + "feature_flags:\n  a: 3\n", line: 3, key: "feature_flags.a", messagePart: "true or false"),
        .init(name: "depth", yaml: base + "max_stack_depth: 0\n", line: 2, key: "max_stack_depth", messagePart: "at least 1"),
        .init(name: "initial tab", yaml: base + "initial_tab: x\n", line: 2, key: "initial_tab", messagePart: "not a tab"),
        .init(
            name: "modal with tab",
            yaml: base + "tabs:\n  - name: t\n    url: os://\nroutes:\n  - name: a\n    template: a\n    modal: true\n    tab: t\n", line: 9,
            key: "routes[0].tab", messagePart: "modal route"),
    ]

    @Test(arguments: cases)
    func errorsNameTheLineAndTheKey(_ c: Case) {
        guard let e = error(c.yaml) else {
            Issue.record("accepted")
            return
        }
        #expect(e.file == "app.yaml")
        #expect(e.key == c.key, "\(e)")
        if let line = c.line { #expect(e.line == line, "\(e)") }
        #expect(e.message.contains(c.messagePart), "\(e)")
        #expect(e.description.hasPrefix("app.yaml:" + (e.line.map { "\($0)" } ?? "")), "\(e)")
    }

    @Test func pathWebBaseNeedsAnOrigin() {
        let e = error("web_base: /app/\n", origin: nil)
        #expect(e?.key == "web_base")
        #expect(e?.message.contains("is a path") == true)
    }

    @Test func missingFile() {
        #expect(throws: ConfigFileError.self) { try RouterConfigFile.loadRouter(path: "/nonexistent/app.yaml") }
    }

    @Test func errorDescription() {
        let e = ConfigFileError(file: "app.yaml", line: 14, column: 15, key: "routes[2].template", message: "unknown parameter syntax ':'")
        #expect(e.description == "app.yaml:14:15: routes[2].template: unknown parameter syntax ':'")
    }
}
