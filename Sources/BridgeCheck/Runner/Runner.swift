import BridgeProtocol
import Foundation

/// Why a check could not run (exit 2).
public struct CheckCannotRun: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public struct CheckOptions: Sendable {
    public var url: String
    public var steps: [Step]?
    public var budgetMs: Int?
    public var maxStates: Int
    /// The daemon's WebSocket endpoint (`ws://127.0.0.1:PORT/bridge` as host and port).
    public var host: String
    public var port: Int
    /// How long to wait for a page or a render before calling it stuck (seconds).
    public var timeout: Double = 30

    public init(url: String, steps: [Step]?, budgetMs: Int?, maxStates: Int, host: String, port: Int) {
        self.url = url
        self.steps = steps
        self.budgetMs = budgetMs
        self.maxStates = maxStates
        self.host = host
        self.port = port
    }
}

/// A controller of the daemon's own protocol: requests with replies, events kept in order.
final class ControllerClient {
    let ws: WebSocketClient
    var nextID = 1
    var onEvent: (String, JSONValue) -> Void = { _, _ in }

    init(host: String, port: Int) throws {
        ws = try WebSocketClient(host: host, port: port, path: "/bridge")
    }

    struct CallError: Error { var code: String; var message: String }

    func call(_ method: String, _ params: JSONObject = [:], timeout: Double = 60) throws -> JSONValue {
        let id = nextID
        nextID += 1
        try ws.send(JSONValue.object(["id": .int(Int64(id)), "method": .string(method), "params": .object(params)]).jsonString)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, let text = try ws.receive(timeout: left) else { throw ClientError("no reply to \(method) within \(Int(timeout)) s") }
            guard let v = try? JSONParser.parse(text, maxDepth: 64) else { continue }
            if let name = v["event"]?.stringValue { onEvent(name, v["params"] ?? .null); continue }
            guard v["id"]?.intValue == Int64(id) else { continue }
            if let e = v["error"] {
                throw CallError(code: e["code"]?.stringValue ?? "?", message: e["message"]?.stringValue ?? "")
            }
            return v["result"] ?? .null
        }
    }

    /// Reads events for up to `seconds`, or until `until` says stop after an event.
    func pump(_ seconds: Double, until: () -> Bool = { false }) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 || until() { return }
            guard let text = try ws.receive(timeout: left) else { return }
            if let v = try? JSONParser.parse(text, maxDepth: 64), let name = v["event"]?.stringValue { onEvent(name, v["params"] ?? .null) }
        }
    }
}

/// Drives one browser session over the protocol and keeps the observation log.
public final class CheckRunner {
    let options: CheckOptions
    let ctl: ControllerClient
    var session = ""
    var log: [Observation] = []
    var step = -1
    let start = Date()
    var stack: [JSONValue] = []
    var foregroundUp = false
    var lastEventAt = Date()
    var pendingProbes: [String] = []
    var connected = Set<String>()
    var stepResults: [CheckReport.StepResult] = []

    public init(_ options: CheckOptions) throws {
        self.options = options
        do { ctl = try ControllerClient(host: options.host, port: options.port) } catch {
            throw CheckCannotRun("cannot reach the checker's own daemon: \(error)")
        }
        ctl.onEvent = { [unowned self] name, p in self.event(name, p) }
    }

    var now: Double { Date().timeIntervalSince(start) * 1000 }

    func event(_ name: String, _ p: JSONValue) {
        guard p["session"]?.stringValue == session || session.isEmpty else { return }
        lastEventAt = Date()
        let w = p["webview"]?.stringValue ?? ""
        switch name {
        case "stack.changed":
            stack = p["stack"]?.arrayValue ?? []
            log.append(Observation(t: now, step: step, .stack(rendering: Self.render(stack), cause: p["cause"]?.stringValue ?? "")))
        case "foreground.shown":
            foregroundUp = true
            log.append(Observation(t: now, webview: w, step: step, .foregroundShown(kind: p["kind"]?.stringValue ?? "blank")))
        case "foreground.removed":
            foregroundUp = false
            log.append(Observation(t: now, webview: w, step: step, .foregroundRemoved(reason: p["reason"]?.stringValue ?? "", latencyMs: Int(p["latencyMs"]?.intValue ?? 0))))
        case "pwa-rendered":
            log.append(Observation(t: now, webview: w, step: step, .rendered(late: p["late"]?.boolValue ?? false, removed: p["removed"]?.boolValue ?? false)))
        case "webview.open":
            log.append(Observation(t: now, webview: w, step: step, .webviewOpened(url: p["url"]?.stringValue ?? "")))
        case "external.open":
            log.append(Observation(t: now, webview: w, step: step, .externalOpen(url: p["url"]?.stringValue ?? "")))
        case "page.connected":
            connected.insert(w)
            pendingProbes.append(w)
        case "page.disconnected":
            connected.remove(w)
        default:
            break
        }
    }

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

    var top: String {
        stack.last { $0["kind"]?.stringValue == "webview" }?["id"]?.stringValue ?? "W1"
    }

    // MARK: Running

    public func run() throws -> CheckReport {
        _ = try ctl.call("hello", ["protocol": 1, "role": "controller"])
        let created: JSONValue
        do {
            created = try ctl.call("session.create", ["url": .string(options.url), "browser": true], timeout: 90)
        } catch let e as ControllerClient.CallError {
            throw CheckCannotRun("the daemon could not open a browser session on \(options.url): \(e.code): \(e.message)")
        }
        session = created["session"]?.stringValue ?? ""
        _ = try ctl.call("session.subscribe", ["session": .string(session)])
        stack = (try? ctl.call("session.get", ["session": .string(session)]))?["stack"]?.arrayValue ?? []
        // The root page connects once the tab loaded it.
        try ctl.pump(options.timeout) { connected.contains("W1") }
        guard connected.contains("W1") else {
            throw CheckCannotRun("the page \(options.url) did not connect within \(Int(options.timeout)) s (it did not load in the browser, or the page client could not reach the daemon)")
        }
        try settle()
        if let steps = options.steps {
            for (i, s) in steps.enumerated() { try perform(s, index: i) }
        } else {
            try explore()
        }
        try settle()
        let findings = Rules.evaluate(log, options: RuleOptions(appOrigin: Rules.origin(options.url) ?? options.url, budgetMs: options.budgetMs))
        let report = CheckReport(url: options.url, steps: stepResults, findings: findings, rows: Navigations.rows(log, findings: findings),
                                 budgetMs: options.budgetMs, seconds: Date().timeIntervalSince(start))
        _ = try? ctl.call("session.close", ["session": .string(session)])
        return report
    }

    /// Waits until the app is still: no foreground up and no event for a short while; installs
    /// the page probe in new pages and collects what the pages logged.
    func settle() throws {
        let quiet = 0.25
        let deadline = Date().addingTimeInterval(options.timeout)
        while Date() < deadline {
            try ctl.pump(quiet) { false }
            try probeNewPages()
            if !foregroundUp && Date().timeIntervalSince(lastEventAt) >= quiet { break }
        }
        try collect()
    }

    func probeNewPages() throws {
        while !pendingProbes.isEmpty {
            let w = pendingProbes.removeFirst()
            _ = try? ctl.call("webview.evaluate", ["session": .string(session), "webview": .string(w), "expression": .string(PageProbe.install)])
        }
    }

    /// What the connected pages logged since the last collection, then the top page's location.
    func collect() throws {
        for w in connected.sorted() {
            guard let v = try? ctl.call("webview.evaluate", ["session": .string(session), "webview": .string(w), "expression": .string(PageProbe.collect)]),
                  let entries = v["value"]?.arrayValue else { continue }
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
                default: kind = nil
                }
                if let kind { log.append(Observation(t: t, webview: w, step: step, kind)) }
            }
        }
        let w = top
        if connected.contains(w), let v = try? ctl.call("webview.evaluate", ["session": .string(session), "webview": .string(w), "expression": .string(PageProbe.location)]) {
            log.append(Observation(t: now, webview: w, step: step, .location(url: v["value"]?["url"]?.stringValue ?? "", title: v["value"]?["title"]?.stringValue ?? "")))
        }
    }

    func back() throws {
        let before = stack
        let r = try ctl.call("navigation.back", ["session": .string(session)])
        let action = r["action"]?.stringValue ?? "none"
        let removed = r["removed"]?.arrayValue?.first?.stringValue
        let url = before.first { $0["id"]?.stringValue == removed }?["url"]?.stringValue
        let w = top
        log.append(Observation(t: now, webview: w, step: step, .back(action: action, placeholder: action == "swap" ? removed : nil, url: action == "swap" ? url : nil)))
        if let s = r["stack"]?.arrayValue { stack = s }
    }

    func perform(_ s: Step, index: Int) throws {
        step = index
        let t0 = Date()
        log.append(Observation(t: now, step: index, .step(description: s.description)))
        var failure: String?
        let sid = JSONValue.string(session)
        do {
            switch s {
            case .click(let selector):
                _ = try ctl.call("webview.click", ["session": sid, "webview": .string(top), "selector": .string(selector)])
                try settle()
            case .type(let selector, let text):
                _ = try ctl.call("webview.type", ["session": sid, "webview": .string(top), "selector": .string(selector), "text": .string(text)])
                try settle()
            case .back:
                try back()
                try settle()
            case .navigate(let url):
                _ = try ctl.call("navigation.navigateToUrl", ["session": sid, "url": .string(url)])
                try settle()
            case .deeplink(let url):
                do {
                    _ = try ctl.call("deeplink.open", ["session": sid, "url": .string(url)])
                } catch let e as ControllerClient.CallError where e.code == "unknown-method" {
                    _ = try ctl.call("navigation.navigateToUrl", ["session": sid, "url": .string(url)])
                }
                try settle()
            case .waitRendered:
                try settle()
            case .waitMs(let ms):
                try ctl.pump(Double(ms) / 1000)
                try probeNewPages()
            case .expect(let want, let url, let title):
                try settle()
                let rendering = Self.render(stack)
                var problems: [String] = []
                if let want, !Steps.stackMatches(rendering, expected: want) { problems.append("the stack is \(rendering), expected \(want)") }
                if url != nil || title != nil {
                    let v = try ctl.call("webview.evaluate", ["session": sid, "webview": .string(top), "expression": .string(PageProbe.location)])
                    let haveURL = v["value"]?["url"]?.stringValue ?? "", haveTitle = v["value"]?["title"]?.stringValue ?? ""
                    if let url, haveURL != url { problems.append("the url is \(haveURL), expected \(url)") }
                    if let title, haveTitle != title { problems.append("the title is \"\(haveTitle)\", expected \"\(title)\"") }
                }
                if !problems.isEmpty { failure = problems.joined(separator: "; ") }
            }
        } catch let e as ControllerClient.CallError {
            failure = "\(e.code): \(e.message)"
            try settle()
        }
        stepResults.append(CheckReport.StepResult(index: index, description: s.description, failure: failure, stack: Self.render(stack),
                                                  snapshots: snapshots(), ms: Date().timeIntervalSince(t0) * 1000))
    }

    /// The placeholders on the stack, with their snapshots as `data:` URIs.
    func snapshots() -> [(placeholder: String, dataURI: String)] {
        stack.compactMap { item -> (placeholder: String, dataURI: String)? in
            guard item["kind"]?.stringValue == "placeholder", let p = item["id"]?.stringValue,
                  let v = try? ctl.call("placeholder.snapshot", ["session": .string(session), "placeholder": .string(p)]),
                  let data = v["data"]?.stringValue else { return nil }
            return (p, "data:\(v["mimeType"]?.stringValue ?? "image/jpeg");base64,\(data)")
        }
    }

    // MARK: Exploring

    struct Link { var href: String; var sameOrigin: Bool; var selector: String }

    func links() throws -> [Link] {
        guard let v = try? ctl.call("webview.evaluate", ["session": .string(session), "webview": .string(top), "expression": .string(PageProbe.links)]) else { return [] }
        return (v["value"]?.arrayValue ?? []).compactMap { l in
            guard let h = l["href"]?.stringValue, let s = l["selector"]?.stringValue else { return nil }
            return Link(href: h, sameOrigin: l["sameOrigin"]?.boolValue ?? false, selector: s)
        }
    }

    func currentURL() -> String {
        if case .location(let u, _)? = log.last(where: { if case .location = $0.kind { return true } else { return false } })?.kind { return u }
        return options.url
    }

    /// Breadth-first over the states reachable by links: each path is walked forward from the
    /// start and undone with the host's back, so every state is entered and left once.
    func explore() throws {
        let startURL = currentURL()
        var seen: Set<String> = [startURL]
        var queue: [[String]] = try links().filter { $0.href != startURL }.map { [$0.href] }
        var visited = 1
        var n = 0
        for p in queue { seen.insert(p[0]) }
        while !queue.isEmpty, visited < options.maxStates {
            let path = queue.removeFirst()
            var walked = 0
            var ok = true
            for href in path {
                guard let link = try links().first(where: { $0.href == href }) else { ok = false; break }
                try perform(.click(link.selector), index: n, describedAs: "click: a[href=\"\(href)\"]")
                n += 1
                walked += 1
            }
            if ok {
                visited += 1
                let here = currentURL()
                if let last = path.last, let origin = Rules.origin(last), origin == Rules.origin(options.url) {
                    for l in try links() {
                        if seen.insert(l.href).inserted && l.href != here { queue.append(path + [l.href]) }
                    }
                }
            }
            for _ in 0..<walked {
                try perform(.back, index: n, describedAs: "back")
                n += 1
            }
        }
    }

    func perform(_ s: Step, index: Int, describedAs: String) throws {
        try perform(s, index: index)
        stepResults[stepResults.count - 1].description = describedAs
    }
}
