import Foundation
import Testing
@testable import BridgeCheck

@Suite struct StepsTests {
    @Test func everyStepKind() throws {
        let steps = try Steps.parse("""
            steps:
              - click: "a[href='#/products']"
              - type: {selector: "#q", text: "shoes"}
              - back
              - navigate: http://127.0.0.1:3000/classic.html
              - deeplink: tt://settings
              - wait: rendered
              - wait: 250
              - expect: {stack: "P1 W1(*P)", url: "http://127.0.0.1:3000/#/products", title: Products}
            """)
        #expect(steps == [.click("a[href='#/products']"), .type(selector: "#q", text: "shoes"), .back,
                          .navigate("http://127.0.0.1:3000/classic.html"), .deeplink("tt://settings"), .waitRendered, .waitMs(250),
                          .expect(stack: "P1 W1(*P)", url: "http://127.0.0.1:3000/#/products", title: "Products")])
        // A bare list works too.
        #expect(try Steps.parse("- back\n- back: \n") == [.back, .back])
    }

    @Test func errorsNameTheStepAndLine() {
        func message(_ yaml: String) -> String {
            do { _ = try Steps.parse(yaml); return "accepted" } catch { return error.message }
        }
        #expect(message("- click: a\n- jump: b\n").contains("step 2 (line 2): unknown step `jump`"))
        #expect(message("- forward\n").contains("unknown step \"forward\""))
        #expect(message("- wait: soon\n").contains("`wait` is `rendered` or a number"))
        #expect(message("- type: {selector: a}\n").contains("`type` needs {selector: CSS, text: TEXT}"))
        #expect(message("- expect: {}\n").contains("at least one"))
        #expect(message("- expect: {stak: W1}\n").contains("no `stak`"))
        #expect(message("- click: \"\"\n").contains("needs a CSS selector"))
        #expect(message("").contains("empty"))
        #expect(message("a: [").contains("not valid YAML"))
        #expect(message("name: x\n").contains("must be a list"))
        #expect(message("- {click: a, back: b}\n").contains("one `name: value` pair"))
    }

    @Test func waitLimit() throws {
        #expect(try Steps.parse("- wait: \(Steps.maxWaitMs)\n") == [.waitMs(Steps.maxWaitMs)])
        #expect(throws: StepsError.self) { try Steps.parse("- wait: \(Steps.maxWaitMs + 1)\n") }
    }

    @Test func stackExpectations() {
        #expect(Steps.stackMatches("P1 W1(*P)", expected: "P1 W1(*P)"))
        #expect(Steps.stackMatches("P1 W1(*P) W2(*C)~", expected: "P1 W1 W2"))
        #expect(!Steps.stackMatches("P1 W1(*P)", expected: "P1 W1(*C)"))
        #expect(!Steps.stackMatches("P1 W1(*P)", expected: "W1"))
        #expect(!Steps.stackMatches("P1 W1(*P)~", expected: "P1 W1(*P)"))
    }
}

@Suite struct ReportTests {
    func report(broken: Bool) -> CheckReport {
        var log = Logs.good
        if broken { log.append(Observation(t: 900, webview: "W1", step: 2, .exception(message: "bad <thing> & \"quotes\""))) }
        let findings = Rules.evaluate(log, options: RuleOptions(appOrigin: Logs.app))
        let steps = [CheckReport.StepResult(index: 0, description: "click: a", stack: "P1 W1(*P)", snapshots: [("P1", "data:image/jpeg;base64,AAAA")], ms: 12),
                     CheckReport.StepResult(index: 1, description: "back", stack: "W1(*P)"),
                     CheckReport.StepResult(index: 2, description: "expect: {stack: \"W1\"}", failure: broken ? "the stack is P1 W1(*P)" : nil, stack: "P1 W1(*P)")]
        return CheckReport(url: Logs.app + "/", steps: steps, findings: findings, rows: Navigations.rows(log, findings: findings), budgetMs: nil, seconds: 1.5)
    }

    @Test func table() {
        let good = report(broken: false)
        #expect(good.passed)
        let lines = good.table.split(separator: "\n")
        #expect(lines[0].hasPrefix("step"))
        #expect(lines.count == 1 + 3 + 1)
        #expect(lines[1].contains("push") && lines[1].contains("→ /#/a") && lines[1].contains("ok"))
        #expect(lines.last!.hasPrefix("app-aware: 13 rules kept over 3 navigations"))
        let bad = report(broken: true)
        #expect(!bad.passed)
        #expect(bad.table.contains("BROKEN page-error (step 3, W1)"))
        #expect(bad.table.contains("step 3 failed"))
        #expect(bad.table.split(separator: "\n").last!.hasPrefix("NOT app-aware: 1 rule broken (page-error), 1 step failed"))
    }

    @Test func junitShape() {
        let x = report(broken: true).junit
        #expect(x.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"))
        #expect(x.contains("<testsuite name=\"bridged check http://127.0.0.1:3000/\" tests=\"16\" failures=\"2\""))
        #expect(x.components(separatedBy: "<testcase ").count - 1 == 16)
        #expect(x.components(separatedBy: "<failure ").count - 1 == 2)
        #expect(x.contains("type=\"page-error\""))
        #expect(x.contains("bad &lt;thing&gt; &amp; &quot;quotes&quot;"))
        #expect(!x.contains("<thing>"))
        #expect(!report(broken: false).junit.contains("<failure"))
    }

    @Test func htmlIsSelfContained() {
        let h = report(broken: true).html
        #expect(h.contains("<span class=\"item P\">P1</span><span class=\"item W\">W1(*P)</span>"))
        #expect(h.contains("src=\"data:image/jpeg;base64,AAAA\""))
        #expect(h.contains("NOT app-aware"))
        #expect(!h.contains("src=\"http"))
        #expect(!h.contains("<script"))
    }
}
