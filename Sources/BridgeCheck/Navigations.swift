import BridgeProtocol

/// One navigation as the summary table shows it.
public struct NavigationRow: Equatable, Sendable {
    /// `push`: a new history entry in the page (announced with pwa-navigate or not); `replace`:
    /// the page replaced its entry; `classic`: a new web view (a new document); `back`: the
    /// host's back; `native` (hotwire-native): a native screen pushed (`to`: its url and, in
    /// brackets, its screen); `dialog`: a JavaScript dialog the page opened (`to`: the dialog,
    /// its text and how it was answered); `deeplink` (capacitor): a deep link the checker sent
    /// the app (`to`: the link, and whether a listener got it).
    public enum Kind: String, Sendable { case push, replace, back, classic, native, dialog, deeplink }
    public var step: Int
    public var webview: String
    public var from: String
    public var to: String
    public var kind: Kind
    /// pwa-navigate to its reply, on the page's clock (an announced push or replace).
    public var replyMs: Double?
    /// The foreground's time up (an announced push and a back-swap), as the daemon measured it.
    public var renderMs: Int?
    /// "ok", or the ids of the rules broken during it.
    public var verdict: String
    /// Whether the page announced it with pwa-navigate (push and replace).
    public var announced: Bool = false
}

public enum Navigations {
    /// The navigations of a log (every history push and replace of a page, announced or not,
    /// every new web view, every back of the host), with the findings of the same step and web
    /// view as verdicts.
    ///
    /// hotwire-native: the history changes of a native back's restore visit (Turbo pushes the
    /// restored url) are part of that back's row, not rows of their own.
    public static func rows(_ log: [Observation], findings: [Finding], profile: CheckProfile = .astro) -> [NavigationRow] {
        var rows: [NavigationRow] = []
        var current: [String: String] = [:]
        var sent: [String: (Double, Int)] = [:]  // web view -> (time sent, row)
        /// An announced navigation waiting for its history change: web view -> row.
        var announced: [String: Int] = [:]
        var stacks: [(index: Int, ids: [String])] = []
        for (i, o) in log.enumerated() {
            if case .stack(let rendering, _) = o.kind { stacks.append((i, ids(rendering))) }
        }
        // Foreground removals of each step and web view, in order: page-side observations are
        // collected after a step, so they follow the controller's events of the same step.
        var removals: [String: [Int]] = [:]
        for o in log {
            if case .foregroundRemoved(_, let latency) = o.kind { removals["\(o.step) \(o.webview)", default: []].append(latency) }
        }
        var taken: [String: Int] = [:]
        func nextRemoval(_ step: Int, _ w: String) -> Int? {
            let key = "\(step) \(w)"
            let i = taken[key, default: 0]
            guard let list = removals[key], i < list.count else { return nil }
            taken[key] = i + 1
            return list[i]
        }
        /// The web view below `w` by stack order, in the stack nearest to log index `i` that holds `w`.
        func below(_ w: String, at i: Int) -> String? {
            let before = stacks.last { $0.index <= i && $0.ids.contains(w) }
            let after = stacks.first { $0.index > i && $0.ids.contains(w) }
            guard let ids = (before ?? after)?.ids, let k = ids.firstIndex(of: w) else { return nil }
            return ids[..<k].last { $0.hasPrefix("W") }
        }
        /// Dialogs not answered yet: web view -> row.
        var openDialogs: [String: Int] = [:]
        for (i, o) in log.enumerated() {
            let w = o.webview
            switch o.kind {
            case .dialog(let type, let message, let url):
                rows.append(NavigationRow(step: o.step, webview: w, from: url.isEmpty ? current[w] ?? "?" : url,
                                          to: "\(type)(\(Rules.quoted(message)))", kind: .dialog, verdict: "ok"))
                openDialogs[w] = rows.count - 1
            case .dialogClosed(_, let accepted, let by):
                if let r = openDialogs.removeValue(forKey: w) {
                    rows[r].to += (accepted ? " accepted" : " dismissed") + (by == "policy" ? "" : " by \(by)")
                }
            case .step:
                announced = [:]
            case .stack(_, let cause) where cause == "session.create":
                current = [:]
                announced = [:]
            case .navigateSent(let url):
                rows.append(NavigationRow(step: o.step, webview: w, from: current[w] ?? "?", to: url, kind: .push, verdict: "ok", announced: true))
                rows[rows.count - 1].renderMs = nextRemoval(o.step, w)
                sent[w] = (o.t, rows.count - 1)
                announced[w] = rows.count - 1
            case .navigateReplied:
                if let (t, r) = sent.removeValue(forKey: w) {
                    rows[r].replyMs = ((o.t - t) * 10).rounded() / 10
                }
            case .history(let how, let url):
                if profile == .hotwireNative, how != .pop,
                   rows.contains(where: { $0.kind == .back && $0.step == o.step && $0.webview == w }) {
                    current[w] = url
                    continue
                }
                switch how {
                case .push, .replace:
                    if let r = announced.removeValue(forKey: w) {
                        rows[r].to = url
                        if how == .replace { rows[r].kind = .replace }
                    } else {
                        rows.append(NavigationRow(step: o.step, webview: w, from: current[w] ?? "?", to: url,
                                                  kind: how == .push ? .push : .replace, verdict: "ok"))
                    }
                case .pop:
                    break
                }
                current[w] = url
            case .back(let action, let p, let url):
                let to = url ?? "(\(action))"
                rows.append(NavigationRow(step: o.step, webview: w, from: current[w] ?? "?", to: p.map { "\(to) [\($0)]" } ?? to, kind: .back, verdict: "ok"))
                if action == "swap" { rows[rows.count - 1].renderMs = nextRemoval(o.step, w) }
                if let url { current[w] = url }
                announced[w] = nil
            case .webviewOpened(let url, let presentedFrom):
                let from = presentedFrom ?? below(w, at: i).flatMap { current[$0] } ?? "?"
                rows.append(NavigationRow(step: o.step, webview: w, from: from, to: url, kind: .classic, verdict: "ok"))
                current[w] = url
            case .nativePushed(let url, let screen, let from):
                rows.append(NavigationRow(step: o.step, webview: w, from: from ?? "?", to: screen.map { "\(url) [\($0)]" } ?? url,
                                          kind: .native, verdict: "ok"))
            case .deepLink(let url, let delivered):
                rows.append(NavigationRow(step: o.step, webview: w, from: current[w] ?? "?", to: url + (delivered ? "" : " (no appUrlOpen listener)"),
                                          kind: .deeplink, verdict: "ok"))
            case .location(let url, _):
                current[w] = url
            default:
                break
            }
        }
        for r in openDialogs.values { rows[r].to += " not answered" }
        if profile == .hotwireNative { visitTimes(log, &rows) }
        for i in rows.indices {
            let ids = orderedUnique(findings.filter { $0.step == rows[i].step && ($0.webview == rows[i].webview || $0.webview.isEmpty) }.map(\.rule))
            if !ids.isEmpty { rows[i].verdict = ids.joined(separator: ",") }
        }
        return rows
    }

    /// hotwire-native: a row's render time is its Turbo visit's, `visitStarted` to
    /// `visitRendered` (controller clock): the visit of the row's url for a push or replace, the
    /// restore visit for a back; the first visit of each step and web view matches once.
    static func visitTimes(_ log: [Observation], _ rows: inout [NavigationRow]) {
        struct Visit { var step: Int; var webview: String; var url: String; var ms: Int?; var taken = false }
        var visits: [Visit] = []
        var started: [String: (Int, Double)] = [:]  // identifier -> (index in visits, time)
        for o in log {
            guard case .turbo(let name, let id?, let location, _, _, _) = o.kind else { continue }
            if name == "visitStarted" {
                started[id] = (visits.count, o.t)
                visits.append(Visit(step: o.step, webview: o.webview, url: location ?? ""))
            } else if name == "visitRendered", let (k, t) = started.removeValue(forKey: id) {
                visits[k].ms = Int((o.t - t).rounded())
            }
        }
        for r in rows.indices where rows[r].renderMs == nil {
            let row = rows[r]
            let k = visits.firstIndex { v in
                !v.taken && v.ms != nil && v.step == row.step && v.webview == row.webview
                    && (row.kind == .back || Rules.comparable(v.url) == Rules.comparable(row.to))
            }
            guard let k else { continue }
            visits[k].taken = true
            rows[r].renderMs = visits[k].ms
        }
    }

    /// hotwire-native: what a `stack.changed`'s `tree` (docs/PROTOCOL.md) shows that the tree
    /// before it did not: each native item pushed, with its url, screen and the url of the item
    /// below it in its stack.
    public static func nativePushes(before: JSONValue?, after: JSONValue) -> [(id: String, url: String, screen: String?, from: String?)] {
        var known = Set<String>()
        if let before { for stack in stacks(before) { for item in stack { if let id = item["id"]?.stringValue { known.insert(id) } } } }
        var out: [(id: String, url: String, screen: String?, from: String?)] = []
        for stack in stacks(after) {
            for (k, item) in stack.enumerated() where item["kind"]?.stringValue == "native" {
                guard let id = item["id"]?.stringValue, !known.contains(id) else { continue }
                out.append((id, item["url"]?.stringValue ?? "", item["screen"]?.stringValue, k > 0 ? stack[k - 1]["url"]?.stringValue : nil))
            }
        }
        return out
    }

    /// hotwire-native: the url of the top of a `tree`'s main stack (its active tab), the page a
    /// modal is presented from.
    public static func mainTop(_ tree: JSONValue?) -> String? {
        guard let tabs = tree?["tabs"]?.arrayValue, !tabs.isEmpty else { return nil }
        let active = tree?["activeTab"]?.stringValue
        let tab = tabs.first { $0["name"]?.stringValue == active } ?? tabs[0]
        return tab["stack"]?.arrayValue?.last?["url"]?.stringValue
    }

    /// The stacks of a `tree`: each tab's, then the modal's.
    static func stacks(_ tree: JSONValue) -> [[JSONValue]] {
        (tree["tabs"]?.arrayValue ?? []).map { $0["stack"]?.arrayValue ?? [] } + [tree["modal"]?.arrayValue ?? []]
    }

    /// The item ids of a stack in the seed's notation (`P1 W1(*P)~` → `P1`, `W1`).
    static func ids(_ rendering: String) -> [String] {
        rendering.split(separator: " ").map { String($0.prefix { $0 != "(" && $0 != "~" }) }
    }

    static func orderedUnique(_ xs: [String]) -> [String] {
        var seen = Set<String>()
        return xs.filter { seen.insert($0).inserted }
    }
}
