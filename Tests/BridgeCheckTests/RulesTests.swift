import Testing
@testable import BridgeCheck

/// Logs of well-behaved and broken apps; each broken one breaks exactly its rule.
enum Logs {
    static let app = "http://127.0.0.1:3000"

    /// A PWA navigation done right: announce, wait for the reply, change the DOM, push, render.
    static func goodPush(_ t: Double, step: Int, to url: String, p: String = "P1") -> [Observation] {
        [Observation(t: t, webview: "W1", step: step, .navigateSent(url: url)),
         Observation(t: t + 3, webview: "W1", step: step, .navigateReplied(placeholder: p)),
         Observation(t: t + 4, webview: "W1", step: step, .domChanged(count: 5)),
         Observation(t: t + 4, webview: "W1", step: step, .history(how: .push, url: url)),
         Observation(t: t + 1, webview: "W1", step: step, .foregroundShown(kind: "blank")),
         Observation(t: t + 30, webview: "W1", step: step, .foregroundRemoved(reason: "rendered", latencyMs: 28)),
         Observation(t: t + 30, webview: "W1", step: step, .rendered(late: false, removed: true))]
    }

    static func goodBack(_ t: Double, step: Int, p: String = "P1", url: String) -> [Observation] {
        [Observation(t: t, webview: "W1", step: step, .back(action: "swap", placeholder: p, url: url)),
         Observation(t: t + 1, webview: "W1", step: step, .foregroundShown(kind: "placeholder")),
         Observation(t: t + 5, webview: "W1", step: step, .history(how: .pop, url: url)),
         Observation(t: t + 6, webview: "W1", step: step, .domChanged(count: 3)),
         Observation(t: t + 20, webview: "W1", step: step, .foregroundRemoved(reason: "rendered", latencyMs: 19)),
         Observation(t: t + 20, webview: "W1", step: step, .rendered(late: false, removed: true)),
         Observation(t: t + 25, webview: "W1", step: step, .location(url: url, title: "Home"))]
    }

    static var good: [Observation] {
        goodPush(100, step: 0, to: app + "/#/a") + goodBack(200, step: 1, url: app + "/") + goodPush(300, step: 2, to: app + "/#/b")
    }
}

@Suite struct RulesTests {
    let options = RuleOptions(appOrigin: Logs.app)

    func ids(_ log: [Observation], budget: Int? = nil) -> [String] {
        Rules.evaluate(log, options: RuleOptions(appOrigin: Logs.app, budgetMs: budget)).map(\.rule)
    }

    @Test func aWellBehavedAppBreaksNothing() {
        #expect(Rules.evaluate(Logs.good, options: options).isEmpty)
        // Even with a budget it keeps.
        #expect(ids(Logs.good, budget: 28) == [])
    }

    @Test func domBeforeReply() {
        var log = Logs.goodPush(100, step: 0, to: Logs.app + "/#/a")
        log[2].t = 101  // the DOM changes 1 ms after sending, 2 ms before the reply
        let f = Rules.evaluate(log, options: options)
        #expect(f.map(\.rule) == ["dom-before-reply"])
        #expect(f[0].step == 0 && f[0].webview == "W1")
        #expect(f[0].evidence.count == 3)
        #expect(f[0].evidence[0].contains("pwa-navigate"))
        // Exactly at the reply time is not before it.
        log[2].t = 103
        #expect(ids(log) == [])
    }

    @Test func pushWithoutNavigate() {
        var log = Logs.goodPush(100, step: 0, to: Logs.app + "/#/a")
        log.removeFirst(2)  // no pwa-navigate, no reply
        log.removeAll { if case .foregroundShown = $0.kind { return true }; if case .foregroundRemoved = $0.kind { return true }; return false }
        #expect(ids(log) == ["push-without-navigate"])
    }

    @Test func navigateForAPop() {
        var log = Logs.goodBack(200, step: 1, url: Logs.app + "/")
        // After popstate, the app announces the state it went back to.
        log.insert(Observation(t: 206, webview: "W1", step: 1, .navigateSent(url: Logs.app + "/")), at: 3)
        log.insert(Observation(t: 208, webview: "W1", step: 1, .navigateReplied(placeholder: "P2")), at: 4)
        #expect(ids(Logs.goodPush(100, step: 0, to: Logs.app + "/#/a") + log) == ["navigate-on-pop-or-replace"])
        // A later user navigation after a pop is fine.
        #expect(ids(Logs.good) == [])
    }

    /// Going back to the placeholder a POP's pwa-navigate stacked shows another state: that is
    /// the POP finding's consequence, not a second rule.
    @Test func aWrongPlaceholderIsNotASecondFinding() {
        var log = Logs.goodBack(200, step: 1, url: Logs.app + "/")
        log.insert(Observation(t: 206, webview: "W1", step: 1, .navigateSent(url: Logs.app + "/")), at: 3)
        log.insert(Observation(t: 208, webview: "W1", step: 1, .navigateReplied(placeholder: "P2")), at: 4)
        let later = [Observation(t: 400, webview: "W1", step: 2, .back(action: "swap", placeholder: "P2", url: Logs.app + "/#/a")),
                     Observation(t: 420, webview: "W1", step: 2, .location(url: Logs.app + "/", title: ""))]
        #expect(ids(Logs.goodPush(100, step: 0, to: Logs.app + "/#/a") + log + later) == ["navigate-on-pop-or-replace"])
        // Another placeholder showing the wrong state is still a finding.
        var other = later
        other[0] = Observation(t: 400, webview: "W1", step: 2, .back(action: "swap", placeholder: "P1", url: Logs.app + "/#/a"))
        #expect(ids(Logs.goodPush(100, step: 0, to: Logs.app + "/#/a") + log + other) == ["navigate-on-pop-or-replace", "back-wrong-state"])
    }

    @Test func navigateForAReplace() {
        var log = Logs.goodPush(100, step: 0, to: Logs.app + "/#/a")
        log[3] = Observation(t: 104, webview: "W1", step: 0, .history(how: .replace, url: Logs.app + "/#/a"))
        #expect(ids(log) == ["navigate-on-pop-or-replace"])
    }

    @Test func renderTimeoutAndLateRender() {
        var log = Logs.goodPush(100, step: 0, to: Logs.app + "/#/a")
        log[5] = Observation(t: 1101, webview: "W1", step: 0, .foregroundRemoved(reason: "timeout", latencyMs: 1000))
        log[6] = Observation(t: 1500, webview: "W1", step: 0, .rendered(late: true, removed: false))
        let f = Rules.evaluate(log, options: options)
        #expect(f.map(\.rule) == ["render-timeout"])
        #expect(f[0].evidence.last?.contains("late") == true)
        log.removeLast()
        #expect(Rules.evaluate(log, options: options).first?.evidence.last == "no pwa-rendered before the timer")
    }

    @Test func noRenderAfterBack() {
        var log = Logs.goodBack(200, step: 1, url: Logs.app + "/")
        log[4] = Observation(t: 1201, webview: "W1", step: 1, .foregroundRemoved(reason: "timeout", latencyMs: 1000))
        log.remove(at: 5)
        #expect(ids(Logs.goodPush(100, step: 0, to: Logs.app + "/#/a") + log) == ["no-render-after-back"])
    }

    @Test func backShowsTheWrongState() {
        var log = Logs.goodBack(200, step: 1, url: Logs.app + "/")
        log[6] = Observation(t: 225, webview: "W1", step: 1, .location(url: Logs.app + "/#/elsewhere", title: "?"))
        let f = Rules.evaluate(Logs.goodPush(100, step: 0, to: Logs.app + "/#/a") + log, options: options)
        #expect(f.map(\.rule) == ["back-wrong-state"])
        #expect(f[0].message.contains("#/elsewhere"))
    }

    @Test func externalLinkTrap() {
        let log = [Observation(t: 5, webview: "W2", step: 0, .webviewOpened(url: "http://other.example:8000/page"))]
        #expect(ids(log) == ["external-link-trap"])
        // Same origin, custom schemes and links sent outside are fine.
        #expect(ids([Observation(t: 5, webview: "W2", step: 0, .webviewOpened(url: Logs.app + "/classic.html")),
                     Observation(t: 6, webview: "W3", step: 0, .webviewOpened(url: "os://settings")),
                     Observation(t: 7, webview: "W1", step: 0, .externalOpen(url: "http://other.example/"))]) == [])
    }

    @Test func pageErrors() {
        let log = Logs.good + [Observation(t: 400, webview: "W1", step: 2, .exception(message: "TypeError: x is undefined")),
                               Observation(t: 401, webview: "W1", step: 2, .consoleError(message: "boom"))]
        #expect(ids(log) == ["page-error", "page-error"])
    }

    @Test func renderBudgetOnlyWithABudget() {
        #expect(ids(Logs.good, budget: 27) == ["render-budget", "render-budget"])
        #expect(ids(Logs.good) == [])
    }

    @Test func everyRuleHasAnIdADescriptionAndAdvice() {
        #expect(Set(Rule.all.map(\.id)).count == Rule.all.count)
        #expect(Rule.all.allSatisfy { !$0.summary.isEmpty && $0.summary.hasSuffix(".") })
        #expect(Rule.all.allSatisfy { $0.advice?.text.isEmpty == false })
        // The rules a router's hook fixes show where pwa-navigate and pwa-rendered go.
        for r in [Rule.pushWithoutNavigate, .domBeforeReply, .backStuck] {
            #expect(r.advice?.snippet.contains("pwaNavigate") == true && r.advice?.snippet.contains("pwaRendered") == true)
        }
        #expect(Rule.externalLinkTrap.advice?.snippet.contains("external_links: open") == true)
    }

    /// The host's back does nothing (a stack of one) while the page moved on without telling it.
    static func stuck(back action: String = "none", at url: String = Logs.app + "/two/") -> [Observation] {
        [Observation(t: 1, webview: "W1", step: -1, .stack(rendering: "W1(*C)", cause: "session.create")),
         Observation(t: 2, webview: "W1", step: -1, .location(url: Logs.app + "/", title: "")),
         Observation(t: 10, webview: "W1", step: 0, .step(description: "click: a")),
         Observation(t: 12, webview: "W1", step: 0, .location(url: url, title: "")),
         Observation(t: 20, webview: "W1", step: 1, .step(description: "back")),
         Observation(t: 21, webview: "W1", step: 1, .back(action: action, placeholder: nil, url: nil)),
         Observation(t: 30, webview: "W1", step: 1, .location(url: url, title: ""))]
    }

    @Test func backStuck() {
        let f = Rules.evaluate(Self.stuck(), options: options)
        #expect(f.map(\.rule) == ["back-stuck"])
        #expect(f[0].step == 1 && f[0].message.hasPrefix("the user is stuck on /two/: the host does not know the app's history"))
        #expect(f[0].evidence.count == 3 && f[0].evidence[0].contains("back: none"))
        // At its start, a back that does nothing is just the end of the stack.
        #expect(ids(Self.stuck(at: Logs.app + "/")) == [])
        // Only the claim's trailing `?` or an empty fragment differ: the same state.
        #expect(ids(Self.stuck(at: Logs.app + "/#")) == [])
        // A back that popped something is not stuck.
        #expect(ids(Self.stuck(back: "pop")) == [])
        // A fresh session starts its web views again: W1 of the new one starts at /two/.
        let fresh = Self.stuck() .prefix(4) + [Observation(t: 15, webview: "W1", step: 1, .stack(rendering: "W1(*C)", cause: "session.create")),
                                               Observation(t: 16, webview: "W1", step: 1, .location(url: Logs.app + "/two/", title: ""))] + Self.stuck().suffix(2)
        #expect(ids(Array(fresh)) == [])
    }

    @Test func loadFailed() {
        let log = [Observation(t: 5, webview: "W2", step: 3, .loadFailed(url: Logs.app + "/gone", reason: "net::ERR_EMPTY_RESPONSE"))]
        let f = Rules.evaluate(log, options: options)
        #expect(f.map(\.rule) == ["load-failed"])
        #expect(f[0].message == "W2 could not load \(Logs.app)/gone: net::ERR_EMPTY_RESPONSE" && f[0].step == 3)
    }

    @Test func origins() {
        #expect(Rules.origin("HTTP://Example.COM:80/a?b#c") == "http://example.com:80")
        #expect(Rules.origin("/relative") == nil)
    }
}

@Suite struct NavigationTableTests {
    @Test func oneRowPerNavigationWithVerdicts() {
        var log = Logs.good
        log.append(Observation(t: 500, webview: "W2", step: 3, .webviewOpened(url: "http://other.example/x")))
        let findings = Rules.evaluate(log, options: RuleOptions(appOrigin: Logs.app))
        let rows = Navigations.rows(log, findings: findings)
        #expect(rows.map(\.kind) == [.push, .back, .push, .classic])
        #expect(rows[0].replyMs == 3 && rows[0].renderMs == 28)
        #expect(rows[1].renderMs == 19 && rows[1].to.contains("[P1]"))
        #expect(rows.prefix(3).allSatisfy { $0.verdict == "ok" })
        #expect(rows[3].verdict == "external-link-trap")
    }
}

@Suite struct EveryNavigationHasARowTests {
    @Test func unannouncedPushesReplacesAndBacksHaveRows() {
        let log = RulesTests.stuck() + [
            Observation(t: 40, webview: "W1", step: 2, .step(description: "click: b")),
            Observation(t: 41, webview: "W1", step: 2, .history(how: .push, url: Logs.app + "/three/")),
            Observation(t: 42, webview: "W1", step: 2, .history(how: .replace, url: Logs.app + "/three/?tab=1")),
        ]
        var withPush = log
        withPush.insert(Observation(t: 11, webview: "W1", step: 0, .history(how: .push, url: Logs.app + "/two/")), at: 3)
        let findings = Rules.evaluate(withPush, options: RuleOptions(appOrigin: Logs.app))
        let rows = Navigations.rows(withPush, findings: findings)
        #expect(rows.map(\.kind) == [.push, .back, .push, .replace])
        #expect(rows[0].from == Logs.app + "/" && rows[0].to == Logs.app + "/two/" && rows[0].verdict == "push-without-navigate")
        #expect(rows[1].verdict == "back-stuck" && rows[1].from == Logs.app + "/two/")
        #expect(rows[3].from == Logs.app + "/three/" && !rows[3].announced)
    }

    @Test func anAnnouncedReplaceIsOneReplaceRow() {
        var log = Logs.goodPush(100, step: 0, to: Logs.app + "/#/a")
        log[3] = Observation(t: 104, webview: "W1", step: 0, .history(how: .replace, url: Logs.app + "/#/a"))
        let rows = Navigations.rows(log, findings: [])
        #expect(rows.map(\.kind) == [.replace] && rows[0].announced && rows[0].replyMs == 3)
    }

    /// "from" of a new web view is the web view below it on the stack, not any other one.
    @Test func aNewWebViewComesFromTheOneBelowIt() {
        let log = [
            Observation(t: 1, webview: "W1", step: 0, .location(url: Logs.app + "/", title: "")),
            Observation(t: 2, webview: "W2", step: 0, .webviewOpened(url: Logs.app + "/b")),
            Observation(t: 3, step: 0, .stack(rendering: "W1(*C) W2(*C)~", cause: "navigate")),
            Observation(t: 4, webview: "W3", step: 1, .webviewOpened(url: Logs.app + "/c")),
            Observation(t: 5, step: 1, .stack(rendering: "W1(*C) W2(*C) W3(*C)~", cause: "navigate")),
            Observation(t: 6, webview: "W3", step: 2, .back(action: "pop", placeholder: nil, url: nil)),
            Observation(t: 7, step: 2, .stack(rendering: "W1(*C) W2(*C)", cause: "navigation.back")),
            Observation(t: 8, webview: "W2", step: 3, .back(action: "pop", placeholder: nil, url: nil)),
            Observation(t: 9, step: 3, .stack(rendering: "W1(*C)", cause: "navigation.back")),
            Observation(t: 10, webview: "W4", step: 4, .webviewOpened(url: Logs.app + "/d")),
            Observation(t: 11, step: 4, .stack(rendering: "W1(*C) W4(*C)~", cause: "navigate")),
        ]
        let rows = Navigations.rows(log, findings: [])
        #expect(rows.filter { $0.kind == .classic }.map(\.from) == [Logs.app + "/", Logs.app + "/b", Logs.app + "/"])
    }
}

@Suite struct ExploreReportTests {
    func report(states: [CheckReport.State]?, findings: [Finding] = [], steps: [CheckReport.StepResult] = []) -> CheckReport {
        CheckReport(url: Logs.app + "/", steps: steps, findings: findings, rows: [], budgetMs: nil, seconds: 1, states: states)
    }

    @Test func nothingExploredIsARuleOnlyWhenExploring() {
        #expect(report(states: nil).rules.contains(.nothingExplored) == false)
        #expect(report(states: []).rules.contains(.nothingExplored))
    }

    @Test func oneTestcasePerStateWithItsProblems() throws {
        let steps = [CheckReport.StepResult(index: 0, description: "click: a", stack: "W1"),
                     CheckReport.StepResult(index: 1, description: "back", stack: "W1", screenshot: "data:image/jpeg;base64,AAAA")]
        let states = [CheckReport.State(url: Logs.app + "/", via: [], steps: 0..<0, start: "the start page as loaded"),
                      CheckReport.State(url: Logs.app + "/two/", via: ["a[href=\"/two/\"]"], steps: 0..<2, start: "the start page as loaded")]
        let stuck = Finding(rule: .backStuck, step: 1, webview: "W1", t: 21, message: "the user is stuck on /two/", evidence: ["e"])
        let r = report(states: states, findings: [stuck], steps: steps)
        let junit = r.junit
        #expect(junit.components(separatedBy: "classname=\"states\"").count - 1 == 2)
        #expect(junit.contains("name=\"2. /two/ (a[href=&quot;/two/&quot;])\""))
        #expect(junit.contains("type=\"state\">back-stuck: the user is stuck on /two/"))
        #expect(junit.contains("tests=\"\(2 + r.rules.count + 2)\""))
        #expect(r.table.contains("explored 2 states:\n  1. /  (the start page)\n  2. /two/  (a[href=\"/two/\"]; from the start page as loaded)  BROKEN"))
        #expect(r.table.hasSuffix("NOT app-aware: 1 rule broken (back-stuck)\n"))
        #expect(r.table.contains("\nto fix back-stuck: The page moved to new entries the host does not know"))
        // The screen at the finding, and what to change.
        let html = r.html
        #expect(html.contains("<img class=\"screen\" alt=\"the screen after step 2\" src=\"data:image/jpeg;base64,AAAA\">"))
        #expect(html.contains("<td colspan=\"3\" class=\"advice\"><b>What to change:</b> The page moved") && html.contains("pwaNavigate"))
    }

    @Test func failedStepsAloneSaySo() {
        let r = report(states: nil, steps: [CheckReport.StepResult(index: 0, description: "click: #gone", failure: "browser-error: #gone is not visible", stack: "W1")])
        #expect(r.table.hasSuffix("NOT app-aware: 1 step failed\n"))
    }
}
