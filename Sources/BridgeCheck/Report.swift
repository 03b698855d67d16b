/// The result of one `bridged check` run, as every output renders it.
public struct CheckReport: Sendable {
    public struct StepResult: Sendable {
        public var index: Int
        public var description: String
        /// nil: passed; else why it failed (an `expect` that did not hold, an element not found).
        public var failure: String?
        /// The stack after the step, in the seed's notation.
        public var stack: String
        /// Snapshots of the placeholders on that stack: placeholder id and a `data:` URI.
        public var snapshots: [(placeholder: String, dataURI: String)]
        public var ms: Double
        /// The screen after the step (the top web view), a `data:` URI; nil beyond the report's
        /// screenshot budget or when the browser could not take it.
        public var screenshot: String?

        public init(index: Int, description: String, failure: String? = nil, stack: String, snapshots: [(placeholder: String, dataURI: String)] = [], ms: Double = 0, screenshot: String? = nil) {
            self.index = index
            self.description = description
            self.failure = failure
            self.stack = stack
            self.snapshots = snapshots
            self.ms = ms
            self.screenshot = screenshot
        }
    }

    /// A state the explorer reached: the page's url, the taps from the start page, the steps
    /// that reached and left it, and how its path began (the start page as loaded, back by the
    /// host's back, or a fresh session).
    public struct State: Sendable, Equatable {
        public var url: String
        public var via: [String]
        public var steps: Range<Int>
        public var start: String

        public init(url: String, via: [String], steps: Range<Int>, start: String) {
            self.url = url
            self.via = via
            self.steps = steps
            self.start = start
        }
    }

    public var url: String
    public var steps: [StepResult]
    public var findings: [Finding]
    public var rows: [NavigationRow]
    public var budgetMs: Int?
    public var seconds: Double
    /// Exploring: the states reached, the start page first; nil for a steps run.
    public var states: [State]?
    /// The screen once the start page settled, a `data:` URI.
    public var startScreenshot: String?
    /// `--profile`: which rules were judged.
    public var profile: CheckProfile = .astro
    /// capacitor: the platform; iOS has no hardware back, so its back rules are not judged.
    public var platform: String?

    public init(url: String, steps: [StepResult], findings: [Finding], rows: [NavigationRow], budgetMs: Int?, seconds: Double, states: [State]? = nil, startScreenshot: String? = nil) {
        self.startScreenshot = startScreenshot
        self.url = url
        self.steps = steps
        self.findings = findings
        self.rows = rows
        self.budgetMs = budgetMs
        self.seconds = seconds
        self.states = states
    }

    /// The rules evaluated in this run (render-budget only with a budget, nothing-explored only
    /// when exploring).
    public var rules: [Rule] {
        profile.rules.filter { ($0 != .renderBudget || budgetMs != nil) && ($0 != .nothingExplored || states != nil)
            && !(profile == .capacitor && platform == "ios" && ($0 == .backExitsApp || $0 == .backDoesNothing)) }
    }

    /// What went wrong while a state was reached and left: its steps' failures and findings.
    public func problems(of state: State) -> [String] {
        let inState = { (step: Int) in state.steps.isEmpty ? step < 0 : state.steps.contains(step) }
        return steps.filter { inState($0.index) && $0.failure != nil }.map { "step \($0.index + 1) failed: \($0.failure!)" }
            + findings.filter { inState($0.step) }.map { "\($0.rule): \($0.message)" }
    }

    /// App-aware: no rule broken and every step held.
    public var passed: Bool { findings.isEmpty && steps.allSatisfy { $0.failure == nil } }

    // MARK: Table

    /// One line per navigation, then the findings and a verdict line.
    public var table: String {
        var lines: [[String]] = [["step", "webview", "kind", "from", "→ to", "reply ms", "render ms", "verdict"]]
        for r in rows {
            lines.append([r.step < 0 ? "-" : "\(r.step + 1)", r.webview, r.kind.rawValue, short(r.from), "→ " + short(r.to),
                          r.replyMs.map { "\($0)" } ?? "-", r.renderMs.map { "\($0)" } ?? "-", r.verdict])
        }
        var widths = [Int](repeating: 0, count: lines[0].count)
        for l in lines { for (i, c) in l.enumerated() { widths[i] = max(widths[i], c.count) } }
        var out = lines.map { l in
            l.enumerated().map { i, c in i == l.count - 1 ? c : c + String(repeating: " ", count: widths[i] - c.count) }.joined(separator: "  ")
        }
        if rows.isEmpty { out.append("(no navigation)") }
        if let states {
            out.append("explored \(states.count) state\(states.count == 1 ? "" : "s"):")
            for (i, st) in states.enumerated() {
                let via = st.via.isEmpty ? "the start page" : st.via.joined(separator: " → ")
                let from = st.via.isEmpty ? "" : "; from \(st.start)"
                out.append("  \(i + 1). \(short(st.url))  (\(via)\(from))\(problems(of: st).isEmpty ? "" : "  BROKEN")")
            }
        }
        for s in steps where s.failure != nil {
            out.append("step \(s.index + 1) failed: \(s.description): \(s.failure!)")
        }
        for f in findings {
            out.append("BROKEN \(f.rule) (step \(f.step < 0 ? "-" : "\(f.step + 1)"), \(f.webview)): \(f.message)")
            for e in f.evidence { out.append("    " + e) }
        }
        var advised = Set<String>()
        for f in findings where advised.insert(f.rule).inserted {
            if let a = Rule.named(f.rule)?.advice { out.append("to fix \(f.rule): \(a.text)") }
        }
        out.append(passed
                   ? "app-aware: \(rules.count) rules kept over \(rows.count) navigation\(rows.count == 1 ? "" : "s") and \(steps.count) step\(steps.count == 1 ? "" : "s")"
                   : "NOT app-aware: " + verdictParts.joined(separator: ", "))
        return out.joined(separator: "\n") + "\n"
    }

    /// What failed, in words: the rules broken, the steps failed.
    var verdictParts: [String] {
        let broken = Set(findings.map(\.rule))
        let failedSteps = steps.filter { $0.failure != nil }.count
        var parts: [String] = []
        if !broken.isEmpty { parts.append("\(broken.count) rule\(broken.count == 1 ? "" : "s") broken (\(broken.sorted().joined(separator: ", ")))") }
        if failedSteps > 0 { parts.append("\(failedSteps) step\(failedSteps == 1 ? "" : "s") failed") }
        return parts
    }

    func short(_ url: String) -> String {
        guard let o = Rules.origin(url), o == Rules.origin(self.url), url.hasPrefix(o) else { return url }
        let rest = String(url.dropFirst(o.count))
        return rest.isEmpty ? "/" : rest
    }

    // MARK: JUnit

    /// JUnit XML: one testsuite, a testcase per step and per rule, failures with their evidence.
    public var junit: String {
        let states = self.states ?? []
        let failures = steps.filter { $0.failure != nil }.count + rules.filter { r in findings.contains { $0.rule == r.id } }.count
            + states.filter { !problems(of: $0).isEmpty }.count
        let tests = steps.count + rules.count + states.count
        var x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        x += "<testsuites name=\"bridged check\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"0\" time=\"\(seconds)\">\n"
        x += "  <testsuite name=\"\(xml("bridged check " + url))\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"0\" skipped=\"0\" time=\"\(seconds)\">\n"
        for (i, st) in states.enumerated() {
            let via = st.via.isEmpty ? "the start page" : st.via.joined(separator: " → ")
            x += "    <testcase classname=\"states\" name=\"\(xml("\(i + 1). \(short(st.url)) (\(via))"))\" time=\"0\">"
            let p = problems(of: st)
            if !p.isEmpty {
                x += "\n      <failure message=\"\(xml(p[0]))\" type=\"state\">\(xml(p.joined(separator: "\n")))</failure>\n    "
            }
            x += "</testcase>\n"
        }
        for s in steps {
            x += "    <testcase classname=\"steps\" name=\"\(xml("\(s.index + 1). \(s.description)"))\" time=\"\(s.ms / 1000)\">"
            if let f = s.failure {
                x += "\n      <failure message=\"\(xml(f))\" type=\"step\">\(xml("stack after the step: " + s.stack))</failure>\n    "
            }
            x += "</testcase>\n"
        }
        for r in rules {
            let broken = findings.filter { $0.rule == r.id }
            x += "    <testcase classname=\"rules\" name=\"\(xml(r.id + ": " + r.summary))\" time=\"0\">"
            if !broken.isEmpty {
                let body = broken.map { f in
                    "step \(f.step < 0 ? "-" : "\(f.step + 1)") \(f.webview): \(f.message)\n" + f.evidence.map { "  " + $0 }.joined(separator: "\n")
                }.joined(separator: "\n")
                x += "\n      <failure message=\"\(xml(broken[0].message))\" type=\"\(r.id)\">\(xml(body))</failure>\n    "
            }
            x += "</testcase>\n"
        }
        x += "  </testsuite>\n</testsuites>\n"
        return x
    }

    // MARK: HTML

    /// A self-contained page: the verdict, the navigation table, each step with the stack after
    /// it drawn as boxes and the placeholders' snapshots inline, the findings with evidence.
    public var html: String {
        var h = """
            <!doctype html><html><head><meta charset="utf-8"><title>bridged check \(xml(url))</title><style>
            body{font:14px system-ui,sans-serif;margin:2em;color:#222}
            h1{font-size:1.3em} .ok{color:#070} .bad{color:#b00}
            table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}
            .stack{display:flex;gap:4px;margin:6px 0;flex-wrap:wrap} .item{border:2px solid #333;padding:4px 8px;font-family:monospace;background:#fff}
            .item.P{border-style:dashed;background:#eef} .item.W{background:#efe} .item.N{background:#fee}
            .snaps img{max-width:140px;border:1px solid #999;margin:2px} .step{border-top:1px solid #ddd;padding:6px 0}
            img.screen{max-width:195px;border:1px solid #999;display:block;margin:4px 0} .advice{background:#fffbe6;border-left:3px solid #e0b000;padding:4px 8px}
            pre{background:#f6f6f6;padding:6px}
            </style></head><body>
            <h1>bridged check <code>\(xml(url))</code></h1>

            """
        h += passed ? "<p class=\"ok\"><b>app-aware</b></p>\n" : "<p class=\"bad\"><b>NOT app-aware</b></p>\n"
        if profile != .astro { h += "<p>profile <code>\(profile.rawValue)</code>: judged by its rules</p>\n" }
        h += "<h2>Navigations</h2><table><tr><th>step</th><th>web view</th><th>kind</th><th>from</th><th>to</th><th>reply ms</th><th>render ms</th><th>verdict</th></tr>\n"
        for r in rows {
            h += "<tr><td>\(r.step < 0 ? "-" : "\(r.step + 1)")</td><td>\(xml(r.webview))</td><td>\(r.kind.rawValue)</td><td>\(xml(r.from))</td><td>\(xml(r.to))</td><td>\(r.replyMs.map { "\($0)" } ?? "-")</td><td>\(r.renderMs.map { "\($0)" } ?? "-")</td><td class=\"\(r.verdict == "ok" ? "ok" : "bad")\">\(xml(r.verdict))</td></tr>\n"
        }
        h += "</table>\n<h2>Rules</h2><table><tr><th>rule</th><th>what it means</th><th>result</th></tr>\n"
        for r in rules {
            let n = findings.filter { $0.rule == r.id }.count
            h += "<tr><td><code>\(r.id)</code></td><td>\(xml(r.summary))</td><td class=\"\(n == 0 ? "ok" : "bad")\">\(n == 0 ? "kept" : "broken \(n)×")</td></tr>\n"
            // Under a broken rule: what to change in the app.
            if n > 0, let a = r.advice {
                h += "<tr><td colspan=\"3\" class=\"advice\"><b>What to change:</b> \(xml(a.text))"
                if !a.snippet.isEmpty { h += "<pre>\(xml(a.snippet))</pre>" }
                h += "</td></tr>\n"
            }
        }
        h += "</table>\n"
        if !findings.isEmpty {
            h += "<h2>Findings</h2>\n"
            for f in findings {
                h += "<div class=\"step\"><b class=\"bad\">\(f.rule)</b> (step \(f.step < 0 ? "-" : "\(f.step + 1)"), \(xml(f.webview))): \(xml(f.message))<pre>\(xml(f.evidence.joined(separator: "\n")))</pre>"
                if let shot = screenshot(atStep: f.step) {
                    h += "<img class=\"screen\" alt=\"the screen after step \(f.step + 1)\" src=\"\(shot)\">"
                }
                h += "</div>\n"
            }
        }
        if let states {
            h += "<h2>Explored states (\(states.count))</h2><table><tr><th>#</th><th>url</th><th>reached by</th><th>path began at</th><th>result</th></tr>\n"
            for (i, st) in states.enumerated() {
                let p = problems(of: st)
                h += "<tr><td>\(i + 1)</td><td>\(xml(st.url))</td><td>\(xml(st.via.isEmpty ? "the start page" : st.via.joined(separator: " → ")))</td><td>\(xml(st.via.isEmpty ? "" : st.start))</td><td class=\"\(p.isEmpty ? "ok" : "bad")\">\(xml(p.isEmpty ? "ok" : p.joined(separator: "; ")))</td></tr>\n"
            }
            h += "</table>\n"
        }
        h += "<h2>Steps</h2>\n"
        for s in steps {
            h += "<div class=\"step\"><b>\(s.index + 1).</b> <code>\(xml(s.description))</code> "
            h += s.failure.map { "<span class=\"bad\">failed: \(xml($0))</span>" } ?? "<span class=\"ok\">ok</span>"
            h += "<div class=\"stack\">"
            for item in s.stack.split(separator: " ") {
                h += "<span class=\"item \(item.first.map(String.init) ?? "")\">\(xml(String(item)))</span>"
            }
            h += "</div>"
            if let shot = s.screenshot { h += "<img class=\"screen\" alt=\"the screen after step \(s.index + 1)\" src=\"\(shot)\">" }
            if !s.snapshots.isEmpty {
                h += "<div class=\"snaps\">"
                for snap in s.snapshots where snap.dataURI.hasPrefix("data:image/") {
                    h += "<figure style=\"display:inline-block;margin:0 6px\"><img alt=\"\(xml(snap.placeholder))\" src=\"\(snap.dataURI)\"><figcaption>\(xml(snap.placeholder))</figcaption></figure>"
                }
                h += "</div>"
            }
            h += "</div>\n"
        }
        h += "<p>\(rows.count) navigations, \(steps.count) steps, \((seconds * 10).rounded() / 10) s.</p></body></html>\n"
        return h
    }

    /// The screenshot after a step (before the first step: the first one taken).
    func screenshot(atStep i: Int) -> String? {
        if i < 0 { return startScreenshot }
        return steps.first { $0.index == i }?.screenshot
    }

    func xml(_ s: String) -> String {
        var o = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": o += "&amp;"
            case "<": o += "&lt;"
            case ">": o += "&gt;"
            case "\"": o += "&quot;"
            case "'": o += "&apos;"
            default:
                if c.value < 0x20 && c != "\n" && c != "\t" { o += "?" } else { o.unicodeScalars.append(c) }
            }
        }
        return o
    }
}
