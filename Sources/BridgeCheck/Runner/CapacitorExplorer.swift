import BridgeProtocol
import Foundation

/// `--profile capacitor`: one web view whose routes are the app's own (pushState). The explorer
/// taps links and buttons (Ionic's `ion-item`, `ion-tab-button`, `ion-button`, … in open shadow
/// roots too) and comes back as the device would: Android's hardware back (`navigation.back`:
/// the app's `backButton` listener, else the web view's history), on iOS, which has none, the
/// app's own back (`history.back()`). Then it sends deep links to routes it reached.
extension CheckRunner {
    /// The session's platform (`--platform`; a capacitor session is Android's by default).
    var platform: String { options.session.params["platform"]?.stringValue ?? "android" }

    /// How many deep links exploring sends (to the first routes it reached).
    static let maxDeepLinks = 3

    /// The back of a capacitor app: Android's hardware back; on iOS (no back button) the
    /// app's own, `history.back()` in the page, unless an in-app browser shows (its close).
    func capacitorBack() throws {
        let w = top
        if platform == "ios", stack.count <= 1 {
            _ = try pageCall("webview.evaluate", w, ["expression": "(history.back(), true)"])
            log.append(Observation(t: now, webview: w, step: step, .back(action: "history.back", placeholder: nil, url: nil)))
            return
        }
        let r = try ctl.call("navigation.back", ["session": sid], timeout: controlTimeout)
        let action = r["action"]?.stringValue ?? "none"
        log.append(Observation(t: now, webview: w, step: step, .back(action: action, placeholder: nil, url: nil)))
        if let s = r["stack"]?.arrayValue { stack = s; navigatedTo = [:] }
    }

    /// A deep link as the system delivers it to the app (`navigation.openUrl`: `appUrlOpen`).
    func capacitorDeepLink(_ url: String) throws {
        let r = try ctl.call("navigation.openUrl", ["session": sid, "url": .string(url)], timeout: controlTimeout)
        log.append(Observation(t: now, webview: top, step: step, .deepLink(url: url, delivered: r["delivered"]?.boolValue ?? false)))
    }

    /// The screen last read in this session (its url and digest).
    func lastScreen() -> (url: String, digest: String)? {
        for o in log.reversed() {
            if case .screen(let u, let d) = o.kind { return (u, d) }
            if case .stack(_, "session.create") = o.kind { return nil }
        }
        return nil
    }

    /// Whether the app shows the screen it started on: the same url and the same visible text,
    /// nothing over it (no in-app browser).
    func atStartScreen() -> Bool {
        guard let s = startScreen, let here = lastScreen(), stack.count <= 1 else { return false }
        return Rules.comparable(s.url) == Rules.comparable(here.url) && s.digest == here.digest
    }

    /// Deep links to the routes exploring reached (other than the start), each from the start
    /// screen: the app's `appUrlOpen` listener should bring the route up. An app with no such
    /// listener (the link is not delivered, native keeps it) gets one only.
    func deepLinks(_ startURL: String, step n: inout Int) throws {
        let app = Rules.origin(options.url)
        // Routes are what the app's own web view showed (W1): not an in-app browser's page.
        let routes = Set(log.compactMap { o -> String? in
            guard o.webview == "W1", case .screen(let url, _) = o.kind else { return nil }
            return Rules.comparable(url)
        })
        var done = Set<String>()
        for state in states.dropFirst() where Rules.origin(state.url) == app && Rules.comparable(state.url) != Rules.comparable(startURL)
            && routes.contains(Rules.comparable(state.url)) {
            guard done.insert(Rules.comparable(state.url)).inserted else { continue }
            if done.count > Self.maxDeepLinks { break }
            if !atStart(startURL), platform != "ios", sessionEnded == nil, dead(top) == nil, lastScreen() != nil {
                try perform(.back, index: n, describedAs: "back")
                n += 1
            }
            if !atStart(startURL) {
                try openSession()
                freshSessions += 1
            }
            if sessionEnded != nil || dead(top) != nil { break }
            try perform(.deeplink(state.url), index: n, describedAs: "deeplink: \(state.url)")
            n += 1
            if case .deepLink(_, false)? = log.last(where: { if case .deepLink = $0.kind { return true } else { return false } })?.kind { break }
        }
    }
}
