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

    @Test func everyRuleHasAnIdAndADescription() {
        #expect(Set(Rule.all.map(\.id)).count == Rule.all.count)
        #expect(Rule.all.allSatisfy { !$0.summary.isEmpty && $0.summary.hasSuffix(".") })
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
