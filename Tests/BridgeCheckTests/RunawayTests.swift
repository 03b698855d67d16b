import Testing
@testable import BridgeCheck

/// What became of a page: unresponsive (a busy loop, a dialog nobody answered), crashed, a
/// navigation loop; and the dialogs a page opened, as rows of the table.
@Suite struct RunawayTests {
    let app = Logs.app

    func start() -> Observation { Observation(t: 1, step: -1, .stack(rendering: "W1(*C)", cause: "session.create")) }

    func findings(_ log: [Observation], profile: CheckProfile = .astro) -> [Finding] {
        Rules.evaluate(log, options: RuleOptions(appOrigin: app, profile: profile))
    }

    @Test func anUnresponsivePageIsOneFindingNamingItsPage() {
        let log = [start(),
                   Observation(t: 10, webview: "W2", step: 3, .unresponsive(url: app + "/menu", how: "webview.evaluate got no answer within 10 s")),
                   // The same page met again on another path (a fresh session): evidence, not a second finding.
                   start(),
                   Observation(t: 90, webview: "W2", step: 9, .unresponsive(url: app + "/menu", how: "session.screenshot got no answer within 10 s")),
                   Observation(t: 99, webview: "W3", step: 11, .unresponsive(url: app + "/busy", how: "webview.click got no answer within 10 s"))]
        for profile in CheckProfile.allCases {
            let f = findings(log, profile: profile)
            #expect(f.map(\.rule) == ["page-unresponsive", "page-unresponsive"])
            #expect(f[0].step == 3 && f[0].webview == "W2")
            #expect(f[0].message == "the page /menu in W2 stopped answering (a script that never returns, or a JavaScript dialog left open): the user sees a frozen screen")
            #expect(f[0].evidence == ["10.0 ms W2 on /menu: webview.evaluate got no answer within 10 s",
                                      "90.0 ms W2 on /menu: session.screenshot got no answer within 10 s"])
            #expect(f[1].message.hasPrefix("the page /busy in W3 stopped answering"))
            // The same log, the same verdict.
            #expect(findings(log, profile: profile) == f)
        }
    }

    @Test func aPageBlockedByADialogSaysWhichDialog() {
        let open = Observation(t: 5, webview: "W1", step: 0, .dialog(type: "alert", message: "Menu connected", url: app + "/menu"))
        let stuck = Observation(t: 20, webview: "W1", step: 0, .unresponsive(url: app + "/menu", how: "webview.evaluate got no answer within 10 s"))
        var f = findings([start(), open, stuck])
        #expect(f.map(\.rule) == ["page-unresponsive"])
        #expect(f[0].message == "the page /menu in W1 stopped answering (blocked by a JavaScript alert(\"Menu connected\") nobody answered): the user sees a frozen screen")
        // A dialog answered by the policy blocks nothing: a page that stops answering later is
        // not blamed on it.
        let closed = Observation(t: 6, webview: "W1", step: 0, .dialogClosed(type: "alert", accepted: false, by: "policy"))
        f = findings([start(), open, closed, stuck])
        #expect(f[0].message.contains("a script that never returns"))
        // A dialog alone, answered, breaks no rule.
        #expect(findings([start(), open, closed]).isEmpty)
    }

    @Test func aCrashAndATabLimitAreFindings() {
        let log = [start(),
                   Observation(t: 10, webview: "W2", step: 1, .crashed(url: app + "/heavy", reason: "the renderer ran out of memory")),
                   Observation(t: 30, webview: "W9", step: 2, .limit(name: "tabs", max: 8, url: app + "/loop")),
                   Observation(t: 31, webview: "W9", step: 2, .limit(name: "tabs", max: 8, url: app + "/loop"))]
        for profile in CheckProfile.allCases {
            let f = findings(log, profile: profile)
            #expect(f.map(\.rule) == ["page-crashed", "navigation-loop"])
            #expect(f[0].message == "the page /heavy in W2 crashed: the renderer ran out of memory")
            #expect(f[1].message == "a page kept opening web views (up to /loop): the session reached its limit of 8 live tabs; a navigation or window.open loop")
            #expect(f[1].evidence.count == 2)
        }
    }

    @Test func theNewRulesAreJudgedUnderEveryProfile() {
        for profile in CheckProfile.allCases {
            for r in Rule.runaway { #expect(profile.rules.contains(r)) }
        }
        #expect(Set(Rule.every.map(\.id)).count == Rule.every.count)
        #expect(Rule.runaway.allSatisfy { $0.summary.hasSuffix(".") && $0.advice?.text.isEmpty == false })
        #expect(Rule.pageUnresponsive.advice?.snippet.contains("alert(") == true)
    }

    @Test func eachDialogIsARowOfTheTable() {
        let log = [start(),
                   Observation(t: 2, webview: "W1", step: -1, .location(url: app + "/", title: "Home")),
                   Observation(t: 5, webview: "W1", step: 0, .dialog(type: "alert", message: "Menu connected", url: app + "/menu")),
                   Observation(t: 6, webview: "W1", step: 0, .dialogClosed(type: "alert", accepted: false, by: "policy")),
                   Observation(t: 7, webview: "W1", step: 1, .dialog(type: "confirm", message: "Leave?\nReally", url: "")),
                   Observation(t: 8, webview: "W1", step: 1, .dialogClosed(type: "confirm", accepted: true, by: "controller")),
                   Observation(t: 9, webview: "W1", step: 2, .dialog(type: "prompt", message: "Name", url: app + "/ask"))]
        let rows = Navigations.rows(log, findings: [])
        let kinds: [NavigationRow.Kind] = rows.map(\.kind)
        #expect(kinds == [.dialog, .dialog, .dialog])
        let tos: [String] = rows.map(\.to)
        #expect(tos == ["alert(\"Menu connected\") dismissed", "confirm(\"Leave? Really\") accepted by controller",
                                   "prompt(\"Name\") not answered"])
        let froms: [String] = rows.map(\.from)
        let menu = app + "/menu", home = app + "/", ask = app + "/ask"
        #expect(froms == [menu, home, ask])
        let report = CheckReport(url: app + "/", steps: [], findings: [], rows: rows, budgetMs: nil, seconds: 1)
        #expect(report.table.contains("1     W1       dialog  /menu  → alert(\"Menu connected\") dismissed"))
    }

    @Test func aLongDialogMessageIsCut() {
        let long = String(repeating: "x", count: 200)
        #expect(Rules.quoted(long).count == 82)
        #expect(Rules.quoted(long).hasSuffix("…\""))
    }
}

