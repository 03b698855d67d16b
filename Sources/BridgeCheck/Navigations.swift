/// One navigation as the summary table shows it.
public struct NavigationRow: Equatable, Sendable {
    public enum Kind: String, Sendable { case push, back, classic }
    public var step: Int
    public var webview: String
    public var from: String
    public var to: String
    public var kind: Kind
    /// pwa-navigate to its reply, on the page's clock (push only).
    public var replyMs: Double?
    /// The foreground's time up (push and back-swap), as the daemon measured it.
    public var renderMs: Int?
    /// "ok", or the ids of the rules broken during it.
    public var verdict: String
}

public enum Navigations {
    /// The navigations of a log, with the findings of the same step and web view as verdicts.
    public static func rows(_ log: [Observation], findings: [Finding]) -> [NavigationRow] {
        var rows: [NavigationRow] = []
        var current: [String: String] = [:]
        var sent: [String: (Double, Int)] = [:]  // web view -> (time sent, row)
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
        for o in log {
            switch o.kind {
            case .navigateSent(let url):
                rows.append(NavigationRow(step: o.step, webview: o.webview, from: current[o.webview] ?? "?", to: url, kind: .push, verdict: "ok"))
                rows[rows.count - 1].renderMs = nextRemoval(o.step, o.webview)
                sent[o.webview] = (o.t, rows.count - 1)
                current[o.webview] = url
            case .navigateReplied:
                if let (t, i) = sent.removeValue(forKey: o.webview) {
                    rows[i].replyMs = ((o.t - t) * 10).rounded() / 10
                }
            case .back(let action, let p, let url):
                let to = url ?? "(\(action))"
                rows.append(NavigationRow(step: o.step, webview: o.webview, from: current[o.webview] ?? "?", to: p.map { "\(to) [\($0)]" } ?? to, kind: .back, verdict: "ok"))
                if action == "swap" { rows[rows.count - 1].renderMs = nextRemoval(o.step, o.webview) }
                if let url { current[o.webview] = url }
            case .webviewOpened(let url):
                let from = current.values.first ?? "?"
                rows.append(NavigationRow(step: o.step, webview: o.webview, from: from, to: url, kind: .classic, verdict: "ok"))
                current[o.webview] = url
            case .location(let url, _):
                current[o.webview] = url
            case .history(_, let url):
                current[o.webview] = url
            default:
                break
            }
        }
        for i in rows.indices {
            let ids = orderedUnique(findings.filter { $0.step == rows[i].step && ($0.webview == rows[i].webview || $0.webview.isEmpty) }.map(\.rule))
            if !ids.isEmpty { rows[i].verdict = ids.joined(separator: ",") }
        }
        return rows
    }

    static func orderedUnique(_ xs: [String]) -> [String] {
        var seen = Set<String>()
        return xs.filter { seen.insert($0).inserted }
    }
}
