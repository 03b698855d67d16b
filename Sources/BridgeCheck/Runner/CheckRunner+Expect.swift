import BridgeProtocol
import Foundation

/// What a step shows: an `expect` compared until it holds, the placeholders' snapshots and the
/// screen after it.
extension CheckRunner {
    /// An `expect` step, as Playwright's web-first assertions: compared again until it holds or
    /// `timeout` has passed (each time once the app is still, or at the deadline); nil when it
    /// held, else what differed the last time (and why the app was not still).
    func expect(stack want: String?, url: String?, title: String?) throws -> String? {
        let deadline = Date().addingTimeInterval(options.timeout)
        var problems: [String] = []
        var unsettled: String?
        repeat {
            unsettled = try settle(within: max(0.05, deadline.timeIntervalSinceNow))
            problems = []
            let rendering = Self.render(stack)
            if let want, !Steps.stackMatches(rendering, expected: want) { problems.append("the stack is \(rendering), expected \(want)") }
            if url != nil || title != nil {
                let w = top
                if let v = try ctl.soft({ try evaluate(w, PageProbe.location) }) {
                    let haveURL = v["url"]?.stringValue ?? "", haveTitle = v["title"]?.stringValue ?? ""
                    if let url, haveURL != url { problems.append("the url is \(haveURL), expected \(url)") }
                    if let title, haveTitle != title { problems.append("the title is \"\(haveTitle)\", expected \"\(title)\"") }
                } else {
                    problems.append("the page of \(w) \(dead(w) ?? "did not answer") (its url and title could not be read)")
                }
            }
            // A page that stopped answering will not come to hold it.
            if problems.isEmpty || dead(top) != nil || sessionEnded != nil { break }
            try ctl.pump(min(0.1, max(0, deadline.timeIntervalSinceNow)))
            stackStale = true
            try refreshStack()
        } while Date() < deadline
        guard !problems.isEmpty else { return nil }
        let waited = "(compared again for \(Int(options.timeout)) s, --timeout-s)"
        return ((unsettled.map { ["the app did not settle within \(Int(options.timeout)) s (--timeout-s): \($0)"] } ?? []) + problems).joined(separator: "; ")
            + (dead(top) == nil ? " " + waited : "")
    }

    /// The placeholders on the stack, with their snapshots as `data:` URIs.
    func snapshots() throws -> [(placeholder: String, dataURI: String)] {
        try stack.compactMap { item -> (placeholder: String, dataURI: String)? in
            guard item["kind"]?.stringValue == "placeholder", let p = item["id"]?.stringValue,
                  let v = try ctl.soft({ try ctl.call("placeholder.snapshot", ["session": sid, "placeholder": .string(p)], timeout: controlTimeout) }),
                  let data = v["data"]?.stringValue else { return nil }
            return (p, "data:\(v["mimeType"]?.stringValue ?? "image/jpeg");base64,\(data)")
        }
    }

    /// The screen as the user sees it (the top web view), as a `data:` URI, up to
    /// `maxScreenshots`; none of a page that stopped answering (its tab draws nothing new).
    func screenshot() throws -> String? {
        let w = top
        guard screenshots < options.maxScreenshots, dead(w) == nil, sessionEnded == nil,
              let v = try ctl.soft({ try pageCall("session.screenshot", w, webview: false) }), let data = v["data"]?.stringValue else { return nil }
        screenshots += 1
        return "data:\(v["mimeType"]?.stringValue ?? "image/jpeg");base64,\(data)"
    }
}
