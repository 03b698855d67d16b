/// The rules of `bridged check --profile hotwire-native` (docs/CHECK.md, "Rules of the
/// hotwire-native profile"): a Turbo app inside a Hotwire Native shell. The Astro rules
/// (pwa-navigate, placeholders, foregrounds) do not apply to it. Pure, as `Rules`.
extension Rule {
    public static let visitNotRendered = Rule(id: "visit-not-rendered", summary: "A Turbo visit started (visitStarted) and did not render (no visitRendered) within --timeout-s.")
    public static let backWrongPage = Rule(id: "back-wrong-page", summary: "After native back (a pop, then a restore visit) the page shows another url than the screen it went back to.")
    public static let visitFailed = Rule(id: "visit-failed", summary: "A Turbo visit failed: the server answered HTTP 4xx/5xx (visitRequestFailed), or nothing usable; native shows its error screen.")
    public static let coldBootLink = Rule(id: "cold-boot-link", summary: "An in-app navigation loaded a new document instead of a Turbo visit (data-turbo=\"false\", location.href, a full page load).")
    public static let bridgeMessageIgnored = Rule(id: "bridge-message-ignored", summary: "A bridge component's message native ignores: its data.metadata.url is not the web view's url.")

    /// The rules of the hotwire-native profile, in the report's order.
    public static let hotwire: [Rule] = [visitNotRendered, backWrongPage, visitFailed, coldBootLink, bridgeMessageIgnored,
                                         pageError, loadFailed, pageUnresponsive, pageCrashed, navigationLoop, renderBudget, nothingExplored]

    /// Every rule of every profile.
    public static let every: [Rule] = all + hotwire.filter { r in !all.contains(r) }
        + capacitor.filter { r in !all.contains(r) && !hotwire.contains(r) }

    static let hotwireAdvice: [String: (text: String, snippet: String)] = [
        "visit-not-rendered": ("Let every Turbo visit render: a turbo:before-render listener that pauses the render (event.preventDefault()) must call event.detail.resume(); a page that never answers keeps native's spinner up.", """
            document.addEventListener("turbo:before-render", async (event) => {
              event.preventDefault();
              await animateOut();
              event.detail.resume();   // without it the visit never renders
            });
            """),
        "back-wrong-page": ("After native back Turbo restores the screen's url: do not move the page elsewhere on turbo:load (history.replaceState, Turbo.visit) when the visit is a restore.", """
            document.addEventListener("turbo:load", () => {
              // no history.replaceState / Turbo.visit here for a restore visit
            });
            """),
        "visit-failed": ("The link leads to a page the server answers with an error: fix the link or the route (native shows its error screen, not your error page).", ""),
        "cold-boot-link": ("Let Turbo take in-app links and forms: drop data-turbo=\"false\", use Turbo.visit(url) instead of location.href = url; a new document costs a cold boot, and the native screen loses its restoration identifier.", """
            <a href="/items">Items</a>            <!-- not data-turbo="false" -->
            Turbo.visit("/items");                 // not location.href = "/items"
            """),
        "bridge-message-ignored": ("Send bridge messages with the page's own url: the web library's BridgeComponent puts window.location.href in data.metadata.url; a message sent for another page (a cached or stale url) is dropped by native.", """
            this.send("connect", { submitTitle, metadata: { url: window.location.href } }, reply)
            """),
    ]
}

public enum HotwireRules {
    public static func evaluate(_ log: [Observation], options: RuleOptions) -> [Finding] {
        var out: [Finding] = []
        out += visits(log, options: options)
        out += failedVisits(log)
        out += back(log)
        out += coldBoots(log, options: options)
        out += bridgeMessages(log)
        out += pageErrors(log)
        out += Rules.loadFailures(log)
        out += Rules.runaways(log)
        return out.sorted { ($0.step, $0.t) < ($1.step, $1.t) }
    }

    static func ms(_ t: Double) -> String { Rules.ms(t) }

    static func isFailure(_ name: String) -> Bool {
        name == "visitRequestFailed" || name == "visitRequestFailedWithNonHttpStatusCode"
    }

    /// visit-not-rendered (and render-budget): every `visitStarted` needs its `visitRendered`
    /// (same identifier) within the timeout. A visit that failed is visit-failed's; one
    /// superseded by a later visit of the same web view before it rendered (Turbo cancels it:
    /// a redirect, a tap during a visit) is no finding.
    static func visits(_ log: [Observation], options: RuleOptions) -> [Finding] {
        var out: [Finding] = []
        struct Open { var at: Observation; var location: String; var id: String }
        var open: [Open] = []
        func messages(of id: String, from i: Int) -> [String] {
            log[i...].compactMap { o in
                guard case .turbo(let name, id?, _, _, _, _) = o.kind, name != "visitStarted" else { return nil }
                return "\(ms(o.t)) \(name)"
            }
        }
        func neverRendered(_ v: Open, why: String) {
            let i = log.firstIndex(of: v.at) ?? 0
            out.append(Finding(rule: .visitNotRendered, step: v.at.step, webview: v.at.webview, t: v.at.t,
                               message: "the Turbo visit of \(Rules.path(v.location)) in \(v.at.webview) never rendered (\(why))",
                               evidence: ["\(ms(v.at.t)) visitStarted {identifier: \(v.id), location: \(v.location)}"]
                                   + messages(of: v.id, from: i) + ["no visitRendered for \(v.id) (\(why))"]))
        }
        for o in log {
            switch o.kind {
            case .stack(_, "session.create"):
                for v in open { neverRendered(v, why: "the session was closed first") }
                open = []
            case .turbo("visitStarted", let id?, let location, _, _, _):
                open.removeAll { $0.at.webview == o.webview }
                open.append(Open(at: o, location: location ?? "?", id: id))
            case .turbo(let name, let id?, _, _, _, _) where isFailure(name):
                open.removeAll { $0.id == id }
            case .turbo("visitRendered", let id?, _, _, _, _):
                guard let k = open.firstIndex(where: { $0.id == id }) else { continue }
                let v = open.remove(at: k)
                let took = o.t - v.at.t
                if took > options.visitTimeoutMs {
                    out.append(Finding(rule: .visitNotRendered, step: v.at.step, webview: o.webview, t: o.t,
                                       message: "the Turbo visit of \(Rules.path(v.location)) in \(o.webview) rendered only after \(ms(took)), past the timeout of \(ms(options.visitTimeoutMs))",
                                       evidence: ["\(ms(v.at.t)) visitStarted {identifier: \(id), location: \(v.location)}", "\(ms(o.t)) visitRendered, late"]))
                } else if let budget = options.budgetMs, took > Double(budget) {
                    out.append(Finding(rule: .renderBudget, step: v.at.step, webview: o.webview, t: o.t,
                                       message: "the Turbo visit of \(Rules.path(v.location)) in \(o.webview) rendered in \(ms(took)), over the budget of \(budget) ms",
                                       evidence: ["\(ms(v.at.t)) visitStarted {identifier: \(id), location: \(v.location)}", "\(ms(o.t)) visitRendered"]))
                }
            default:
                break
            }
        }
        for v in open { neverRendered(v, why: "none within \(ms(options.visitTimeoutMs)) (--timeout-s), the check waited for it") }
        return out
    }

    /// visit-failed: every `visitRequestFailed` (with its HTTP status) and
    /// `visitRequestFailedWithNonHttpStatusCode`, once per web view, url and status.
    static func failedVisits(_ log: [Observation]) -> [Finding] {
        var out: [Finding] = []
        var seen = Set<String>()
        for (i, o) in log.enumerated() {
            guard case .turbo(let name, let id, let location, _, let status, _) = o.kind, isFailure(name) else { continue }
            let url = location ?? "?"
            guard seen.insert("\(o.webview) \(url) \(status ?? 0)").inserted else { continue }
            let what = (status ?? 0) > 0 ? "HTTP \(status!)" : "no HTTP answer (a network error or a redirect to another origin)"
            var evidence: [String] = []
            if let id, let started = log[..<i].last(where: { if case .turbo("visitStarted", id?, _, _, _, _) = $0.kind { return true } else { return false } }) {
                evidence.append("\(ms(started.t)) visitStarted {identifier: \(id), location: \(url)}")
            }
            evidence.append("\(ms(o.t)) \(name) {location: \(url), statusCode: \(status ?? 0)}")
            evidence.append("native puts the screen in its error state (its item's error: {statusCode: \(status ?? 0)})")
            out.append(Finding(rule: .visitFailed, step: o.step, webview: o.webview, t: o.t,
                               message: "the Turbo visit of \(Rules.path(url)) in \(o.webview) failed: \(what)", evidence: evidence))
        }
        return out
    }

    /// back-wrong-page: after a native back that uncovered a web screen, the page's location
    /// once the app settled must be that screen's url.
    static func back(_ log: [Observation]) -> [Finding] {
        var out: [Finding] = []
        for (i, o) in log.enumerated() {
            guard case .back("pop", let removed, let expected?) = o.kind else { continue }
            var restore: Observation?
            for later in log[(i + 1)...] {
                if case .back = later.kind { break }
                if case .step = later.kind { break }
                if restore == nil, later.webview == o.webview, case .turbo("visitStarted", _, _, _, _, _) = later.kind { restore = later }
                guard later.webview == o.webview, case .location(let url, _) = later.kind else { continue }
                if Rules.comparable(url) != Rules.comparable(expected) {
                    var evidence = ["\(ms(o.t)) native back: pop\(removed.map { " (\($0) removed)" } ?? ""), \(o.webview) uncovers the screen of \(expected)"]
                    if let r = restore, case .turbo(_, _, let location, _, _, _) = r.kind {
                        evidence.append("\(ms(r.t)) restore visit started: \(location ?? "?")")
                    }
                    evidence.append("\(ms(later.t)) the page's location: \(url)")
                    out.append(Finding(rule: .backWrongPage, step: o.step, webview: o.webview, t: later.t,
                                       message: "after native back \(o.webview) shows \(Rules.path(url)) instead of \(Rules.path(expected))",
                                       evidence: evidence))
                }
                break
            }
        }
        return out
    }

    /// cold-boot-link: the page began loading another document of the app's host (Hotwire
    /// Native's same-host rule: any port, http or https).
    static func coldBoots(_ log: [Observation], options: RuleOptions) -> [Finding] {
        var out: [Finding] = []
        let appHost = host(options.appOrigin)
        for o in log {
            guard case .documentLoad(let url, let via) = o.kind, host(url) == appHost else { continue }
            var evidence = ["\(ms(o.t)) the page began loading a new document: \(url) (\(via)), not a Turbo visit"]
            // The page's log is read after the step's controller events: the stack change
            // native made of the stopped load is anywhere in the same step.
            let sameStep = log.filter { $0.step == o.step && $0.step >= 0 }
            if let changed = sameStep.first(where: { if case .stack(_, let c) = $0.kind { return c.hasPrefix("hotwire:") } else { return false } }),
               case .stack(let rendering, let cause) = changed.kind {
                evidence.append("native got no visitProposed for it; the stack became \(rendering) (\(cause))")
            }
            out.append(Finding(rule: .coldBootLink, step: o.step, webview: o.webview, t: o.t,
                               message: "\(o.webview) loaded \(Rules.path(url)) as a new document (\(via)) instead of a Turbo visit",
                               evidence: evidence))
        }
        return out
    }

    /// bridge-message-ignored: every `bridge.message` the daemon reported as ignored.
    static func bridgeMessages(_ log: [Observation]) -> [Finding] {
        log.compactMap { o in
            guard case .bridgeMessage(let component, let event, let url, true, let reason) = o.kind else { return nil }
            return Finding(rule: .bridgeMessageIgnored, step: o.step, webview: o.webview, t: o.t,
                           message: "native ignores the \(component) component's \(event) message in \(o.webview): \(reason ?? "its url is not the web view's")",
                           evidence: ["\(ms(o.t)) bridge.message {component: \(component), event: \(event), data.metadata.url: \(url ?? "none")}",
                                      "ignored: \(reason ?? "?")"])
        }
    }

    /// page-error: the page's uncaught exceptions and console errors (the probe), and iOS's
    /// `errorRaised` (added to the probe's finding for the same step and web view, else one of
    /// its own).
    static func pageErrors(_ log: [Observation]) -> [Finding] {
        var out = Rules.pageErrors(log)
        for o in log {
            guard case .turbo("errorRaised", _, _, _, _, let error) = o.kind else { continue }
            let line = "\(ms(o.t)) errorRaised {error: \(error ?? "?")} (native got it)"
            if let k = out.firstIndex(where: { $0.step == o.step && $0.webview == o.webview && $0.message.hasPrefix("uncaught") }) {
                out[k].evidence.append(line)
            } else {
                out.append(Finding(rule: .pageError, step: o.step, webview: o.webview, t: o.t,
                                   message: "uncaught exception in \(o.webview): \(error ?? "?")", evidence: [line]))
            }
        }
        return out
    }

    /// The host of a url, lowercased, without the port.
    static func host(_ url: String) -> String? {
        guard let o = Rules.origin(url), let r = o.range(of: "://") else { return nil }
        var h = String(o[r.upperBound...])
        if let at = h.lastIndex(of: "@") { h = String(h[h.index(after: at)...]) }
        if h.hasPrefix("[") { return h.prefix { $0 != "]" } + "]" }
        return h.split(separator: ":").first.map(String.init) ?? h
    }
}
