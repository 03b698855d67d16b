import BridgeProtocol

/// Stacks drawn in the seed's notation: one box per item, bottom first, the web views marked
/// `(*P)` (PWA) or `(*C)` (classic), `~` when no page is connected.
///
///     +----+ +--------+
///     | P1 | | W1(*P) |
///     +----+ +--------+
public enum StackDiagram {
    /// The three lines of boxes for a rendering such as `P1 W1(*P) W2(*C)`; an empty stack
    /// draws `(empty)`.
    public static func boxes(_ rendering: String) -> [String] {
        let items = rendering.split(separator: " ").map(String.init)
        guard !items.isEmpty else { return ["(empty)"] }
        var top = "", mid = "", bottom = ""
        for (n, item) in items.enumerated() {
            let sep = n == 0 ? "" : " "
            let bar = String(repeating: "-", count: item.count + 2)
            top += sep + "+" + bar + "+"
            mid += sep + "| " + item + " |"
            bottom += sep + "+" + bar + "+"
        }
        return [top, mid, bottom]
    }

    /// What an input was, in a few words: the request's method or the event's name and the
    /// connection, or the timer, the sweep, a connection opening or closing.
    public static func describe(_ input: BridgeInput) -> String {
        switch input {
        case .connected(let c, _, _): return "connection \(c) opened"
        case .left(let c): return "connection \(c) closed"
        case .binaryFrame(let c): return "binary frame from \(c)"
        case .timerFired(let key): return "foreground timer \(key.token) of session \(key.session) fired"
        case .sweep: return "idle sweep"
        case .openBrowserSession(let url, let profile, _):
            return "bridged open \(url)" + (profile.isPlain ? "" : " --profile \(profile.name)")
        case .host(let result):
            switch result {
            case .tabOpened(let s, let w, _, _): return "the browser opened \(w)'s tab of \(s)"
            case .tabFailed(let s, let w, _, let reason): return "\(w)'s tab of \(s) failed: \(reason)"
            case .snapshotTaken(_, let w, _): return "the browser took \(w)'s snapshot"
            case .navigationStopped(let stop): return "the browser stopped \(stop.webview)'s navigation to \(stop.url)"
            case .historyTraversed(_, let w): return "\(w)'s page went back in its history"
            case .urlChanged(_, let w, let url): return "\(w)'s page is at \(url)"
            case .answered(let r, _): return "the browser answered \(r)"
            case .browserCrashed: return "the browser crashed"
            case .pathConfigurationFetched(let s, let url, .document): return "the browser fetched \(s)'s path configuration \(url)"
            case .pathConfigurationFetched(let s, let url, .failed(let why)): return "\(s)'s path configuration \(url) failed: \(why)"
            case .shell(let event): return "the browser's shell: \(event.traceFields["what"]?.stringValue ?? "event") of \(event.traceFields["webview"]?.stringValue ?? "") of \(event.traceFields["session"]?.stringValue ?? "")"
            }
        case .frame(let c, let bytes):
            guard let v = try? JSONParser.parse(bytes, maxDepth: 64) else { return "unparsable frame from \(c)" }
            if let m = v["method"]?.stringValue { return "\(m) from \(c)" }
            if let e = v["event"]?.stringValue { return "event \(e) from \(c)" }
            return "frame from \(c)"
        }
    }

    /// The stack after each transition of a trace, with the line, the time since the first
    /// event and what caused it.
    public static func render(_ trace: Trace) -> String {
        var out: [String] = []
        let t0 = trace.events.first?.event.time ?? 0
        var cause = ""
        for (line, event) in trace.events {
            switch event {
            case .input(let input, _, _):
                cause = describe(input)
            case .stack(let session, let stack, let t):
                let ms = Double(t - t0) / 1000
                let when = (ms * 10).rounded() / 10
                out.append("line \(line)  +\(when) ms  \(session)  \(cause)")
                if let stack {
                    out.append("  " + stack)
                    for b in boxes(stack) { out.append("  " + b) }
                } else {
                    out.append("  (session closed)")
                }
            default:
                break
            }
        }
        if out.isEmpty { return "no stack changes in this trace\n" }
        return out.joined(separator: "\n") + "\n"
    }
}
