/// The rules of `bridged check --profile capacitor` (docs/CHECK.md, "The capacitor profile"): a
/// Capacitor app in one web view. Its history pushes are its own (the Astro rules are not
/// judged); what is judged is what a device shows: Android's hardware back at an inner route, a
/// deep link, plugin calls that fail unhandled or that the device does not have. Pure, as `Rules`.
extension Rule {
    public static let backExitsApp = Rule(id: "back-exits-app", summary: "Android: the hardware back at an inner route (not the start) ended or left the app (App.exitApp, minimizeApp, no back handler).")
    public static let backDoesNothing = Rule(id: "back-does-nothing", summary: "Android: the hardware back at an inner route changed neither the url nor the screen.")
    public static let deepLinkIgnored = Rule(id: "deep-link-ignored", summary: "A deep link (appUrlOpen) to a route the app has left the url and the screen unchanged.")
    public static let pluginRejectionUnhandled = Rule(id: "plugin-rejection-unhandled", summary: "A plugin call native rejected was not handled: an unhandled rejection with its error.")
    public static let pluginUnavailable = Rule(id: "plugin-unavailable", summary: "The app called a plugin the device does not have (not implemented on the platform).")

    /// The rules of the capacitor profile, in the report's order.
    public static let capacitor: [Rule] = [backExitsApp, backDoesNothing, deepLinkIgnored, pluginRejectionUnhandled, pluginUnavailable,
                                           pageError, loadFailed, pageUnresponsive, pageCrashed, navigationLoop, nothingExplored]

    static let capacitorAdvice: [String: (text: String, snippet: String)] = [
        "back-exits-app": ("At an inner route the hardware back must go back, not leave: call App.exitApp() (or minimizeApp) only when nothing is left to go back to (canGoBack false), and keep @capacitor/app with its back handler enabled (without it Android's default back closes the activity).", """
            App.addListener("backButton", ({ canGoBack }) => {
              if (canGoBack) window.history.back();   // or the router's back (Ionic: useIonRouter().goBack())
              else App.exitApp();
            });
            """),
        "back-does-nothing": ("Handle the hardware back at inner routes: a backButton listener that ignores the event leaves the user stuck; go back in the router (or history.back()) when canGoBack, and let a route replaced in history (replaceState) still have a way back.", """
            App.addListener("backButton", ({ canGoBack }) => {
              if (canGoBack) window.history.back();
              else App.exitApp();
            });
            """),
        "deep-link-ignored": ("Route deep links: in the appUrlOpen listener, take the link's path and navigate the router there.", """
            App.addListener("appUrlOpen", ({ url }) => {
              const path = new URL(url).pathname;   // https://example.com/items/7 → /items/7
              if (path) router.push(path);           // Ionic React: history.push(path)
            });
            """),
        "plugin-rejection-unhandled": ("Handle the plugin's rejection: a device may refuse (permission denied, no hardware, the user cancelled); catch it and show the user what happened.", """
            try {
              const photo = await Camera.getPhoto({ resultType: "uri" });
            } catch (e) {
              showMessage(`No photo: ${e.message}`);   // e.code: UNAVAILABLE, UNIMPLEMENTED, …
            }
            """),
        "plugin-unavailable": ("Install the plugin in the native project (npm install, then npx cap sync) or check Capacitor.isPluginAvailable(name) before calling it and offer another way.", """
            if (Capacitor.isPluginAvailable("BarcodeScanner")) {
              await BarcodeScanner.scan();
            } else {
              showManualEntry();
            }
            """),
    ]
}

public enum CapacitorRules {
    public static func evaluate(_ log: [Observation], options: RuleOptions) -> [Finding] {
        var claimed = Set<Int>()
        var out: [Finding] = []
        out += unavailable(log, claimed: &claimed)
        out += rejections(log, claimed: &claimed)
        out += log.indices.compactMap { i in claimed.contains(i) ? nil : Rules.pageErrors([log[i]]).first }
        if options.platform != "ios" { out += once(backs(log)) }
        out += deepLinks(log)
        out += Rules.loadFailures(log)
        out += Rules.runaways(log)
        return out.sorted { ($0.step, $0.t) < ($1.step, $1.t) }
    }

    static func ms(_ t: Double) -> String { Rules.ms(t) }

    static let rejectionPrefix = "unhandled rejection: "

    /// The message of an unhandled rejection the page reported (nil: another page error).
    static func rejection(_ o: Observation) -> String? {
        guard case .exception(let m) = o.kind, m.hasPrefix(rejectionPrefix) else { return nil }
        return String(m.dropFirst(rejectionPrefix.count))
    }

    /// plugin-unavailable: every call of a plugin the session does not have (the page's report,
    /// no callbackId), once per plugin and method; an unhandled rejection of it (`"X" plugin is
    /// not implemented`) is its evidence, not a page error of its own.
    static func unavailable(_ log: [Observation], claimed: inout Set<Int>) -> [Finding] {
        var out: [Finding] = []
        var index: [String: Int] = [:]
        for (i, o) in log.enumerated() {
            guard case .capacitorCall(let plugin, let method, nil, true) = o.kind else { continue }
            let key = plugin + "." + method
            let line = "\(ms(o.t)) capacitor.call \(key)(): unavailable (no \(plugin) in the app's native project: its runtime rejected the call, not implemented on the platform)"
            if let k = index[key] {
                // The calls first, then the rejections the app left unhandled.
                let at = out[k].evidence.firstIndex { $0.contains(" (page) ") } ?? out[k].evidence.count
                if out[k].evidence.count < 10 { out[k].evidence.insert(line, at: at) }
            } else {
                index[key] = out.count
                out.append(Finding(rule: .pluginUnavailable, step: o.step, webview: o.webview, t: o.t,
                                   message: "the app called \(key)() but the device has no \(plugin) plugin (not implemented on the platform)",
                                   evidence: [line]))
            }
            // Its rejection, when the app left it unhandled (collected after the call's event).
            let marker = "\"\(plugin)\" plugin is not implemented"
            if let j = log.indices.dropFirst(i + 1).first(where: { j in !claimed.contains(j) && (rejection(log[j])?.contains(marker) ?? false) }) {
                claimed.insert(j)
                out[index[key]!].evidence.append("\(ms(log[j].t)) (page) unhandled rejection: \(rejection(log[j])!)")
            }
        }
        return out
    }

    /// plugin-rejection-unhandled: an unhandled rejection whose message is the error of a
    /// `capacitor.result` that came before it (native rejected the call, the app did not catch).
    static func rejections(_ log: [Observation], claimed: inout Set<Int>) -> [Finding] {
        var out: [Finding] = []
        var seen = Set<String>()
        for (i, o) in log.enumerated() where !claimed.contains(i) {
            guard let message = rejection(o), !message.isEmpty else { continue }
            var failed: Observation?
            for earlier in log[..<i].reversed() {
                if case .stack(_, "session.create") = earlier.kind { break }
                if case .capacitorResult(_, _, _, false, let e?, _) = earlier.kind, !e.isEmpty, message == e || message.contains(e) {
                    failed = earlier
                    break
                }
            }
            guard let r = failed, case .capacitorResult(let plugin, let method, let id, _, let error, let code) = r.kind else { continue }
            claimed.insert(i)
            guard seen.insert("\(plugin).\(method) \(message)").inserted else { continue }
            var evidence: [String] = []
            if let call = log[..<i].last(where: { if case .capacitorCall(plugin, method, id?, _) = $0.kind { return true } else { return false } }) {
                evidence.append("\(ms(call.t)) capacitor.call \(plugin).\(method)() {callbackId: \(id)}")
            }
            evidence.append("\(ms(r.t)) capacitor.result {callbackId: \(id), success: false, error: {message: \(error ?? "?")\(code.map { ", code: \($0)" } ?? "")}}")
            evidence.append("\(ms(o.t)) (page) unhandled rejection: \(message)")
            out.append(Finding(rule: .pluginRejectionUnhandled, step: o.step, webview: o.webview, t: o.t,
                               message: "\(plugin).\(method)() was rejected (\(error ?? "?")) and the app did not handle it: an unhandled rejection in \(o.webview)",
                               evidence: evidence))
        }
        return out
    }

    /// The screen after observation `i` in its step (the first one seen before the next step,
    /// back or session), nil when none was read (the session ended, the page stopped answering).
    static func screenAfter(_ log: [Observation], _ i: Int) -> Observation? {
        for later in log[(i + 1)...] {
            switch later.kind {
            case .step, .back, .deepLink: return nil
            case .stack(_, "session.create"): return nil
            case .screen: return later
            default: continue
            }
        }
        return nil
    }

    /// back-exits-app, back-does-nothing (Android): a hardware back while the screen was an inner
    /// route (another url than the session's start screen).
    static func backs(_ log: [Observation]) -> [Finding] {
        var out: [Finding] = []
        var start: Observation?
        var last: Observation?
        var fresh = false
        for (i, o) in log.enumerated() {
            switch o.kind {
            case .stack(_, "session.create"):
                start = nil
                last = nil
                fresh = true
            case .screen:
                if fresh { start = o; fresh = false }
                last = o
            case .back(let action, _, _):
                guard let before = last, let begin = start, case .screen(let url, let digest) = before.kind,
                      case .screen(let startURL, _) = begin.kind, Rules.comparable(url) != Rules.comparable(startURL) else { continue }
                // What the back caused, until the next step.
                var left: [String] = []
                var leftAt: Observation?
                for later in log[(i + 1)...] {
                    if case .step = later.kind { break }
                    if case .back = later.kind { break }
                    switch later.kind {
                    case .capacitorCall("App", let m, _, _) where m == "exitApp" || m == "minimizeApp":
                        left.append("\(ms(later.t)) the app called App.\(m)()")
                        leftAt = leftAt ?? later
                    case .sessionEnded(let reason):
                        left.append("\(ms(later.t)) the session ended (session.closed: \(reason))")
                        leftAt = leftAt ?? later
                    default:
                        break
                    }
                }
                let pressed = "\(ms(o.t)) hardware back (navigation.back): \(action)\(Self.actionMeaning[action].map { " (\($0))" } ?? "")"
                let at = "\(ms(before.t)) the screen: \(url) (the start screen: \(startURL))"
                if action == "background" || !left.isEmpty {
                    let how = left.isEmpty ? "the app left the screen (no back handler: Android's default back closes the activity)"
                        : left.contains { $0.contains("minimizeApp") } && !left.contains { $0.contains("exitApp") } ? "the app minimized itself (App.minimizeApp)"
                        : "the app exited (App.exitApp)"
                    out.append(Finding(rule: .backExitsApp, step: o.step, webview: o.webview.isEmpty ? before.webview : o.webview, t: (leftAt ?? o).t,
                                       message: "Android's back at the inner route \(Rules.path(url)) left the app: \(how)",
                                       evidence: [at, pressed] + left))
                    continue
                }
                guard ["none", "backButton", "goBack"].contains(action), let after = screenAfter(log, i),
                      case .screen(let afterURL, let afterDigest) = after.kind else { continue }
                if Rules.comparable(afterURL) == Rules.comparable(url), afterDigest == digest {
                    out.append(Finding(rule: .backDoesNothing, step: o.step, webview: before.webview, t: after.t,
                                       message: "Android's back at the inner route \(Rules.path(url)) did nothing: the url and the screen stayed the same",
                                       evidence: [at, pressed, "\(ms(after.t)) once the app was still: \(afterURL), the same screen (digest \(afterDigest))"]))
                }
            default:
                break
            }
        }
        return out
    }

    /// One finding per rule and route: a later back at the same route is a line of the first.
    static func once(_ findings: [Finding]) -> [Finding] {
        var out: [Finding] = []
        var index: [String: Int] = [:]
        for f in findings {
            let key = f.rule + " " + f.message
            if let k = index[key] {
                if out[k].evidence.count < 12 { out[k].evidence.append("the same again at step \(f.step + 1)") }
            } else {
                index[key] = out.count
                out.append(f)
            }
        }
        return out
    }

    static let actionMeaning: [String: String] = [
        "backButton": "the app's backButton listener got it",
        "goBack": "no backButton listener: the web view went back in its history",
        "none": "no backButton listener and nothing in the web view's history to go back to",
        "background": "no App back handler: Android's default back leaves the app",
    ]

    /// deep-link-ignored: a deep link a listener of the app got (`appUrlOpen`), to a route the
    /// app has, while another screen showed, and the url and the screen stayed the same.
    static func deepLinks(_ log: [Observation]) -> [Finding] {
        var out: [Finding] = []
        var last: Observation?
        for (i, o) in log.enumerated() {
            switch o.kind {
            case .stack(_, "session.create"):
                last = nil
            case .screen:
                last = o
            case .deepLink(let target, true):
                guard let before = last, case .screen(let url, let digest) = before.kind,
                      Rules.comparable(url) != Rules.comparable(target),
                      let after = screenAfter(log, i), case .screen(let afterURL, let afterDigest) = after.kind,
                      Rules.comparable(afterURL) == Rules.comparable(url), afterDigest == digest else { continue }
                out.append(Finding(rule: .deepLinkIgnored, step: o.step, webview: before.webview, t: after.t,
                                   message: "the deep link \(target) (a route the app has) left the screen unchanged on \(Rules.path(url))",
                                   evidence: ["\(ms(before.t)) the screen: \(url)",
                                              "\(ms(o.t)) navigation.openUrl {url: \(target)}: appUrlOpen delivered to the app's listener",
                                              "\(ms(after.t)) once the app was still: \(afterURL), the same screen (digest \(afterDigest))"]))
            default:
                break
            }
        }
        return out
    }
}
