import Testing
@testable import BridgeCheck

/// Logs of a Capacitor app (one web view, its own routes), well-behaved and broken; each broken
/// one breaks exactly its rule of the profile.
enum CapacitorLogs {
    static let app = "https://localhost"

    static func screen(_ t: Double, _ path: String, _ digest: String, step: Int) -> Observation {
        Observation(t: t, webview: "W1", step: step, .screen(url: app + path, digest: digest))
    }

    static func start(_ path: String = "/home") -> [Observation] {
        [Observation(t: 0, step: -1, .stack(rendering: "W1(*C)", cause: "session.create")),
         screen(1, path, "start", step: -1)]
    }

    /// A tap that pushes a route of the app.
    static func tap(_ t: Double, step: Int, to path: String, digest: String) -> [Observation] {
        [Observation(t: t, step: step, .step(description: "click")),
         Observation(t: t + 1, webview: "W1", step: step, .history(how: .push, url: app + path)),
         screen(t + 2, path, digest, step: step)]
    }

    /// Android's back: its action, what the app did (`then`), the screen after (nil: none read).
    static func back(_ t: Double, step: Int, action: String, then: [Observation.Kind] = [], to: (String, String)?) -> [Observation] {
        [Observation(t: t, step: step, .step(description: "back")),
         Observation(t: t + 1, webview: "W1", step: step, .back(action: action, placeholder: nil, url: nil))]
            + then.enumerated().map { Observation(t: t + 2 + Double($0.offset), webview: "W1", step: step, $0.element) }
            + (to.map { [screen(t + 10, $0.0, $0.1, step: step)] } ?? [])
    }

    static var good: [Observation] {
        start() + tap(100, step: 0, to: "/items", digest: "items")
            + back(200, step: 1, action: "backButton", then: [.history(how: .pop, url: app + "/home")], to: ("/home", "start"))
    }

    static func call(_ plugin: String, _ method: String, id: String?, unavailable: Bool = false) -> Observation.Kind {
        .capacitorCall(plugin: plugin, method: method, callbackId: id, unavailable: unavailable)
    }
}

@Suite struct CapacitorRulesTests {
    func ids(_ log: [Observation], platform: String = "android") -> [String] {
        Rules.evaluate(log, options: RuleOptions(appOrigin: CapacitorLogs.app, profile: .capacitor, platform: platform)).map(\.rule)
    }

    func findings(_ log: [Observation], platform: String = "android") -> [Finding] {
        Rules.evaluate(log, options: RuleOptions(appOrigin: CapacitorLogs.app, profile: .capacitor, platform: platform))
    }

    @Test func aWellBehavedAppBreaksNothing() {
        #expect(ids(CapacitorLogs.good) == [])
        #expect(ids(CapacitorLogs.good, platform: "ios") == [])
    }

    /// History pushes without pwa-navigate are how a one-web-view app routes: the Astro rules
    /// are not judged.
    @Test func theAstroRulesDoNotApply() {
        let log = CapacitorLogs.start() + CapacitorLogs.tap(100, step: 0, to: "/items", digest: "items")
            + [Observation(t: 150, step: 0, .foregroundShown(kind: "blank")), Observation(t: 1200, step: 0, .foregroundRemoved(reason: "timeout", latencyMs: 1000))]
        #expect(ids(log) == [])
        #expect(Rule.capacitor.map(\.id) == ["back-exits-app", "back-does-nothing", "deep-link-ignored", "plugin-rejection-unhandled", "plugin-unavailable",
                                             "page-error", "load-failed", "page-unresponsive", "page-crashed", "navigation-loop", "nothing-explored"])
        for rule in Rule.capacitor { #expect(Rule.named(rule.id) == rule) }
        for rule in Rule.capacitor where !Rule.all.contains(rule) { #expect(rule.advice != nil, "\(rule.id) has advice") }
    }

    /// Table: the hardware back at an inner route, what the app did, the rule it breaks (Android).
    @Test(arguments: [
        ("backButton", [Observation.Kind](), ("/items", "items") as (String, String)?, ["back-does-nothing"]),
        ("none", [], ("/items", "items"), ["back-does-nothing"]),
        ("goBack", [], ("/items", "items"), ["back-does-nothing"]),
        ("backButton", [CapacitorLogs.call("App", "exitApp", id: "9"), .sessionEnded(reason: "exit-app")], nil, ["back-exits-app"]),
        ("backButton", [CapacitorLogs.call("App", "minimizeApp", id: "9")], ("/items", "items"), ["back-exits-app"]),
        ("background", [], ("/items", "items"), ["back-exits-app"]),
        // The url stayed but the screen changed (a modal closed, a tab's own stack): it did something.
        ("backButton", [], ("/items", "items-list"), []),
        ("goBack", [], ("/home", "start"), []),
        ("closeBrowser", [], ("/items", "items"), []),
    ] as [(String, [Observation.Kind], (String, String)?, [String])])
    func backAtAnInnerRoute(action: String, then: [Observation.Kind], to: (String, String)?, broken: [String]) {
        let log = CapacitorLogs.start() + CapacitorLogs.tap(100, step: 0, to: "/items", digest: "items")
            + CapacitorLogs.back(200, step: 1, action: action, then: then, to: to)
        #expect(ids(log) == broken)
        // iOS has no hardware back: nothing of it is judged.
        #expect(ids(log, platform: "ios") == [])
    }

    /// At the start screen a back may leave the app (Android's root), or do nothing.
    @Test func backAtTheStartIsNotJudged() {
        let exits = CapacitorLogs.start() + CapacitorLogs.back(100, step: 0, action: "backButton",
                                                                then: [CapacitorLogs.call("App", "exitApp", id: "9"), .sessionEnded(reason: "exit-app")], to: nil)
        #expect(ids(exits) == [])
        let nothing = CapacitorLogs.start() + CapacitorLogs.back(100, step: 0, action: "none", to: ("/home", "start"))
        #expect(ids(nothing) == [])
        // A fresh session starts again: its start screen is its own first screen.
        let fresh = CapacitorLogs.start() + CapacitorLogs.tap(100, step: 0, to: "/items", digest: "items") + CapacitorLogs.start("/items")
            + CapacitorLogs.back(300, step: 1, action: "none", to: ("/items", "start"))
        #expect(ids(fresh) == [])
    }

    @Test func theBackFindingsCarryTheirEvidence() {
        let log = CapacitorLogs.start() + CapacitorLogs.tap(100, step: 0, to: "/items", digest: "items")
            + CapacitorLogs.back(200, step: 1, action: "backButton", then: [CapacitorLogs.call("App", "exitApp", id: "9"), .sessionEnded(reason: "exit-app")], to: nil)
        let f = findings(log)
        #expect(f.count == 1)
        #expect(f[0].step == 1 && f[0].message == "Android's back at the inner route /items left the app: the app exited (App.exitApp)")
        #expect(f[0].evidence.contains { $0.contains("the screen: https://localhost/items (the start screen: https://localhost/home)") })
        #expect(f[0].evidence.contains { $0.contains("hardware back (navigation.back): backButton (the app's backButton listener got it)") })
        #expect(f[0].evidence.contains { $0.contains("the app called App.exitApp()") })
        #expect(f[0].evidence.contains { $0.contains("session.closed: exit-app") })
    }

    /// Table: a deep link to a route the app has, delivered or not, and the screen after it.
    @Test(arguments: [
        (true, ("/home", "start") as (String, String)?, ["deep-link-ignored"]),
        (true, ("/items", "items"), []),
        // Not delivered: the app has no appUrlOpen listener (native keeps the link): not judged.
        (false, ("/home", "start"), []),
        // The same url, another screen: the app reacted.
        (true, ("/home", "a banner"), []),
    ] as [(Bool, (String, String)?, [String])])
    func deepLinks(delivered: Bool, to: (String, String)?, broken: [String]) {
        let log = CapacitorLogs.start()
            + [Observation(t: 100, step: 0, .step(description: "deeplink")),
               Observation(t: 101, webview: "W1", step: 0, .deepLink(url: CapacitorLogs.app + "/items", delivered: delivered))]
            + (to.map { [CapacitorLogs.screen(110, $0.0, $0.1, step: 0)] } ?? [])
        #expect(ids(log) == broken)
        #expect(ids(log, platform: "ios") == broken)
        if !broken.isEmpty {
            let f = findings(log)[0]
            #expect(f.message == "the deep link https://localhost/items (a route the app has) left the screen unchanged on /home")
            #expect(f.evidence.contains { $0.contains("navigation.openUrl {url: https://localhost/items}") })
        }
    }

    /// A rejection native sent that the app did not catch is the plugin rule's, not a page error;
    /// a caught one is nothing; an unhandled rejection of something else stays a page error.
    @Test(arguments: [
        ("Must provide key", ["plugin-rejection-unhandled"]),
        ("Something else broke", ["page-error"]),
        (nil, []),
    ] as [(String?, [String])])
    func rejections(unhandled: String?, broken: [String]) {
        var log = CapacitorLogs.start()
            + [Observation(t: 100, step: 0, .step(description: "click")),
               Observation(t: 101, webview: "W1", step: 0, CapacitorLogs.call("Preferences", "get", id: "12")),
               Observation(t: 102, webview: "W1", step: 0, .capacitorResult(plugin: "Preferences", method: "get", callbackId: "12", success: false,
                                                                             error: "Must provide key", code: nil))]
        if let unhandled { log.append(Observation(t: 5, webview: "W1", step: 0, .exception(message: "unhandled rejection: " + unhandled))) }
        #expect(ids(log) == broken)
        if broken == ["plugin-rejection-unhandled"] {
            let f = findings(log)[0]
            #expect(f.message == "Preferences.get() was rejected (Must provide key) and the app did not handle it: an unhandled rejection in W1")
            #expect(f.evidence == ["101.0 ms capacitor.call Preferences.get() {callbackId: 12}",
                                   "102.0 ms capacitor.result {callbackId: 12, success: false, error: {message: Must provide key}}",
                                   "5.0 ms (page) unhandled rejection: Must provide key"])
        }
    }

    /// A plugin the session does not have: once per plugin and method; its unhandled rejection
    /// is its evidence. A call native has no answer of its own for (it has a callbackId) is not.
    @Test func unavailablePlugins() {
        let log = CapacitorLogs.start()
            + [Observation(t: 100, step: 0, .step(description: "click")),
               Observation(t: 101, webview: "W1", step: 0, CapacitorLogs.call("BarcodeScanner", "scan", id: nil, unavailable: true)),
               Observation(t: 102, webview: "W1", step: 0, CapacitorLogs.call("BarcodeScanner", "scan", id: nil, unavailable: true)),
               Observation(t: 103, webview: "W1", step: 0, CapacitorLogs.call("Camera", "getPhoto", id: "7", unavailable: true)),
               Observation(t: 104, webview: "W1", step: 0, .capacitorResult(plugin: "Camera", method: "getPhoto", callbackId: "7", success: false,
                                                                             error: "Camera.getPhoto() is not available", code: "UNAVAILABLE")),
               Observation(t: 6, webview: "W1", step: 0, .exception(message: "unhandled rejection: \"BarcodeScanner\" plugin is not implemented on android"))]
        let f = findings(log)
        #expect(f.map(\.rule) == ["plugin-unavailable"])
        #expect(f[0].message == "the app called BarcodeScanner.scan() but the device has no BarcodeScanner plugin (not implemented on the platform)")
        #expect(f[0].evidence.count == 3)
        #expect(f[0].evidence.last == "6.0 ms (page) unhandled rejection: \"BarcodeScanner\" plugin is not implemented on android")
    }

    @Test func pageErrorsLoadsAndRunawaysAreJudged() {
        let log = CapacitorLogs.start()
            + [Observation(t: 5, webview: "W1", step: 0, .exception(message: "TypeError: x is undefined")),
               Observation(t: 100, webview: "W1", step: 0, .loadFailed(url: CapacitorLogs.app + "/x", reason: "net::ERR_FAILED")),
               Observation(t: 110, webview: "W1", step: 0, .crashed(url: CapacitorLogs.app + "/x", reason: "oom"))]
        #expect(Set(ids(log)) == ["page-error", "load-failed", "page-crashed"])
    }
}

extension CapacitorRulesTests {
    /// The same route's back that did nothing again (on another path) is one finding.
    @Test func aBackFindingOncePerRoute() {
        let log = CapacitorLogs.start() + CapacitorLogs.tap(100, step: 0, to: "/items", digest: "items")
            + CapacitorLogs.back(200, step: 1, action: "backButton", to: ("/items", "items"))
            + CapacitorLogs.back(300, step: 2, action: "backButton", to: ("/items", "items"))
        let f = findings(log)
        #expect(f.map(\.rule) == ["back-does-nothing"])
        #expect(f[0].evidence.last == "the same again at step 3")
    }
}

extension CapacitorRulesTests {
    /// The report names the rules judged: on iOS, not the hardware back's.
    @Test func theReportsRulesPerPlatform() {
        var report = CheckReport(url: CapacitorLogs.app + "/", steps: [], findings: [], rows: [], budgetMs: nil, seconds: 1, states: [])
        report.profile = .capacitor
        report.platform = "android"
        #expect(report.rules.count == 11)
        report.platform = "ios"
        #expect(report.rules.map(\.id) == ["deep-link-ignored", "plugin-rejection-unhandled", "plugin-unavailable",
                                           "page-error", "load-failed", "page-unresponsive", "page-crashed", "navigation-loop", "nothing-explored"])
    }
}
