import BridgeProtocol
import Foundation

/// Exploring: breadth-first over what a user can tap, every path from the start page.
extension CheckRunner {
    struct Link {
        /// The absolute url, or `role=link "text"` for a role=link without one.
        var key: String
        var href: String?
        var kind: String
        var text: String
        var blank: Bool
        var sameOrigin: Bool
        var selector: String

        var described: String {
            let shown = href.map { sameOrigin ? Rules.path($0) : $0 }
            var s: String
            if let shown {
                let tag = kind.hasSuffix("[routerLink]") ? String(kind.dropLast(12)) + "[routerLink" : kind.hasSuffix("[href]") ? String(kind.dropLast(6)) + "[href" : kind + "[href"
                s = "\(tag)=\"\(shown)\"]"
            } else {
                s = "\(kind) \"\(text)\""
            }
            if blank { s += " target=_blank" }
            return s
        }
    }

    /// What a user can tap on the top page; none on a page that is not connected, stopped
    /// answering or crashed. A read that failed otherwise (the document going away under it) is
    /// tried again once the app is still; `unreadable` says why when that failed too.
    func links(unreadable: ((String) -> Void)? = nil) throws -> [Link] {
        let w = top
        if let why = dead(w) { unreadable?("the page of \(w) \(why)"); return [] }
        guard connected.contains(w) else { unreadable?("the page of \(w) is not connected"); return [] }
        var value: JSONValue?
        var problem = ""
        for attempt in 0..<2 {
            if attempt > 0 {
                _ = try settle()
                if let why = dead(top) { unreadable?("the page of \(top) \(why)"); return [] }
            }
            do {
                value = try evaluate(top, capacitor ? PageProbe.tappables : PageProbe.links)
                break
            } catch let e as ControllerClient.CallError {
                problem = "\(e.code): \(e.message)"
                if dead(top) != nil { break }
            }
        }
        guard let v = value else { unreadable?("its links could not be read (\(dead(top).map { "the page of \(top) \($0)" } ?? problem))"); return [] }
        return (v.arrayValue ?? []).compactMap { l in
            guard let key = l["key"]?.stringValue, let s = l["selector"]?.stringValue else { return nil }
            return Link(key: key, href: l["href"]?.stringValue, kind: l["kind"]?.stringValue ?? "a", text: l["text"]?.stringValue ?? "",
                        blank: l["blank"]?.boolValue ?? false, sameOrigin: l["sameOrigin"]?.boolValue ?? false, selector: s)
        }
    }

    /// The top page's location as last collected.
    func currentURL() -> String {
        // A native screen on top (hotwire-native) is its own state: its url.
        if let last = stack.last, last["kind"]?.stringValue == "native", let u = last["url"]?.stringValue { return u }
        // A page that stopped answering was not read after the step: where the stack says it is.
        if dead(top) != nil { return lastURL(of: top) }
        if case .location(let u, _)? = log.last(where: { if case .location = $0.kind { return $0.webview == top } else { return false } })?.kind { return u }
        return url(of: top)
    }

    /// One web view on the stack, nothing else, on the start url.
    func atStart(_ startURL: String) -> Bool {
        if capacitor { return sessionEnded == nil && dead(top) == nil && atStartScreen() }
        return stack.count == 1 && dead(top) == nil && Rules.comparable(currentURL()) == Rules.comparable(startURL)
    }

    /// Breadth-first over the states reachable by taps: each path is walked forward from the
    /// start page, then undone with the host's back once per tap. When the backs did not bring
    /// the start page back on top, alone, the next path starts in a fresh session on the start
    /// url. Links of the app's origin are followed further; one to another origin is tapped once
    /// (that is how the external-link trap shows) and not followed.
    func explore() throws {
        let startURL = currentURL()
        states = [CheckReport.State(url: startURL, via: [], steps: 0..<0, start: "the start page as loaded")]
        var seen: Set<String> = [Rules.comparable(startURL)]
        let first = try links { why in if self.startUnreadable == nil { self.startUnreadable = why } }
        startLinks = first
        // Links already queued (or the start page itself), by their comparable key.
        var queued: Set<String> = [Rules.comparable(startURL)]
        var queue: [[Link]] = []
        // A Capacitor app's links out of it open outside the app: never followed.
        let follows = { (l: Link) in !self.capacitor || l.sameOrigin }
        for l in first where follows(l) && queued.insert(Rules.comparable(l.key)).inserted { queue.append([l]) }
        var n = 0
        var how = "the start page as loaded"
        // capacitor: buttons that change nothing are tapped too; the paths walked are bounded
        // so that a screen of many of them does not make the run endless.
        var paths = 0
        while !queue.isEmpty, states.count < options.maxStates, !capacitor || paths < Self.maxPaths(options.maxStates) {
            let path = queue.removeFirst()
            paths += 1
            if n > 0 {
                if atStart(startURL) {
                    how = "the start page, back by \(backName)"
                } else {
                    let was = "\(Self.render(stack)) on \(Rules.path(currentURL()))" + (dead(top).map { ", whose page \($0)" } ?? "")
                    try openSession()
                    freshSessions += 1
                    how = "a fresh session on the start page (\(backName) left \(was))"
                }
            }
            let from = n
            var walked = 0
            var reached = true
            /// The screen before the last tap (capacitor: a tap that changed the screen but not
            /// the url reached a state of its own).
            var beforeTap: (url: String, digest: String)?
            for link in path {
                guard let l = try links().first(where: { $0.key == link.key }) else {
                    reached = false
                    missed.append("\(link.described) (after \(path.prefix(walked).map(\.described).joined(separator: " → ")))")
                    break
                }
                beforeTap = lastScreen()
                try perform(.click(l.selector), index: n, describedAs: "click: \(l.described)")
                tapped += 1
                n += 1
                walked += 1
            }
            var newState: Int?
            if reached, sessionEnded == nil {
                let here = currentURL()
                var key = Rules.comparable(here)
                if capacitor, let b = beforeTap, let now = lastScreen(), Rules.comparable(b.url) == key, b.digest != now.digest {
                    key += " [screen \(now.digest)]"
                }
                if seen.insert(key).inserted {
                    states.append(CheckReport.State(url: here, via: path.map(\.described), steps: from..<n, start: how))
                    newState = states.count - 1
                    if Rules.origin(here) == Rules.origin(options.url) {
                        for l in try links() where follows(l) && !seen.contains(Rules.comparable(l.key)) && queued.insert(Rules.comparable(l.key)).inserted {
                            queue.append(path + [l])
                        }
                    }
                }
            }
            for _ in 0..<walked {
                // As a user would: no back once the start screen shows again (or the app is gone).
                if capacitor, sessionEnded != nil || atStartScreen() { break }
                // iOS has no back button: at the start url the page has nothing of the app to go
                // back to (a screen over it, a menu, is left to a fresh session).
                if capacitor, platform == "ios", let s = startScreen, Rules.comparable(currentURL()) == Rules.comparable(s.url) { break }
                try perform(.back, index: n, describedAs: "back")
                n += 1
            }
            if let i = newState { states[i].steps = from..<n }
        }
        if capacitor { try deepLinks(startURL, step: &n) }
    }

    /// capacitor: the most paths exploring walks (ten per state asked for, at least 50).
    static func maxPaths(_ maxStates: Int) -> Int { max(50, maxStates * 10) }

    /// What a back is called in the state list: native back (`navigation.back` pops a screen)
    /// for a Hotwire app, the host's back for an Astro one.
    var backName: String {
        if capacitor { return platform == "ios" ? "history.back() (iOS has no back button)" : "Android's hardware back" }
        return hotwire ? "native back" : "the host's back"
    }

    /// Why exploring reached no state of the app but the start page; nil when it did.
    func nothingExplored() -> (message: String, evidence: [String])? {
        let app = Rules.origin(options.url)
        let inApp = states.filter { Rules.origin($0.url) == app }
        guard inApp.count <= 1 else { return nil }
        let start = states.first?.url ?? options.url
        var evidence = ["the start page: \(start)"]
        let message: String
        if options.maxStates == 1 {
            message = "--max-states 1 explores nothing but the start page: give at least 2, or run steps (--steps)"
        } else if startLinks.isEmpty, let why = startUnreadable {
            message = "nothing could be explored: \(why)"
        } else if startLinks.isEmpty, capacitor {
            message = "nothing to tap on the start page: no link or button was found (elements with href or routerLink, role=link, buttons, ion-button, ion-tab-button, ion-menu-toggle, role=button, in the document and open shadow roots; visible and enabled ones only)"
        } else if startLinks.isEmpty {
            message = "no link found on the start page: nothing a user can tap was found (<a href>, elements with href or routerLink, role=link, in the document and open shadow roots; visible ones only)"
        } else if startLinks.allSatisfy({ !$0.sameOrigin }), capacitor {
            message = "every link on the start page leads out of the app (\(startLinks.count) link\(startLinks.count == 1 ? "" : "s")), which a Capacitor app opens outside: no state of the app was reached"
            evidence += startLinks.prefix(10).map { "link: \($0.described)" }
        } else if startLinks.allSatisfy({ !$0.sameOrigin }) {
            message = "every link on the start page leads to another origin (\(startLinks.count) link\(startLinks.count == 1 ? "" : "s")): no state of the app was reached"
            evidence += startLinks.prefix(10).map { "link: \($0.described)" }
        } else {
            message = "\(tapped) tap\(tapped == 1 ? "" : "s") on \(startLinks.count) link\(startLinks.count == 1 ? "" : "s"), none reached another state of the app (the page stayed at \(Rules.path(start)))"
            evidence += startLinks.prefix(10).map { "link: \($0.described)" }
        }
        evidence += missed.prefix(10).map { "not found when its path was walked: \($0)" }
        return (message, evidence)
    }

    func perform(_ s: Step, index: Int, describedAs: String) throws {
        try perform(s, index: index)
        stepResults[stepResults.count - 1].description = describedAs
    }
}
