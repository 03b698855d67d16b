import BridgeProtocol
import Foundation

/// Drives one browser session over the protocol and keeps the observation log.
public final class CheckRunner {
    let options: CheckOptions
    let ctl: ControllerClient
    var session = ""
    var log: [Observation] = []
    var step = -1
    let start = Date()
    var stack: [JSONValue] = []
    /// A page connected or went away, a web view closed: the stack's `connected` flags (which
    /// `stack.changed` does not carry over) are read again with `session.get`.
    var stackStale = false
    var foregroundUp: String?
    var lastEventAt = Date()
    var pendingProbes: [String] = []
    var connected = Set<String>()
    /// Web views whose page could not load (`webview.failed`): nothing waits for them.
    var failed: [String: String] = [:]
    var stepResults: [CheckReport.StepResult] = []
    var screenshots = 0
    /// Exploring: the states reached, the start first.
    var states: [CheckReport.State] = []
    var explored = false
    /// Sessions opened after the first one (exploring: a fresh start when the back did not return).
    var freshSessions = 0
    /// Exploring: the links of the start page, how many taps were made, the links a path
    /// could not find again.
    var startLinks: [Link] = []
    var tapped = 0
    var missed: [String] = []
    /// hotwire-native: the Turbo visit each web view started and has not rendered (nor failed).
    var visiting: [String: (identifier: String, location: String)] = [:]
    /// hotwire-native: the answer about the path configuration's server copy (nil: none yet).
    var pathConfiguration: JSONValue?
    /// hotwire-native: the session's tree as the last `stack.changed` showed it (its tabs and
    /// modal: `stack` is the active stack only).
    var tree: JSONValue?
    /// Web views of this session whose page stopped answering (what showed it), and whose
    /// renderer died (the reason): nothing more is asked of them, nothing waits for them.
    var unresponsive: [String: String] = [:]
    var crashed: [String: String] = [:]
    /// When the step's own action (a click, typed text) was made, and whether the daemon has
    /// shown since what became of a navigation it started (an event of the session).
    var actionAt: Date?
    var answeredSinceAction = false
    /// Web views whose tab the daemon announced open (`webview.open`), and those the session
    /// began with (which get none).
    var opened = Set<String>()
    var initial = Set<String>()
    /// Where a web view's page went since the stack was last read (`pwa-navigated`: a history
    /// change the daemon heard of), newest first over the stack's url.
    var navigatedTo: [String: String] = [:]
    /// Exploring: why the start page's links could not be read (nil: they were).
    var startUnreadable: String?

    /// capacitor: why the session ended (`session.closed`: `exit-app`); nil while it lives.
    var sessionEnded: String?
    /// capacitor: the screen the session started on (its url and digest), for coming back.
    var startScreen: (url: String, digest: String)?

    var hotwire: Bool { options.profile == .hotwireNative }
    var capacitor: Bool { options.profile == .capacitor }

    public init(_ options: CheckOptions) throws {
        self.options = options
        do { ctl = try ControllerClient(host: options.host, port: options.port) } catch {
            throw CheckCannotRun("cannot reach the checker's own daemon: \(error)")
        }
        ctl.onEvent = { [unowned self] name, p in self.event(name, p) }
        ctl.onReconnect = { [unowned self] in try self.rejoin() }
    }

    /// How long a page may take to answer one call: `pageAnswerSeconds`, less with a shorter
    /// `timeout`, but never under 5 s (a loaded machine's page is not unresponsive for that).
    var pageTimeout: Double { min(options.pageAnswerSeconds, max(options.timeout, 5)) }

    /// How long a call to the daemon itself may take (its state: `session.get`,
    /// `navigation.back`): `timeout`, between 5 and 30 s.
    var controlTimeout: Double { min(max(options.timeout, 5), 30) }

    /// On a new connection (the last one was dropped after a call got no reply): hello, and the
    /// session subscribed to again; what the lost connection still had to say is read again.
    func rejoin() throws {
        do {
            _ = try ctl.call("hello", ["protocol": 1, "role": "controller"], timeout: 10, reconnecting: false)
            if !session.isEmpty { _ = try ctl.call("session.subscribe", ["session": sid], timeout: 10, reconnecting: false) }
        } catch let e as ControllerClient.CallError {
            throw ClientError("the daemon refused the checker on a new connection (\(e.code): \(e.message))")
        } catch is ControllerClient.CallTimeout {
            throw ClientError("the daemon did not answer the checker on a new connection within 10 s")
        }
        stackStale = true
        lastEventAt = Date()
    }

    /// Why nothing is asked of the page of `w` any more (nil: it answers).
    func dead(_ w: String) -> String? {
        if let how = unresponsive[w] { return "stopped answering (\(how))" }
        if let reason = crashed[w] { return "crashed (\(reason))" }
        return nil
    }

    /// Where the page of `w` was last seen: its location as last read, else the stack's url.
    func lastURL(of w: String) -> String {
        if let u = navigatedTo[w] { return u }
        // The stack follows the page (a new document, a history change, a Turbo visit).
        let u = url(of: w)
        if !u.isEmpty { return u }
        for o in log.reversed() where o.webview == w {
            if case .location(let u, _) = o.kind { return u }
            if case .stack(_, let cause) = o.kind, cause == "session.create" { break }
        }
        return w == "W1" ? options.url : ""
    }

    func markUnresponsive(_ w: String, how: String) {
        guard unresponsive[w] == nil, crashed[w] == nil else { return }
        unresponsive[w] = how
        pendingProbes.removeAll { $0 == w }
        log.append(Observation(t: now, webview: w, step: step, .unresponsive(url: lastURL(of: w), how: how)))
    }

    func markCrashed(_ w: String, reason: String) {
        guard crashed[w] == nil else { return }
        crashed[w] = reason
        unresponsive[w] = nil
        pendingProbes.removeAll { $0 == w }
        log.append(Observation(t: now, webview: w, step: step, .crashed(url: lastURL(of: w), reason: reason)))
    }

    /// A call about the page of `w` (`webview.evaluate`, `webview.click`, `webview.type`;
    /// `session.screenshot` of the top web view with `webview` left out), within `pageTimeout`
    /// or `timeout`. A page that does not answer in time, or that the daemon says is
    /// unresponsive or crashed, is marked so (nothing more is asked of it) and the call fails
    /// with `page-unresponsive` / `webview-crashed`; a page marked so before is not asked.
    func pageCall(_ method: String, _ w: String, _ params: JSONObject = [:], timeout: Double? = nil, webview: Bool = true) throws -> JSONValue {
        if let why = dead(w) {
            throw ControllerClient.CallError(code: crashed[w] != nil ? "webview-crashed" : "page-unresponsive", message: "the page of \(w) \(why)")
        }
        var p = params
        p["session"] = sid
        if webview { p["webview"] = .string(w) }
        let limit = timeout ?? pageTimeout
        do {
            return try ctl.call(method, p, timeout: limit)
        } catch is ControllerClient.CallTimeout {
            markUnresponsive(w, how: "\(method) got no answer within \(Self.seconds(limit)) s")
            throw ControllerClient.CallError(code: "page-unresponsive", message: "the page of \(w) \(dead(w) ?? "stopped answering")")
        } catch let e as ControllerClient.CallError {
            let m = e.message.lowercased()
            if e.code == "page-unresponsive" || (e.code == "browser-error" && m.contains("did not answer") && m.contains("in time")) {
                markUnresponsive(w, how: "\(method): \(e.code): \(e.message)")
            } else if e.code == "webview-crashed" || (e.code == "browser-error" && (m.contains("target crashed") || m.contains("renderer crashed"))) {
                markCrashed(w, reason: e.message)
            }
            throw e
        }
    }

    static func seconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s))" : "\((s * 10).rounded() / 10)"
    }

    var now: Double { Date().timeIntervalSince(start) * 1000 }

    /// The seed's notation for a stack of items.
    static func render(_ items: [JSONValue]) -> String {
        items.map { item -> String in
            var s = item["id"]?.stringValue ?? "?"
            if item["kind"]?.stringValue == "webview" {
                s += item["mode"]?.stringValue == "pwa" ? "(*P)" : "(*C)"
                if item["connected"]?.boolValue == false { s += "~" }
            }
            return s
        }.joined(separator: " ")
    }

    var topItem: JSONValue? { stack.last { $0["kind"]?.stringValue == "webview" } }

    var top: String { topItem?["id"]?.stringValue ?? "W1" }

    var sid: JSONValue { .string(session) }

    func evaluate(_ w: String, _ expression: String, timeout: Double? = nil) throws -> JSONValue {
        try pageCall("webview.evaluate", w, ["expression": .string(expression)], timeout: timeout)["value"] ?? .null
    }

    // MARK: Running

    /// Runs the check. A lost connection to the daemon (it exited, or stopped answering) ends it
    /// with `CheckCannotRun` (exit 2): nothing is judged on a partial run.
    public func run() throws -> CheckReport {
        do {
            return try runChecked()
        } catch let e as ClientError {
            throw CheckCannotRun("the check stopped: the connection to the checker's own daemon failed (\(e.message)); the daemon exited or stopped answering, so nothing was judged")
        } catch let e as ControllerClient.CallTimeout {
            throw CheckCannotRun("the check stopped: the checker's own daemon did not answer \(e.method) within \(Self.seconds(e.seconds)) s, so nothing was judged")
        }
    }

    func runChecked() throws -> CheckReport {
        _ = try ctl.call("hello", ["protocol": 1, "role": "controller"], timeout: controlTimeout, reconnecting: false)
        try openSession()
        if let why = dead("W1") { startUnreadable = "the start page \(Rules.path(lastURL(of: "W1"))) \(why)" }
        let startShot = try screenshot()
        if let steps = options.steps {
            for (i, s) in steps.enumerated() { try perform(s, index: i) }
        } else {
            explored = true
            try explore()
        }
        _ = try settle()
        var findings = Rules.evaluate(log, options: RuleOptions(appOrigin: Rules.origin(options.url) ?? options.url, budgetMs: options.budgetMs,
                                                                profile: options.profile, visitTimeoutMs: options.timeout * 1000, platform: platform))
        if explored, let why = nothingExplored() {
            findings.insert(Finding(rule: .nothingExplored, step: -1, webview: "W1", t: 0, message: why.message, evidence: why.evidence), at: 0)
        }
        var report = CheckReport(url: options.url, steps: stepResults, findings: findings, rows: Navigations.rows(log, findings: findings, profile: options.profile),
                                 budgetMs: options.budgetMs, seconds: Date().timeIntervalSince(start), states: explored ? states : nil,
                                 startScreenshot: startShot)
        report.profile = options.profile
        if capacitor { report.platform = platform }
        // Whatever the session's pages do, closing it is bounded; a daemon gone by now changes
        // nothing of a verdict already made.
        _ = try? ctl.soft { try ctl.call("session.close", ["session": sid], timeout: min(options.timeout, 10), reconnecting: false) }
        return report
    }

    /// A browser session on the start url, its page connected and still. The start page is
    /// judged by what the tab got: a page that did not load, or whose document answered an HTTP
    /// error, stops the check (exit 2).
    func openSession() throws {
        if !session.isEmpty { _ = try ctl.soft { try ctl.call("session.close", ["session": sid], timeout: min(options.timeout, 10)) } }
        session = ""
        sessionEnded = nil
        startScreen = nil
        unresponsive = [:]
        crashed = [:]
        opened = []
        navigatedTo = [:]
        actionAt = nil
        connected = []
        failed = [:]
        pendingProbes = []
        foregroundUp = nil
        visiting = [:]
        pathConfiguration = nil
        let created: JSONValue
        var params: JSONObject = ["url": .string(options.url), "browser": true, "dialogs": .string(options.dialogs)]
        if options.profile != .astro {
            params["profile"] = .string(options.profile.rawValue)
            let profileParams = options.session.params
            for (k, v) in zip(profileParams.keys, profileParams.values) { params[k] = v }
        }
        do {
            // Chromium may have to start first: 30 s more than a page gets.
            created = try ctl.call("session.create", params, timeout: options.timeout + 30)
        } catch let e as ControllerClient.CallError {
            throw CheckCannotRun("the daemon could not open a browser session on \(options.url): \(e.code): \(e.message)")
        }
        session = created["session"]?.stringValue ?? ""
        tree = nil
        _ = try ctl.call("session.subscribe", ["session": sid], timeout: controlTimeout)
        stack = try ctl.soft { try ctl.call("session.get", ["session": sid], timeout: controlTimeout) }?["stack"]?.arrayValue ?? []
        initial = Set(stack.compactMap { $0["id"]?.stringValue })
        log.append(Observation(t: now, step: step, .stack(rendering: Self.render(stack), cause: "session.create")))
        // The root page connects once the tab loaded it; a tab that shows Chromium's own error
        // page (nothing answered, the connection closed, a TLS error) never will.
        let deadline = Date().addingTimeInterval(options.timeout)
        // When the tab shows the error page, the daemon's `webview.failed` (with the net error)
        // follows once that page has loaded: it is waited for a while before the generic reason.
        var errorPageSince: Date?
        // A tab asked where it is answers at once, loading or not; one that does not answer in
        // `pageTimeout` runs a script that never returns (or shows a dialog): it loaded, and
        // stopped answering, which is a finding of its own, not a network error.
        while Date() < deadline, !connected.contains("W1"), failed["W1"] == nil, dead("W1") == nil,
              errorPageSince.map({ Date().timeIntervalSince($0) < options.errorPageGrace }) ?? true {
            try ctl.pump(min(0.5, max(0, deadline.timeIntervalSinceNow))) { connected.contains("W1") || failed["W1"] != nil || dead("W1") != nil }
            if errorPageSince == nil, !connected.contains("W1"), failed["W1"] == nil, dead("W1") == nil,
               let href = try ctl.soft({ try evaluate("W1", "location.href") })?.stringValue, href.hasPrefix("chrome-error:") {
                errorPageSince = Date()
            }
        }
        if dead("W1") != nil, failed["W1"] == nil { return }
        if failed["W1"] == nil, !connected.contains("W1"), errorPageSince != nil {
            failed["W1"] = "the browser shows its error page (nothing answered, the connection closed, or a TLS error)"
        }
        if let reason = failed["W1"] {
            throw CheckCannotRun("the start page \(options.url) did not load in the browser: \(reason)")
        }
        guard connected.contains("W1") else {
            throw CheckCannotRun("the start page \(options.url) did not connect within \(Int(options.timeout)) s (it did not load in the browser — an HTTP error without a page, a TLS or network error — or the page client could not reach the daemon)")
        }
        if let v = try ctl.soft({ try evaluate("W1", PageProbe.status) }), dead("W1") == nil, let status = v["status"]?.intValue, status >= 400 {
            let title = v["title"]?.stringValue ?? ""
            throw CheckCannotRun("the start page \(options.url) answered HTTP \(status) in the browser\(title.isEmpty ? "" : " (\"\(title)\")"): give the url of the app's start page as the browser should load it")
        }
        if hotwire, let url = options.session.params["pathConfigurationUrl"]?.stringValue {
            // The rules of the server copy apply from the first tap on: wait for its answer.
            try ctl.pump(max(0, deadline.timeIntervalSinceNow)) { pathConfiguration != nil }
            guard let answer = pathConfiguration else {
                throw CheckCannotRun("the path configuration \(url) did not arrive within \(Int(options.timeout)) s (--timeout-s)")
            }
            if let error = answer["error"]?.stringValue {
                throw CheckCannotRun("the path configuration \(url) could not be used: \(error)")
            }
        }
        _ = try settle()
    }

    /// Reads the stack again when a page's connection changed.
    func refreshStack() throws {
        guard stackStale else { return }
        stackStale = false
        if let got = try ctl.soft({ try ctl.call("session.get", ["session": sid], timeout: controlTimeout) }), let s = got["stack"]?.arrayValue {
            noteTabs(got)
            let before = Self.render(stack)
            stack = s
            navigatedTo = [:]
            if Self.render(s) != before { log.append(Observation(t: now, step: step, .stack(rendering: Self.render(s), cause: "page"))) }
        }
    }

    /// The web views whose tab is open, as `session.get`'s `targetIds` names them (a
    /// `webview.open` lost with a dropped connection is not waited for).
    func noteTabs(_ got: JSONValue) {
        if let ids = got["targetIds"]?.objectValue { opened.formUnion(ids.keys) }
    }

    /// The url a web view of the stack shows (as the daemon knows it).
    func url(of w: String) -> String {
        stack.first { $0["id"]?.stringValue == w }?["url"]?.stringValue ?? ""
    }

    /// Waits until the app is still, as a user's next tap would: no foreground up; the top web
    /// view's page connected (one of the app's origin that did not fail to load); its document
    /// loaded, none of its fetch/XHR requests in flight, no navigation it began (a link, a
    /// form) still on its way to a new page, and no DOM change, request or event for
    /// `stillnessMs`; all within `within` seconds (`timeout`). A top page that stopped
    /// answering or crashed is not waited for (a finding says what became of it). Installs the
    /// page probe in new pages and collects what the pages logged. Returns nil when still, else
    /// why it is not.
    func settle(within: Double? = nil) throws -> String? {
        let quiet = Double(options.stillnessMs) / 1000
        let deadline = Date().addingTimeInterval(within ?? options.timeout)
        var why: String?
        let app = Rules.origin(options.url)
        // When a page that has not connected was last asked whether it answers at all.
        var asked = Date()
        while true {
            try ctl.pump(0.05)
            // A session the app ended (App.exitApp) has nothing left to wait for.
            if sessionEnded != nil { why = nil; break }
            try refreshStack()
            try probeNewPages()
            if Date() >= deadline { break }
            let w = top
            if dead(w) != nil { why = nil; break }
            if let w = foregroundUp { why = "a foreground is still up over \(w)"; continue }
            if let v = visiting[w] { why = "the Turbo visit of \(v.location) in \(w) has not rendered (no visitRendered)"; continue }
            let u = url(of: w)
            let waitsForPage = failed[w] == nil && (Rules.origin(u) == app || u.isEmpty)
            if !connected.contains(w) && waitsForPage {
                why = "the page of \(w) (\(u)) has not connected"
                // A page that loaded and runs a script that never returns never connects: a tab
                // asked where it is answers at once otherwise (loading or not).
                if Date().timeIntervalSince(asked) >= 1, deadline.timeIntervalSinceNow >= pageTimeout {
                    _ = try ctl.soft { try evaluate(w, "document.readyState") }
                    asked = Date()
                }
                continue
            }
            // A web view pushed for a page of another origin (a link that leaves the app) is
            // not waited for to connect, but its tab is: the daemon announces it once open
            // (after the server answered).
            if !connected.contains(w), failed[w] == nil, !initial.contains(w), !opened.contains(w) {
                why = "the tab of \(w) (\(u)) has not opened yet"
                continue
            }
            if Date().timeIntervalSince(lastEventAt) < quiet { why = "events keep coming"; continue }
            if connected.contains(w) {
                guard let a = try ctl.soft({ try evaluate(w, PageProbe.activity) }) else {
                    why = dead(w).map { "the page of \(w) \($0)" } ?? "the page of \(w) does not answer"
                    continue
                }
                if let ready = a["ready"]?.stringValue, ready != "complete" { why = "the document of \(w) is still loading (\(ready))"; continue }
                if let n = a["pending"]?.intValue, n > 0 { why = "\(n) fetch/XHR request\(n == 1 ? "" : "s") of \(w) still in flight"; continue }
                if let n = a["deciding"]?.intValue, n > 0 { why = "a navigation the page of \(w) asked native for is not decided yet"; continue }
                // A link or a form the step's tap followed: the page stays until the new one
                // commits (a server that answers after 3 s), or the daemon shows what it made of
                // it (a new web view, the page gone, a failure).
                if let at = actionAt, !answeredSinceAction, let l = a["leavingMs"]?.doubleValue,
                   l <= Date().timeIntervalSince(at) * 1000 + 100 {
                    why = "the navigation of \(w) to \(a["leavingUrl"]?.stringValue ?? "another page") has not committed (no new page yet)"
                    continue
                }
                if let q = a["quietMs"]?.doubleValue, q < quiet * 1000 { why = "the page of \(w) is still changing"; continue }
                // A window it opened becomes a web view on top once Chromium reports it, which can
                // take a while on a loaded machine; one that never comes (a blocked popup) is
                // waited for `openingMs` at most.
                if let o = a["openingMs"]?.doubleValue, o < Double(options.openingMs) { why = "a window the page of \(w) opened has not appeared yet"; continue }
            }
            // What the daemon did that no event has shown yet (a tab it opens for a navigation
            // it stopped is announced once the tab is there): its stack, read again.
            let got = try ctl.soft { try ctl.call("session.get", ["session": sid], timeout: controlTimeout) }
            if let got { noteTabs(got) }
            if let s = got?["stack"]?.arrayValue, s.map({ $0["id"]?.stringValue ?? "" }) != stack.map({ $0["id"]?.stringValue ?? "" }) {
                stack = s
                navigatedTo = [:]
                log.append(Observation(t: now, step: step, .stack(rendering: Self.render(s), cause: "page")))
                lastEventAt = Date()
                why = "the stack changed"
                continue
            }
            why = nil
            break
        }
        try collect()
        return why
    }

    func probeNewPages() throws {
        while !pendingProbes.isEmpty {
            let w = pendingProbes.removeFirst()
            _ = try ctl.soft { try evaluate(w, PageProbe.install) }
        }
    }

    /// What the connected pages logged since the last collection, then the top page's location.
    /// Pages that stopped answering or crashed are not asked.
    func collect() throws {
        if sessionEnded != nil { return }
        for w in connected.sorted() where dead(w) == nil {
            guard let v = try ctl.soft({ try evaluate(w, PageProbe.collect) }), let entries = v.arrayValue else { continue }
            for e in entries {
                let t = e["t"]?.doubleValue ?? 0
                let kind: Observation.Kind?
                switch e["k"]?.stringValue {
                case "dom": kind = .domChanged(count: Int(e["n"]?.intValue ?? 1))
                case "push": kind = .history(how: .push, url: e["url"]?.stringValue ?? "")
                case "replace": kind = .history(how: .replace, url: e["url"]?.stringValue ?? "")
                case "pop": kind = .history(how: .pop, url: e["url"]?.stringValue ?? "")
                case "nav": kind = .navigateSent(url: e["url"]?.stringValue ?? "")
                case "reply": kind = .navigateReplied(placeholder: e["p"]?.stringValue ?? "")
                case "exception": kind = .exception(message: e["m"]?.stringValue ?? "")
                case "console": kind = .consoleError(message: e["m"]?.stringValue ?? "")
                case "document": kind = .documentLoad(url: e["url"]?.stringValue ?? "", via: e["via"]?.stringValue ?? "a script")
                default: kind = nil
                }
                if let kind { log.append(Observation(t: t, webview: w, step: step, kind)) }
            }
        }
        let w = top
        if connected.contains(w), let v = try ctl.soft({ try evaluate(w, capacitor ? PageProbe.screen : PageProbe.location) }) {
            let url = v["url"]?.stringValue ?? ""
            log.append(Observation(t: now, webview: w, step: step, .location(url: url, title: v["title"]?.stringValue ?? "")))
            if capacitor, let digest = v["digest"]?.stringValue {
                log.append(Observation(t: now, webview: w, step: step, .screen(url: url, digest: digest)))
                if startScreen == nil { startScreen = (url, digest) }
            }
        }
    }

    func back() throws {
        if capacitor { return try capacitorBack() }
        let before = stack
        let w = top
        let r = try ctl.call("navigation.back", ["session": sid], timeout: controlTimeout)
        let action = r["action"]?.stringValue ?? "none"
        let removed = r["removed"]?.arrayValue?.first?.stringValue
        let url = before.first { $0["id"]?.stringValue == removed }?["url"]?.stringValue
        if hotwire {
            // A native pop: the screen uncovered is the new top; when it is a web screen, its
            // web view must come to show its url (the restore visit).
            let after = r["stack"]?.arrayValue ?? []
            let uncovered = after.last
            let web = uncovered?["kind"]?.stringValue == "webview"
            log.append(Observation(t: now, webview: web ? uncovered?["id"]?.stringValue ?? w : w, step: step,
                                   .back(action: action, placeholder: removed, url: action == "pop" && web ? uncovered?["url"]?.stringValue : nil)))
            stack = after
            navigatedTo = [:]
            return
        }
        log.append(Observation(t: now, webview: w, step: step, .back(action: action, placeholder: action == "swap" ? removed : nil, url: action == "swap" ? url : nil)))
        if let s = r["stack"]?.arrayValue { stack = s; navigatedTo = [:] }
    }

    func perform(_ s: Step, index: Int) throws {
        step = index
        let t0 = Date()
        log.append(Observation(t: now, step: index, .step(description: s.description)))
        var failure: String?
        func settled() throws {
            if let why = try settle() { failure = "the app did not settle within \(Int(options.timeout)) s (--timeout-s): \(why)" }
        }
        /// The step's own action (a tap, a back) is activity too: what it starts (a navigation
        /// Chromium reports some time after the tap) gets the stillness window to show. Called
        /// before the action, so what the daemon says during it counts as its answer.
        func acting() { lastEventAt = Date(); actionAt = Date(); answeredSinceAction = false }
        defer { actionAt = nil }
        do {
            // capacitor: the app ended its session (App.exitApp): no step has an app to act on.
            if let ended = sessionEnded { throw ControllerClient.CallError(code: "app-exited", message: "the app ended its session (\(ended))") }
            switch s {
            case .click(let selector):
                acting()
                _ = try pageCall("webview.click", top, ["selector": .string(selector)])
                lastEventAt = Date()
                try settled()
            case .type(let selector, let text):
                acting()
                _ = try pageCall("webview.type", top, ["selector": .string(selector), "text": .string(text)])
                lastEventAt = Date()
                try settled()
            case .back:
                try back()
                lastEventAt = Date()
                try settled()
            case .navigate(let url):
                _ = try ctl.call("navigation.navigateToUrl", ["session": sid, "url": .string(url)], timeout: controlTimeout)
                lastEventAt = Date()
                try settled()
            case .deeplink(let url) where capacitor:
                try capacitorDeepLink(url)
                lastEventAt = Date()
                try settled()
            case .deeplink(let url):
                do {
                    _ = try ctl.call("deeplink.open", ["session": sid, "url": .string(url)], timeout: controlTimeout)
                } catch let e as ControllerClient.CallError where e.code == "unknown-method" {
                    _ = try ctl.call("navigation.navigateToUrl", ["session": sid, "url": .string(url)], timeout: controlTimeout)
                }
                lastEventAt = Date()
                try settled()
            case .waitRendered:
                try settled()
            case .waitMs(let ms):
                try ctl.pump(Double(ms) / 1000)
                try refreshStack()
                try probeNewPages()
            case .expect(let want, let url, let title):
                failure = try expect(stack: want, url: url, title: title)
            }
        } catch let e as ControllerClient.CallError {
            failure = "\(e.code): \(e.message)"
            _ = try settle()
        } catch let e as ControllerClient.CallTimeout {
            failure = "the daemon did not answer \(e.method) within \(Self.seconds(e.seconds)) s"
            _ = try settle()
        }
        stepResults.append(CheckReport.StepResult(index: index, description: s.description, failure: failure, stack: Self.render(stack),
                                                  snapshots: try snapshots(), ms: Date().timeIntervalSince(t0) * 1000, screenshot: try screenshot()))
    }
}
