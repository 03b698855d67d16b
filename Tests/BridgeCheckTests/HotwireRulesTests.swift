import enum BridgeProtocol.JSONValue
import struct BridgeProtocol.JSONObject
import Testing
@testable import BridgeCheck

/// Logs of a Turbo app in a hotwire-native session, well-behaved and broken; each broken one
/// breaks exactly its rule of the profile.
enum HotwireLogs {
    static let app = "http://127.0.0.1:3000"

    static func turbo(_ t: Double, _ name: String, id: String? = nil, location: String? = nil, action: String? = nil,
                      status: Int? = nil, error: String? = nil, step: Int, webview: String = "W1") -> Observation {
        Observation(t: t, webview: webview, step: step,
                    .turbo(name: name, identifier: id, location: location, action: action, statusCode: status, error: error))
    }

    /// A tap on an in-app link: Turbo proposes, native pushes, the visit renders.
    static func visit(_ t: Double, step: Int, to url: String, id: String) -> [Observation] {
        [Observation(t: t, step: step, .step(description: "click")),
         turbo(t + 1, "visitProposed", location: url, action: "advance", step: step),
         Observation(t: t + 2, step: step, .stack(rendering: "P1 W1(*C)", cause: "hotwire:default:push")),
         turbo(t + 3, "visitStarted", id: id, location: url, step: step),
         turbo(t + 4, "visitRequestStarted", id: id, step: step),
         turbo(t + 20, "visitRequestCompleted", id: id, step: step),
         turbo(t + 30, "visitRendered", id: id, step: step),
         Observation(t: t + 40, webview: "W1", step: step, .location(url: url, title: ""))]
    }

    /// Native back: a pop, then the restore visit of the screen uncovered.
    static func back(_ t: Double, step: Int, to url: String, id: String) -> [Observation] {
        [Observation(t: t, step: step, .step(description: "back")),
         Observation(t: t + 1, webview: "W1", step: step, .back(action: "pop", placeholder: "P1", url: url)),
         turbo(t + 2, "visitStarted", id: id, location: url, action: "restore", step: step),
         turbo(t + 10, "visitRendered", id: id, step: step),
         Observation(t: t + 20, webview: "W1", step: step, .location(url: url, title: ""))]
    }

    static var good: [Observation] {
        [Observation(t: 0, step: -1, .stack(rendering: "W1(*C)", cause: "session.create"))]
            + visit(100, step: 0, to: app + "/one", id: "v1") + back(200, step: 1, to: app + "/", id: "v2")
    }
}

@Suite struct HotwireRulesTests {
    let options = RuleOptions(appOrigin: HotwireLogs.app, profile: .hotwireNative, visitTimeoutMs: 1000)

    func ids(_ log: [Observation], budget: Int? = nil) -> [String] {
        var o = options
        o.budgetMs = budget
        return Rules.evaluate(log, options: o).map(\.rule)
    }

    @Test func aWellBehavedTurboAppBreaksNothing() {
        #expect(ids(HotwireLogs.good) == [])
        #expect(ids(HotwireLogs.good, budget: 27) == [])
    }

    /// The Astro rules do not judge a Hotwire app: unannounced pushes and a back that did
    /// nothing are how Turbo and native back work there.
    @Test func theAstroRulesDoNotApply() {
        let log = HotwireLogs.good + [
            Observation(t: 300, webview: "W1", step: 2, .history(how: .push, url: HotwireLogs.app + "/two")),
            Observation(t: 310, webview: "W1", step: 2, .back(action: "none", placeholder: nil, url: nil)),
            Observation(t: 320, webview: "W1", step: 2, .location(url: HotwireLogs.app + "/two", title: "")),
        ]
        #expect(ids(log) == [])
        // The same log under the Astro profile breaks its rules.
        let astro = Rules.evaluate(log, options: RuleOptions(appOrigin: HotwireLogs.app)).map(\.rule)
        #expect(astro.contains("push-without-navigate") && astro.contains("back-stuck"))
        #expect(CheckProfile.hotwireNative.rules.map(\.id) == ["visit-not-rendered", "back-wrong-page", "visit-failed", "cold-boot-link",
                                                              "bridge-message-ignored", "page-error", "load-failed", "page-unresponsive",
                                                              "page-crashed", "navigation-loop", "render-budget", "nothing-explored"])
    }

    @Test func aVisitThatNeverRenders() {
        var log = HotwireLogs.visit(100, step: 0, to: HotwireLogs.app + "/stuck", id: "v1")
        log.removeAll { if case .turbo("visitRendered", _, _, _, _, _) = $0.kind { return true } else { return false } }
        let f = Rules.evaluate(log, options: options)
        #expect(f.map(\.rule) == ["visit-not-rendered"])
        #expect(f[0].step == 0 && f[0].webview == "W1")
        #expect(f[0].message == "the Turbo visit of /stuck in W1 never rendered (none within 1000.0 ms (--timeout-s), the check waited for it)")
        #expect(f[0].evidence == ["103.0 ms visitStarted {identifier: v1, location: \(HotwireLogs.app)/stuck}",
                                  "104.0 ms visitRequestStarted", "120.0 ms visitRequestCompleted",
                                  "no visitRendered for v1 (none within 1000.0 ms (--timeout-s), the check waited for it)"])
    }

    @Test func aVisitRenderedPastTheTimeoutOrAtIt() {
        var log = HotwireLogs.visit(100, step: 0, to: HotwireLogs.app + "/slow", id: "v1")
        log[6].t = 103 + 1000.5
        #expect(ids(log) == ["visit-not-rendered"])
        #expect(Rules.evaluate(log, options: options)[0].message.contains("rendered only after 1000.5 ms, past the timeout of 1000.0 ms"))
        log[6].t = 103 + 1000  // at the timeout: in time
        #expect(ids(log) == [])
        // A budget below it is render-budget.
        #expect(ids(log, budget: 999) == ["render-budget"])
        #expect(ids(log, budget: 1000) == [])
    }

    /// A visit Turbo cancels for another (a redirect, a second tap) is no finding; a failed
    /// visit is visit-failed's, not this rule's.
    @Test func supersededAndFailedVisitsAreNotUnrendered() {
        let superseded = [HotwireLogs.turbo(100, "visitStarted", id: "v1", location: HotwireLogs.app + "/follow", step: 0)]
            + HotwireLogs.visit(110, step: 0, to: HotwireLogs.app + "/redirected", id: "v2")
        #expect(ids(superseded) == [])
        // In another web view it is not superseded.
        var other = superseded
        other[0].webview = "W2"
        #expect(ids(other) == ["visit-not-rendered"])
        // A session closed with a visit open: never rendered.
        let closed = [HotwireLogs.turbo(100, "visitStarted", id: "v1", location: HotwireLogs.app + "/x", step: 0),
                      Observation(t: 200, step: 1, .stack(rendering: "W1(*C)", cause: "session.create"))]
        #expect(Rules.evaluate(closed, options: options).map(\.message) == ["the Turbo visit of /x in W1 never rendered (the session was closed first)"])
    }

    @Test func aFailedVisitOncePerUrlAndStatus() {
        var log = HotwireLogs.visit(100, step: 0, to: HotwireLogs.app + "/missing", id: "v1")
        log[6] = HotwireLogs.turbo(125, "visitRequestFailed", id: "v1", location: HotwireLogs.app + "/missing", status: 404, step: 0)
        let f = Rules.evaluate(log, options: options)
        #expect(f.map(\.rule) == ["visit-failed"])
        #expect(f[0].message == "the Turbo visit of /missing in W1 failed: HTTP 404")
        #expect(f[0].evidence == ["103.0 ms visitStarted {identifier: v1, location: \(HotwireLogs.app)/missing}",
                                  "125.0 ms visitRequestFailed {location: \(HotwireLogs.app)/missing, statusCode: 404}",
                                  "native puts the screen in its error state (its item's error: {statusCode: 404})"])
        // The same failure again (a restore of the failed screen) is the same finding; a network error is another.
        let again = log + [HotwireLogs.turbo(300, "visitRequestFailed", id: "v3", location: HotwireLogs.app + "/missing", status: 404, step: 2),
                           HotwireLogs.turbo(400, "visitRequestFailedWithNonHttpStatusCode", id: "v4", location: HotwireLogs.app + "/gone", status: 0, step: 3)]
        let g = Rules.evaluate(again, options: options)
        #expect(g.map(\.rule) == ["visit-failed", "visit-failed"])
        #expect(g[1].message == "the Turbo visit of /gone in W1 failed: no HTTP answer (a network error or a redirect to another origin)")
    }

    @Test func backRestoresTheWrongPage() {
        var log = HotwireLogs.good
        log[log.count - 1] = Observation(t: 220, webview: "W1", step: 1, .location(url: HotwireLogs.app + "/elsewhere", title: ""))
        let f = Rules.evaluate(log, options: options)
        #expect(f.map(\.rule) == ["back-wrong-page"])
        #expect(f[0].step == 1)
        #expect(f[0].message == "after native back W1 shows /elsewhere instead of /")
        #expect(f[0].evidence == ["201.0 ms native back: pop (P1 removed), W1 uncovers the screen of \(HotwireLogs.app)/",
                                  "202.0 ms restore visit started: \(HotwireLogs.app)/",
                                  "220.0 ms the page's location: \(HotwireLogs.app)/elsewhere"])
        // A back to a native screen (no url) or a back that did nothing judges no page.
        var native = log
        native[native.count - 4] = Observation(t: 201, webview: "W1", step: 1, .back(action: "pop", placeholder: "N1", url: nil))
        #expect(ids(native) == [])
        // A trailing `?` alone is the same page.
        var same = HotwireLogs.good
        same[same.count - 1] = Observation(t: 220, webview: "W1", step: 1, .location(url: HotwireLogs.app + "/?", title: ""))
        #expect(ids(same) == [])
    }

    @Test func aNewDocumentOfTheAppIsAColdBoot() {
        let load = Observation(t: 50, webview: "W1", step: 0, .documentLoad(url: HotwireLogs.app + "/plain", via: "a tap on a#plain[data-turbo=\"false\"]"))
        let pushed = Observation(t: 60, step: 0, .stack(rendering: "P1 W1(*C)", cause: "hotwire:default:push"))
        // The page's log is read after the step's controller events: the stack change comes first.
        #expect(Rules.evaluate([pushed, load], options: options) == Rules.evaluate([load, pushed], options: options))
        let f = Rules.evaluate([pushed, load], options: options)
        #expect(f.map(\.rule) == ["cold-boot-link"])
        #expect(f[0].message == "W1 loaded /plain as a new document (a tap on a#plain[data-turbo=\"false\"]) instead of a Turbo visit")
        #expect(f[0].evidence.last == "native got no visitProposed for it; the stack became P1 W1(*C) (hotwire:default:push)")
        // The same host on another port is the app (native's same-host rule); another host is not.
        let port = Observation(t: 50, webview: "W1", step: 0, .documentLoad(url: "http://127.0.0.1:4000/x", via: "a script"))
        let other = Observation(t: 50, webview: "W1", step: 0, .documentLoad(url: "http://example.com/", via: "a script"))
        #expect(ids([port]) == ["cold-boot-link"])
        #expect(ids([other]) == [])
    }

    @Test func aBridgeMessageNativeIgnores() {
        let kept = Observation(t: 10, webview: "W1", step: 0, .bridgeMessage(component: "form", event: "connect", url: HotwireLogs.app + "/bridge", ignored: false, reason: nil))
        let dropped = Observation(t: 20, webview: "W1", step: 0, .bridgeMessage(component: "form", event: "connect", url: HotwireLogs.app + "/",
                                                                                ignored: true, reason: "data.metadata.url \(HotwireLogs.app)/ is not the web view's url \(HotwireLogs.app)/bridge"))
        #expect(ids([kept]) == [])
        let f = Rules.evaluate([kept, dropped], options: options)
        #expect(f.map(\.rule) == ["bridge-message-ignored"])
        #expect(f[0].message == "native ignores the form component's connect message in W1: data.metadata.url \(HotwireLogs.app)/ is not the web view's url \(HotwireLogs.app)/bridge")
        #expect(f[0].evidence[0] == "20.0 ms bridge.message {component: form, event: connect, data.metadata.url: \(HotwireLogs.app)/}")
    }

    /// iOS's errorRaised joins the probe's finding for the same error; alone it is one of its own.
    @Test func pageErrorsAndErrorRaised() {
        let thrown = Observation(t: 5, webview: "W1", step: 0, .exception(message: "Uncaught Error: boom"))
        let raised = HotwireLogs.turbo(30, "errorRaised", error: "Uncaught Error: boom (x.js:1:1)", step: 0)
        let f = Rules.evaluate([thrown, raised], options: options)
        #expect(f.map(\.rule) == ["page-error"])
        #expect(f[0].evidence == ["5.0 ms uncaught: Uncaught Error: boom", "30.0 ms errorRaised {error: Uncaught Error: boom (x.js:1:1)} (native got it)"])
        #expect(Rules.evaluate([raised], options: options).map(\.message) == ["uncaught exception in W1: Uncaught Error: boom (x.js:1:1)"])
    }

    /// Turbo pushes the url a native back restores: that history change is the back's row.
    @Test func aRestoreVisitIsPartOfItsBackRow() {
        let log = HotwireLogs.good + [Observation(t: 215, webview: "W1", step: 1, .history(how: .push, url: HotwireLogs.app + "/"))]
        let rows = Navigations.rows(log, findings: [], profile: .hotwireNative)
        #expect(rows.map(\.kind) == [.back])
        #expect(rows[0].to == HotwireLogs.app + "/ [P1]")
        // Its render time is the restore visit's (visitStarted at 202, visitRendered at 210).
        #expect(rows[0].renderMs == 8)
        // A push's is its visit's: the visit of /one, 103 to 130.
        let pushed = HotwireLogs.good + [Observation(t: 135, webview: "W1", step: 0, .history(how: .push, url: HotwireLogs.app + "/one"))]
        #expect(Navigations.rows(pushed, findings: [], profile: .hotwireNative).map(\.renderMs) == [8, 27])
        #expect(Navigations.rows(log, findings: []).map(\.kind) == [.back, .push])
    }

    /// A native screen pushed is a row (the screen, from the page below it); a modal's web view
    /// is a row from the main stack's top it was presented over.
    @Test func nativePushesAndModalsHaveTheirRows() {
        let app = HotwireLogs.app
        let log = HotwireLogs.good + [
            Observation(t: 300, step: 2, .step(description: "click")),
            Observation(t: 301, webview: "N1", step: 2, .nativePushed(url: app + "/numbers", screen: "numbers", from: app + "/")),
            Observation(t: 400, step: 3, .step(description: "click")),
            Observation(t: 401, webview: "W2", step: 3, .webviewOpened(url: app + "/new", from: app + "/")),
        ]
        let rows = Navigations.rows(log, findings: [], profile: .hotwireNative).filter { $0.step >= 2 }
        #expect(rows == [
            NavigationRow(step: 2, webview: "N1", from: app + "/", to: app + "/numbers [numbers]", kind: .native, verdict: "ok"),
            NavigationRow(step: 3, webview: "W2", from: app + "/", to: app + "/new", kind: .classic, verdict: "ok"),
        ])
        var report = CheckReport(url: app + "/", steps: [], findings: [], rows: rows, budgetMs: nil, seconds: 1)
        report.profile = .hotwireNative
        let lines = report.table.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.contains("3 N1 native / → /numbers [numbers] - - ok"), "\(report.table)")
        #expect(lines.contains("4 W2 classic / → /new - - ok"), "\(report.table)")
        // Without a screen name, the url alone; without the item below, "?".
        let bare = Navigations.rows([Observation(t: 1, webview: "N2", step: 0, .nativePushed(url: app + "/x", screen: nil, from: nil))], findings: [])
        #expect(bare.map(\.to) == [app + "/x"] && bare.map(\.from) == ["?"])
    }

    /// The runner's reading of `stack.changed`'s tree: the native items it did not show before
    /// (with the url below each), and the main stack's top.
    @Test func theTreeNamesNativePushesAndTheMainTop() throws {
        let app = HotwireLogs.app
        func item(_ id: String, _ kind: String, _ path: String, screen: String? = nil) -> JSONValue {
            var o: JSONObject = ["id": .string(id), "kind": .string(kind), "url": .string(app + path)]
            if let screen { o["screen"] = .string(screen) }
            return .object(o)
        }
        func tree(_ main: [JSONValue], modal: [JSONValue] = []) -> JSONValue {
            ["tabs": [["name": "main", "stack": .array(main)]], "activeTab": "main", "modal": modal.isEmpty ? .null : .array(modal),
             "drawer": "closed", "active": modal.isEmpty ? "tab:main" : "modal"]
        }
        let before = tree([item("P1", "placeholder", "/"), item("W1", "webview", "/one")])
        let after = tree([item("P1", "placeholder", "/"), item("P2", "placeholder", "/one"), item("N1", "native", "/numbers", screen: "numbers")])
        let pushes = Navigations.nativePushes(before: before, after: after)
        #expect(pushes.map(\.id) == ["N1"] && pushes.map(\.url) == [app + "/numbers"] && pushes.map(\.screen) == ["numbers"])
        #expect(pushes.map(\.from) == [app + "/one"])
        // Seen once: the same tree again pushes nothing; a native item at the bottom of a stack has nothing below.
        #expect(Navigations.nativePushes(before: after, after: after).isEmpty)
        let first = Navigations.nativePushes(before: nil, after: tree([item("N3", "native", "/settings")]))
        #expect(first.map(\.id) == ["N3"] && first.map(\.from) == [nil] && first.map(\.screen) == [nil])
        // The main top under a modal is the page it was presented over.
        #expect(Navigations.mainTop(tree([item("P1", "placeholder", "/"), item("W1", "webview", "/one")], modal: [item("W2", "webview", "/new")])) == app + "/one")
        #expect(Navigations.mainTop(nil) == nil && Navigations.mainTop(tree([])) == nil)
    }

    @Test func aReportOfTheProfileListsItsRules() {
        var r = CheckReport(url: HotwireLogs.app + "/", steps: [], findings: [], rows: [], budgetMs: nil, seconds: 1)
        r.profile = .hotwireNative
        #expect(r.rules.map(\.id) == ["visit-not-rendered", "back-wrong-page", "visit-failed", "cold-boot-link",
                                      "bridge-message-ignored", "page-error", "load-failed", "page-unresponsive", "page-crashed",
                                      "navigation-loop"])
        #expect(r.junit.contains("cold-boot-link") && !r.junit.contains("push-without-navigate"))
        #expect(r.html.contains("profile <code>hotwire-native</code>"))
        #expect(r.table.hasSuffix("app-aware: 10 rules kept over 0 navigations and 0 steps\n"))
        r.findings = [Finding(rule: .coldBootLink, step: 0, webview: "W1", t: 1, message: "m", evidence: ["e"])]
        #expect(r.table.contains("to fix cold-boot-link: Let Turbo take in-app links"))
        r.profile = .astro
        #expect(!r.html.contains("profile <code>"))
    }

    @Test func everyHotwireRuleHasAdviceAndIsNamed() {
        for rule in Rule.hotwire where rule != .nothingExplored && rule != .pageError && rule != .loadFailed && rule != .renderBudget {
            #expect(rule.advice?.text.isEmpty == false, "\(rule.id)")
        }
        #expect(Rule.named("cold-boot-link") == .coldBootLink)
        #expect(Rule.named("dom-before-reply") == .domBeforeReply)
        #expect(Set(Rule.every.map(\.id)).count == Rule.every.count)
    }
}
