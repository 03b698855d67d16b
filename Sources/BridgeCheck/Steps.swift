import Yams

/// One step of a `--steps` file.
public enum Step: Equatable, Sendable, CustomStringConvertible {
    /// Click the first element matching a CSS selector in the web view on top.
    case click(String)
    /// Type text into the element matching the selector.
    case type(selector: String, text: String)
    /// The host's back (`navigation.back`).
    case back
    /// A classic navigation by the host (`navigation.navigateToUrl`).
    case navigate(String)
    /// A deep link (`deeplink.open`; with no routing configuration, a classic navigation).
    case deeplink(String)
    /// Wait until no foreground is up (the last navigation rendered, or its timer fired).
    case waitRendered
    case waitMs(Int)
    /// Compare the stack (seed notation, `P1 W1(*P)`; ids only `P1 W1` also matches), the top
    /// page's url and title.
    case expect(stack: String?, url: String?, title: String?)

    public var description: String {
        switch self {
        case .click(let s): return "click: \(s)"
        case .type(let s, let t): return "type: {selector: \(s), text: \(t)}"
        case .back: return "back"
        case .navigate(let u): return "navigate: \(u)"
        case .deeplink(let u): return "deeplink: \(u)"
        case .waitRendered: return "wait: rendered"
        case .waitMs(let ms): return "wait: \(ms)"
        case .expect(let stack, let url, let title):
            var parts: [String] = []
            if let stack { parts.append("stack: \"\(stack)\"") }
            if let url { parts.append("url: \(url)") }
            if let title { parts.append("title: \(title)") }
            return "expect: {\(parts.joined(separator: ", "))}"
        }
    }
}

public struct StepsError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public enum Steps {
    /// The longest wait a step may ask for (ms).
    public static let maxWaitMs = 600_000
    /// The most steps in one file.
    public static let maxSteps = 10_000

    /// Parses a steps file: a YAML list of steps, or a mapping with a `steps:` list.
    public static func parse(_ yaml: String) throws(StepsError) -> [Step] {
        let node: Node?
        do { node = try Yams.compose(yaml: yaml) } catch { throw StepsError("the steps file is not valid YAML: \(error)") }
        guard let node else { throw StepsError("the steps file is empty: give a list of steps (see docs/CHECK.md)") }
        var list: Node.Sequence
        if let seq = node.sequence {
            list = seq
        } else if let map = node.mapping, let seq = map["steps"]?.sequence {
            list = seq
        } else {
            throw StepsError("the steps file must be a list of steps (or a mapping with a `steps:` list)")
        }
        guard list.count <= maxSteps else { throw StepsError("\(list.count) steps: at most \(maxSteps)") }
        var steps: [Step] = []
        for (i, item) in list.enumerated() {
            steps.append(try step(item, number: i + 1))
        }
        return steps
    }

    static func step(_ node: Node, number n: Int) throws(StepsError) -> Step {
        let at = "step \(n)\(node.mark.map { " (line \($0.line))" } ?? "")"
        if let s = node.scalar?.string {
            if s == "back" { return .back }
            throw StepsError("\(at): unknown step \"\(s)\"; a bare step can only be `back` (others take a value, e.g. `click: a.next`)")
        }
        guard let map = node.mapping, map.count == 1, let (k, v) = map.first, let key = k.string else {
            throw StepsError("\(at): a step is one `name: value` pair (click, type, back, navigate, deeplink, wait, expect)")
        }
        func text(_ what: String) throws(StepsError) -> String {
            guard let s = v.scalar?.string, !s.isEmpty else { throw StepsError("\(at): `\(key)` needs \(what)") }
            return s
        }
        switch key {
        case "click": return .click(try text("a CSS selector"))
        case "navigate": return .navigate(try text("a URL"))
        case "deeplink": return .deeplink(try text("a URL"))
        case "back": return .back
        case "type":
            guard let m = v.mapping, let sel = m["selector"]?.string, let t = m["text"]?.string else {
                throw StepsError("\(at): `type` needs {selector: CSS, text: TEXT}")
            }
            let unknown = m.keys.compactMap(\.string).filter { $0 != "selector" && $0 != "text" }
            if let u = unknown.first { throw StepsError("\(at): `type` has no `\(u)` (only selector and text)") }
            return .type(selector: sel, text: t)
        case "wait":
            let s = try text("`rendered` or a number of milliseconds")
            if s == "rendered" { return .waitRendered }
            guard let ms = Int(s), ms >= 0 else { throw StepsError("\(at): `wait` is `rendered` or a number of milliseconds, not \"\(s)\"") }
            guard ms <= maxWaitMs else { throw StepsError("\(at): `wait: \(ms)` is longer than the most a step may wait (\(maxWaitMs) ms)") }
            return .waitMs(ms)
        case "expect":
            guard let m = v.mapping else { throw StepsError("\(at): `expect` needs a mapping {stack, url, title}") }
            let unknown = m.keys.compactMap(\.string).filter { !["stack", "url", "title"].contains($0) }
            if let u = unknown.first { throw StepsError("\(at): `expect` has no `\(u)` (stack, url, title)") }
            let e = Step.expect(stack: m["stack"]?.string, url: m["url"]?.string, title: m["title"]?.string)
            if case .expect(nil, nil, nil) = e { throw StepsError("\(at): `expect` needs at least one of stack, url, title") }
            return e
        default:
            throw StepsError("\(at): unknown step `\(key)` (click, type, back, navigate, deeplink, wait, expect)")
        }
    }

    /// Whether a stack matches an expectation: the seed notation exactly, or the ids alone
    /// (`P1 W1` matches `P1 W1(*P)`).
    public static func stackMatches(_ rendering: String, expected: String) -> Bool {
        let norm = { (s: String) in s.split(separator: " ").map(String.init) }
        let have = norm(rendering), want = norm(expected)
        guard have.count == want.count else { return false }
        for (h, w) in zip(have, want) {
            if h == w { continue }
            if w.contains("(") || w.hasSuffix("~") { return false }
            let id = h.prefix { $0 != "(" && $0 != "~" }
            if id != w { return false }
        }
        return true
    }
}
