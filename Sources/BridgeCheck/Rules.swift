import Foundation

/// The rules a PWA must keep to be app-aware, and their evaluation over an observation log.
/// Pure: the same log always gives the same findings.
public struct Rule: Equatable, Sendable {
    public let id: String
    public let summary: String

    public static let domBeforeReply = Rule(id: "dom-before-reply", summary: "The DOM changed before the reply to pwa-navigate reached the page.")
    public static let pushWithoutNavigate = Rule(id: "push-without-navigate", summary: "A new state was pushed (pushState, a URL change) without pwa-navigate.")
    public static let navigateOnPopOrReplace = Rule(id: "navigate-on-pop-or-replace", summary: "pwa-navigate was sent for a POP (going back) or a REPLACE.")
    public static let renderTimeout = Rule(id: "render-timeout", summary: "No pwa-rendered before the fallback timer after pwa-navigate (the app relies on the fallback, or reports late).")
    public static let noRenderAfterBack = Rule(id: "no-render-after-back", summary: "No pwa-rendered after a back before the fallback timer.")
    public static let backWrongState = Rule(id: "back-wrong-state", summary: "After a back-swap the page shows a state other than the placeholder's URL.")
    public static let externalLinkTrap = Rule(id: "external-link-trap", summary: "A link left the app for another origin inside the web view, with no way back.")
    public static let pageError = Rule(id: "page-error", summary: "An uncaught exception or a console error during a navigation.")
    public static let renderBudget = Rule(id: "render-budget", summary: "A render slower than --budget-ms.")

    public static let backStuck = Rule(id: "back-stuck", summary: "A back of the host changed nothing while the page was not at its start: the user is stuck.")
    public static let loadFailed = Rule(id: "load-failed", summary: "A web view's page could not load.")
    public static let nothingExplored = Rule(id: "nothing-explored", summary: "Exploring reached no state of the app but the start page.")
    public static let pageUnresponsive = Rule(id: "page-unresponsive", summary: "A page stopped answering: a script that never returns, or a JavaScript dialog nobody answered.")
    public static let pageCrashed = Rule(id: "page-crashed", summary: "A web view's page crashed (its renderer died).")
    public static let navigationLoop = Rule(id: "navigation-loop", summary: "A page opened web views past the session's live-tab limit (a navigation or window.open loop).")

    /// The rules of what became of a page, judged under every profile.
    public static let runaway: [Rule] = [pageUnresponsive, pageCrashed, navigationLoop]

    public static let all: [Rule] = [domBeforeReply, pushWithoutNavigate, navigateOnPopOrReplace, renderTimeout,
                                     noRenderAfterBack, backWrongState, externalLinkTrap, pageError, backStuck, loadFailed,
                                     pageUnresponsive, pageCrashed, navigationLoop, renderBudget, nothingExplored]

    /// What to change in the app when the rule is broken, and a short snippet.
    public var advice: (text: String, snippet: String)? { Rule.advice[id] ?? Rule.hotwireAdvice[id] ?? Rule.capacitorAdvice[id] }

    /// The rule of that id, of any profile.
    public static func named(_ id: String) -> Rule? { every.first { $0.id == id } }

    static let navigationHook = """
        // In the router's navigation hook (react-router, vue-router, Turbo, …), for a new entry only:
        const bridge = window.__bridgedInjected?.bridge;   // or: import { connect } from "/bridge.js"
        router.beforeEach(async (to, from, navigationType) => {
          if (bridge && navigationType === "push") await bridge.pwaNavigate({ url: new URL(to.fullPath, location.href).href });
        });
        router.afterEach(() => requestAnimationFrame(() => bridge?.pwaRendered()));
        """

    static let advice: [String: (text: String, snippet: String)] = [
        "dom-before-reply": ("Await the reply of pwa-navigate before the route renders: the host snapshots the old screen while it waits, so a DOM changed early makes the placeholder show the new state.", navigationHook),
        "push-without-navigate": ("Send pwa-navigate before every history push (a link, router.push, a hash change that adds an entry), then pwa-rendered once the new route is drawn: without it the host has no placeholder to go back to.", navigationHook),
        "navigate-on-pop-or-replace": ("Send pwa-navigate for new entries only: not for a replace (router.replace, a redirect) and not for a POP (the back and forward buttons, popstate).", """
            window.addEventListener("popstate", () => { /* no pwa-navigate here: only render, then */ bridge.pwaRendered(); });
            router.replace(url);   // no pwa-navigate for a replace either
            """),
        "render-timeout": ("Send pwa-rendered as soon as the new route is drawn (after the router's render, in a requestAnimationFrame), not only on a full load.", """
            router.afterEach(() => requestAnimationFrame(() => bridge.pwaRendered()));
            """),
        "no-render-after-back": ("After the host's back the page gets a back event and goes back itself: send pwa-rendered once the previous route is drawn.", """
            bridge.on("back", () => history.back());
            window.addEventListener("popstate", () => requestAnimationFrame(() => bridge.pwaRendered()));
            """),
        "back-wrong-state": ("On the back event go back exactly one entry (history.back()), so the page shows the placeholder's url; do not navigate to a route of your own.", """
            bridge.on("back", () => history.back());
            """),
        "external-link-trap": ("Send links to other origins outside the app: a routing configuration with external_links: open (bridged check --config FILE), or open them with the system browser.", """
            # routing.yaml (bridged serve/check --config routing.yaml)
            external_links: open
            """),
        "page-error": ("Fix the exception or console error the navigation raised (the evidence names it).", ""),
        "back-stuck": ("The page moved to new entries the host does not know (no pwa-navigate), so the host's back has nothing to undo and the user cannot leave the page. Announce each push with pwa-navigate.", navigationHook),
        "load-failed": ("The page could not load in the web view: check that the url answers (status, TLS, the server running) from the phone's network.", ""),
        "render-budget": ("Draw the new route faster (lazy-load less before the first paint, render a skeleton), or raise --budget-ms.", ""),
        "page-unresponsive": ("Keep the page's main thread free: no loop that never returns, no long synchronous work on load; do not call alert(), confirm() or prompt() (a native shell shows them as a blocking sheet or not at all): show the message in the page, or send it to native over the bridge.", """
            // Not: alert("Saved");   (it blocks the page until someone answers it)
            document.querySelector("#flash").textContent = "Saved";
            """),
        "page-crashed": ("The page's renderer died: look for what exhausts it (memory, an endless recursion, a huge canvas); the evidence names the page and the browser's reason.", ""),
        "navigation-loop": ("A page opens new pages without end (a redirect to itself by script, window.open on load, a link clicked by script): open another page only on the user's tap, and at most once.", """
            // Not on load: window.open(url) / location.href = sameUrlAgain
            button.addEventListener("click", () => window.open(url));
            """),
        "nothing-explored": ("Give the start page something a user can tap: <a href> links (also in open shadow roots), elements with href or routerLink, role=\"link\"; or run the check with --steps.", ""),
    ]
}

/// One broken rule, with its evidence.
public struct Finding: Equatable, Sendable {
    public var rule: String
    /// The step during which it happened (-1: before the first step).
    public var step: Int
    public var webview: String
    public var t: Double
    public var message: String
    /// The observations behind it, in words, with their times.
    public var evidence: [String]
    /// For navigate-on-pop-or-replace: the placeholder its pwa-navigate stacked.
    var placeholder: String?

    public init(rule: Rule, step: Int, webview: String, t: Double, message: String, evidence: [String]) {
        self.rule = rule.id
        self.step = step
        self.webview = webview
        self.t = t
        self.message = message
        self.evidence = evidence
    }
}

public struct RuleOptions: Equatable, Sendable {
    /// `--budget-ms`: nil, no budget.
    public var budgetMs: Int?
    /// The app's origin (`http://host:port`); navigations to other http(s) origins inside a web
    /// view are traps.
    public var appOrigin: String
    /// `--profile`: which rules apply (`Rule.all` for astro, `Rule.hotwire` for hotwire-native).
    public var profile: CheckProfile
    /// hotwire-native: how long a Turbo visit may take to render (`--timeout-s`), in ms.
    public var visitTimeoutMs: Double
    /// capacitor: the platform (`android`, `ios`); the hardware back's rules are Android's.
    public var platform: String

    public init(appOrigin: String, budgetMs: Int? = nil, profile: CheckProfile = .astro, visitTimeoutMs: Double = 30_000, platform: String = "android") {
        self.appOrigin = appOrigin
        self.budgetMs = budgetMs
        self.profile = profile
        self.visitTimeoutMs = visitTimeoutMs
        self.platform = platform
    }
}

/// The native shell an app is checked for (`--profile`).
public enum CheckProfile: String, Sendable, CaseIterable {
    case astro
    case hotwireNative = "hotwire-native"
    case capacitor

    /// The rules judged under this profile.
    public var rules: [Rule] {
        switch self {
        case .astro: Rule.all
        case .hotwireNative: Rule.hotwire
        case .capacitor: Rule.capacitor
        }
    }
}

public enum Rules {
    public static func evaluate(_ log: [Observation], options: RuleOptions) -> [Finding] {
        if options.profile == .hotwireNative { return HotwireRules.evaluate(log, options: options) }
        if options.profile == .capacitor { return CapacitorRules.evaluate(log, options: options) }
        var out: [Finding] = []
        out += historyRules(log)
        out += foregroundRules(log, options: options)
        // A placeholder stacked by a pwa-navigate for a POP or a REPLACE stands for the wrong
        // state: going back to it shows another one, a consequence of that finding, not a
        // second fault.
        out += backState(log, ignoring: Set(out.compactMap(\.placeholder)))
        out += externalLinks(log, options: options)
        out += pageErrors(log)
        out += backStuck(log)
        out += loadFailures(log)
        out += runaways(log)
        return out.sorted { ($0.step, $0.t) < ($1.step, $1.t) }
    }

    static func ms(_ t: Double) -> String {
        let r = (t * 10).rounded() / 10
        return "\(r) ms"
    }

    /// dom-before-reply, push-without-navigate, navigate-on-pop-or-replace: page-side events of
    /// each web view, on the page's clock.
    static func historyRules(_ log: [Observation]) -> [Finding] {
        var out: [Finding] = []
        let webviews = orderedUnique(log.map(\.webview).filter { !$0.isEmpty })
        for w in webviews {
            let page = log.filter { o in
                guard o.webview == w else { return false }
                switch o.kind {
                case .navigateSent, .navigateReplied, .domChanged, .history: return true
                default: return false
                }
            }
            var announced = Set<Int>()  // indices (in `page`) of pushes announced by a pwa-navigate
            for (i, o) in page.enumerated() {
                guard case .navigateSent(let url) = o.kind else { continue }
                // The reply, and DOM changes before it.
                var replyAt: Double?
                for later in page[(i + 1)...] {
                    if case .navigateReplied = later.kind { replyAt = later.t; break }
                    if case .navigateSent = later.kind { break }
                }
                let end = replyAt ?? .infinity
                let early = page[(i + 1)...].filter { m in
                    if case .domChanged = m.kind { return m.t > o.t && m.t < end }
                    return false
                }
                if let first = early.first {
                    var ev = ["\(ms(o.t)) page sent pwa-navigate {url: \(url)}"]
                    ev.append("\(ms(first.t)) the DOM changed (\(early.count) time\(early.count == 1 ? "" : "s") before the reply)")
                    ev.append(replyAt.map { "\(ms($0)) the reply reached the page" } ?? "no reply reached the page")
                    out.append(Finding(rule: .domBeforeReply, step: o.step, webview: w, t: first.t,
                                       message: "\(w) changed its DOM \(ms(first.t - o.t)) after sending pwa-navigate, before the reply" + (replyAt.map { " (it came \(ms($0 - o.t)) after)" } ?? ""),
                                       evidence: ev))
                }
                // The history change this announcement was for.
                var next: (Int, Observation)?
                for (j, later) in page.enumerated().dropFirst(i + 1) {
                    if case .navigateSent = later.kind { break }
                    if case .history = later.kind { next = (j, later); break }
                }
                var previousPop: Observation?
                for earlier in page[..<i].reversed() {
                    if case .navigateSent = earlier.kind { break }
                    if case .history(let how, _) = earlier.kind {
                        if how == .pop { previousPop = earlier }
                        break
                    }
                }
                var stacked: String?
                for later in page[(i + 1)...] {
                    if case .navigateReplied(let p) = later.kind { stacked = p; break }
                    if case .navigateSent = later.kind { break }
                }
                if let (j, h) = next, case .history(let how, let hurl) = h.kind {
                    switch how {
                    case .push:
                        announced.insert(j)
                        continue
                    case .replace:
                        out.append(Finding(rule: .navigateOnPopOrReplace, step: o.step, webview: w, t: o.t,
                                           message: "\(w) sent pwa-navigate for a REPLACE (replaceState to \(hurl)): a replaced state needs no placeholder",
                                           evidence: ["\(ms(o.t)) page sent pwa-navigate {url: \(url)}", "\(ms(h.t)) history.replaceState(\(hurl))"]))
                        out[out.count - 1].placeholder = stacked
                        continue
                    case .pop:
                        break
                    }
                }
                if let pop = previousPop, case .history(_, let purl) = pop.kind {
                    out.append(Finding(rule: .navigateOnPopOrReplace, step: o.step, webview: w, t: o.t,
                                       message: "\(w) sent pwa-navigate for a POP (going back to \(purl)): going back must not stack a placeholder",
                                       evidence: ["\(ms(pop.t)) popstate to \(purl)", "\(ms(o.t)) page sent pwa-navigate {url: \(url)}"]))
                    out[out.count - 1].placeholder = stacked
                }
            }
            for (j, o) in page.enumerated() {
                guard case .history(.push, let url) = o.kind, !announced.contains(j) else { continue }
                out.append(Finding(rule: .pushWithoutNavigate, step: o.step, webview: w, t: o.t,
                                   message: "\(w) pushed a new state (\(url)) without sending pwa-navigate first",
                                   evidence: ["\(ms(o.t)) history push to \(url); no pwa-navigate announced it"]))
            }
        }
        return out
    }

    /// render-timeout, no-render-after-back, render-budget: foregrounds as the controller saw them.
    static func foregroundRules(_ log: [Observation], options: RuleOptions) -> [Finding] {
        var out: [Finding] = []
        var shown: [String: Observation] = [:]
        for (i, o) in log.enumerated() {
            switch o.kind {
            case .foregroundShown:
                shown[o.webview] = o
            case .foregroundRemoved(let reason, let latency):
                let s = shown.removeValue(forKey: o.webview)
                var kind = "blank"
                if case .foregroundShown(let k)? = s?.kind { kind = k }
                let step = s?.step ?? o.step
                if reason == "timeout" {
                    var ev = ["\(ms(s?.t ?? o.t - Double(latency))) foreground (\(kind)) shown over \(o.webview)",
                              "\(ms(o.t)) the fallback timer removed it after \(latency) ms"]
                    if let late = log[(i + 1)...].first(where: { $0.webview == o.webview && { if case .rendered(true, _) = $0.kind { return true } else { return false } }($0) }) {
                        ev.append("\(ms(late.t)) pwa-rendered arrived late")
                    } else {
                        ev.append("no pwa-rendered before the timer")
                    }
                    let rule: Rule = kind == "placeholder" ? .noRenderAfterBack : .renderTimeout
                    let what = kind == "placeholder" ? "after a back" : "after pwa-navigate"
                    out.append(Finding(rule: rule, step: step, webview: o.webview, t: o.t,
                                       message: "\(o.webview) sent no pwa-rendered \(what) within the fallback timer (\(latency) ms)",
                                       evidence: ev))
                } else if reason == "rendered", let budget = options.budgetMs, latency > budget {
                    out.append(Finding(rule: .renderBudget, step: step, webview: o.webview, t: o.t,
                                       message: "\(o.webview) rendered in \(latency) ms, over the budget of \(budget) ms",
                                       evidence: ["\(ms(s?.t ?? o.t - Double(latency))) foreground (\(kind)) shown", "\(ms(o.t)) pwa-rendered after \(latency) ms"]))
                }
            default:
                break
            }
        }
        return out
    }

    /// back-wrong-state: after a swap, the page's location once it settled must be the
    /// placeholder's url.
    static func backState(_ log: [Observation], ignoring: Set<String> = []) -> [Finding] {
        var out: [Finding] = []
        for (i, o) in log.enumerated() {
            guard case .back("swap", let p?, let expected?) = o.kind, !ignoring.contains(p) else { continue }
            for later in log[(i + 1)...] {
                if case .back = later.kind { break }
                guard later.webview == o.webview, case .location(let url, _) = later.kind else { continue }
                if normalize(url) != normalize(expected) {
                    out.append(Finding(rule: .backWrongState, step: o.step, webview: o.webview, t: later.t,
                                       message: "after the back-swap of \(p), \(o.webview) shows \(url) instead of \(expected)",
                                       evidence: ["\(ms(o.t)) back: swap, \(p) discarded, its url \(expected)", "\(ms(later.t)) the page's location: \(url)"]))
                }
                break
            }
        }
        return out
    }

    /// external-link-trap: a web view opened on another http(s) origin (the routing
    /// configuration would have sent it outside with external.open instead).
    static func externalLinks(_ log: [Observation], options: RuleOptions) -> [Finding] {
        var out: [Finding] = []
        let app = origin(options.appOrigin)
        for o in log {
            let url: String
            switch o.kind {
            case .webviewOpened(let u, _): url = u
            case .location(let u, _): url = u
            default: continue
            }
            guard let other = origin(url), other.hasPrefix("http"), other != app else { continue }
            out.append(Finding(rule: .externalLinkTrap, step: o.step, webview: o.webview, t: o.t,
                               message: "\(o.webview) left the app for \(other) inside the web view (\(url)); open external links outside the app (routing: external_links: open)",
                               evidence: ["\(ms(o.t)) \(url) opened inside the app, app origin \(app ?? options.appOrigin)"]))
        }
        // One finding per web view and url.
        var seen = Set<String>()
        return out.filter { seen.insert($0.webview + " " + $0.message).inserted }
    }

    /// back-stuck: a back that did nothing (`none`) while the top web view's page was not at
    /// the url it started on.
    static func backStuck(_ log: [Observation]) -> [Finding] {
        var out: [Finding] = []
        var start: [String: String] = [:]
        var stackBefore = ""
        for (i, o) in log.enumerated() {
            switch o.kind {
            case .location(let url, _):
                if start[o.webview] == nil { start[o.webview] = url }
            case .stack(let rendering, let cause):
                stackBefore = rendering
                if cause == "session.create" { start = [:] }  // a fresh session: web view ids start again
            case .back("none", _, _):
                guard let began = start[o.webview] else { continue }
                for later in log[(i + 1)...] {
                    if case .back = later.kind { break }
                    if case .step = later.kind { break }
                    guard later.webview == o.webview, case .location(let url, _) = later.kind else { continue }
                    if comparable(url) != comparable(began) {
                        out.append(Finding(rule: .backStuck, step: o.step, webview: o.webview, t: o.t,
                                           message: "the user is stuck on \(path(url)): the host does not know the app's history (its back did nothing, \(o.webview) started at \(path(began)))",
                                           evidence: ["\(ms(o.t)) back: none (the stack is \(stackBefore.isEmpty ? "one web view" : stackBefore): nothing below to go back to)",
                                                      "\(ms(later.t)) the page still shows \(url)", "\(o.webview) started at \(began)"]))
                    }
                    break
                }
            default:
                break
            }
        }
        return out
    }

    /// load-failed: every `webview.failed`.
    static func loadFailures(_ log: [Observation]) -> [Finding] {
        log.compactMap { o in
            guard case .loadFailed(let url, let reason) = o.kind else { return nil }
            return Finding(rule: .loadFailed, step: o.step, webview: o.webview, t: o.t,
                           message: "\(o.webview) could not load \(url): \(reason)",
                           evidence: ["\(ms(o.t)) webview.failed {url: \(url), reason: \(reason)}"])
        }
    }

    /// page-unresponsive, page-crashed and navigation-loop: what became of a page. One finding
    /// per page (its url without the claim parameters) and rule, at the first time it was
    /// seen, so a run that meets the same frozen page on several paths says it once, with each
    /// time as evidence; a page blocked by a dialog says so, with the dialog's text.
    static func runaways(_ log: [Observation]) -> [Finding] {
        var out: [Finding] = []
        var index: [String: Int] = [:]  // rule + url -> finding
        /// Dialogs open (not answered yet) per web view.
        var open: [String: (type: String, message: String)] = [:]
        func add(_ rule: Rule, _ url: String, _ o: Observation, message: String, evidence: String) {
            let key = rule.id + " " + comparable(url)
            if let i = index[key] {
                if out[i].evidence.count < 10 { out[i].evidence.append(evidence) }
                return
            }
            index[key] = out.count
            out.append(Finding(rule: rule, step: o.step, webview: o.webview, t: o.t, message: message, evidence: [evidence]))
        }
        for o in log {
            switch o.kind {
            case .dialog(let type, let message, _):
                open[o.webview] = (type, message)
            case .dialogClosed:
                open[o.webview] = nil
            case .stack(_, let cause) where cause == "session.create":
                open = [:]
            case .unresponsive(let url, let how):
                let page = path(url.isEmpty ? "(its first page)" : url)
                let why = open[o.webview].map { "blocked by a JavaScript \($0.type)(\(quoted($0.message))) nobody answered" }
                    ?? "a script that never returns, or a JavaScript dialog left open"
                add(.pageUnresponsive, url, o, message: "the page \(page) in \(o.webview) stopped answering (\(why)): the user sees a frozen screen",
                    evidence: "\(ms(o.t)) \(o.webview) on \(page): \(how)")
            case .crashed(let url, let reason):
                let page = path(url.isEmpty ? "(its first page)" : url)
                add(.pageCrashed, url, o, message: "the page \(page) in \(o.webview) crashed: \(reason)",
                    evidence: "\(ms(o.t)) webview.crashed {webview: \(o.webview), url: \(url), reason: \(reason)}")
            case .limit(let name, let max, let url):
                let page = path(url.isEmpty ? "?" : url)
                add(.navigationLoop, "limit:" + name, o,
                    message: "a page kept opening web views (up to \(page)): the session reached its limit of \(max) live \(name); a navigation or window.open loop",
                    evidence: "\(ms(o.t)) session.limit {limit: \(name), max: \(max)}: \(o.webview.isEmpty ? "a web view" : o.webview) was refused \(page)")
            default:
                break
            }
        }
        return out
    }

    /// A dialog's message as the report quotes it: in quotes, at most 80 characters.
    static func quoted(_ s: String) -> String {
        let one = s.replacingOccurrences(of: "\n", with: " ")
        return "\"" + (one.count > 80 ? String(one.prefix(79)) + "…" : one) + "\""
    }

    /// The path, query and fragment of a url (`/two/`), or the url when it has no origin.
    static func path(_ url: String) -> String {
        guard let o = origin(url), url.count > o.count else { return url }
        return String(url.dropFirst(o.count))
    }

    /// A url for comparing states: without the claim parameters and a trailing `?` or `#`.
    static func comparable(_ url: String) -> String {
        var u = normalize(url)
        if u.hasSuffix("#") { u.removeLast() }
        return u
    }

    static func pageErrors(_ log: [Observation]) -> [Finding] {
        log.compactMap { o in
            switch o.kind {
            case .consoleError(let m):
                return Finding(rule: .pageError, step: o.step, webview: o.webview, t: o.t, message: "console error in \(o.webview): \(m)", evidence: ["\(ms(o.t)) console.error: \(m)"])
            case .exception(let m):
                return Finding(rule: .pageError, step: o.step, webview: o.webview, t: o.t, message: "uncaught exception in \(o.webview): \(m)", evidence: ["\(ms(o.t)) uncaught: \(m)"])
            default:
                return nil
            }
        }
    }

    /// `scheme://host[:port]` of a url, lowercased; nil when it has none.
    public static func origin(_ url: String) -> String? {
        guard let r = url.range(of: "://") else { return nil }
        let scheme = url[..<r.lowerBound].lowercased()
        let rest = url[r.upperBound...]
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return scheme + "://" + host.lowercased()
    }

    /// A url without the claim parameters and a trailing `?`.
    static func normalize(_ url: String) -> String {
        var u = url
        if u.hasSuffix("?") { u.removeLast() }
        return u
    }

    static func orderedUnique(_ xs: [String]) -> [String] {
        var seen = Set<String>()
        return xs.filter { seen.insert($0).inserted }
    }
}
