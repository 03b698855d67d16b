import BridgeProtocol
import Foundation

/// What the daemon tells the checker: the controller's events, turned into the observation log
/// and the runner's view of the session (its stack, pages, foreground, dead pages).
extension CheckRunner {
    func event(_ name: String, _ p: JSONValue) {
        guard p["session"]?.stringValue == session || session.isEmpty else { return }
        lastEventAt = Date()
        // What the daemon made of a navigation the step's tap began: a new web view, the page
        // gone (a new document), a failure, the link sent outside, a dialog, a limit.
        if actionAt != nil, Self.answers.contains(ControllerEventName(name)) { answeredSinceAction = true }
        let w = p["webview"]?.stringValue ?? ""
        switch ControllerEventName(name) {
        case .webviewDialog:
            log.append(Observation(t: now, webview: w, step: step, .dialog(type: p["type"]?.stringValue ?? "alert", message: p["message"]?.stringValue ?? "",
                                                                           url: p["url"]?.stringValue ?? lastURL(of: w))))
        case .webviewDialogClosed:
            log.append(Observation(t: now, webview: w, step: step, .dialogClosed(type: p["type"]?.stringValue ?? "alert", accepted: p["accepted"]?.boolValue ?? false,
                                                                                 by: p["by"]?.stringValue ?? "policy")))
        case .webviewCrashed:
            markCrashed(w, reason: p["reason"]?.stringValue ?? "the renderer died")
        case .browserCrashed:
            for x in stack where x["kind"]?.stringValue == "webview" { if let id = x["id"]?.stringValue { markCrashed(id, reason: "Chromium itself died (browser.crashed)") } }
        case .webviewUnresponsive:
            markUnresponsive(w, how: "the daemon said webview.unresponsive")
        case .webviewResponsive:
            // It answers again (a long script ended): asked again, waited for again.
            unresponsive[w] = nil
        case .sessionLimit:
            let limit = p["limit"]?.stringValue ?? "tabs"
            log.append(Observation(t: now, webview: w.isEmpty ? top : w, step: step,
                                   .limit(name: limit, max: Int(p["max"]?.intValue ?? 0), url: p["url"]?.stringValue ?? lastURL(of: w.isEmpty ? top : w))))
        case .pwaNavigated:
            if let u = p["url"]?.stringValue { navigatedTo[w] = u }
        case .stackChanged:
            stack = p["stack"]?.arrayValue ?? []
            navigatedTo = [:]
            log.append(Observation(t: now, step: step, .stack(rendering: Self.render(stack), cause: p["cause"]?.stringValue ?? "")))
            if hotwire, let after = p["tree"], after != .null {
                for n in Navigations.nativePushes(before: tree, after: after) {
                    log.append(Observation(t: now, webview: n.id, step: step, .nativePushed(url: n.url, screen: n.screen, from: n.from)))
                }
                tree = after
            }
        case .foregroundShown:
            foregroundUp = w
            log.append(Observation(t: now, webview: w, step: step, .foregroundShown(kind: p["kind"]?.stringValue ?? "blank")))
        case .foregroundRemoved:
            if foregroundUp == w { foregroundUp = nil }
            log.append(Observation(t: now, webview: w, step: step, .foregroundRemoved(reason: p["reason"]?.stringValue ?? "", latencyMs: Int(p["latencyMs"]?.intValue ?? 0))))
        case .pwaRendered:
            log.append(Observation(t: now, webview: w, step: step, .rendered(late: p["late"]?.boolValue ?? false, removed: p["removed"]?.boolValue ?? false)))
        case .webviewOpen:
            // hotwire-native: a modal's web view is presented over the main stack's top.
            let modal = hotwire && (tree?["modal"]?.arrayValue ?? []).contains { $0["id"]?.stringValue == w }
            opened.insert(w)
            log.append(Observation(t: now, webview: w, step: step, .webviewOpened(url: p["url"]?.stringValue ?? "", from: modal ? Navigations.mainTop(tree) : nil)))
        case .webviewFailed:
            let url = p["url"]?.stringValue ?? "", reason = p["reason"]?.stringValue ?? "the page did not load"
            failed[w] = reason
            log.append(Observation(t: now, webview: w, step: step, .loadFailed(url: url, reason: reason)))
        case .externalOpen:
            log.append(Observation(t: now, webview: w, step: step, .externalOpen(url: p["url"]?.stringValue ?? "")))
        case .pageConnected:
            connected.insert(w)
            failed[w] = nil
            // A new document in that web view: it answers again until it shows otherwise.
            unresponsive[w] = nil
            pendingProbes.append(w)
            stackStale = true
        case .pageDisconnected, .webviewClosed:
            connected.remove(w)
            stackStale = true
            // A visit whose document went away (closed, reloaded, replaced by a new document)
            // will not render: waiting for it would only run out the timeout.
            visiting[w] = nil
        case .hotwireMessage:
            let data = p["data"] ?? .null
            let name = p["name"]?.stringValue ?? ""
            let id = data["identifier"]?.stringValue
            switch name {
            case "visitStarted":
                if let id { visiting[w] = (id, data["location"]?.stringValue ?? "") }
            case "visitRendered", "visitRequestFailed", "visitRequestFailedWithNonHttpStatusCode":
                if visiting[w]?.identifier == id { visiting[w] = nil }
            case "pageInvalidated":
                visiting[w] = nil  // native cold-boots the page: the visit is over
            default:
                break
            }
            let status = data["statusCode"]?.intValue.map(Int.init)
            log.append(Observation(t: now, webview: w, step: step,
                                   .turbo(name: name, identifier: id, location: data["location"]?.stringValue,
                                          action: data["options"]?["action"]?.stringValue, statusCode: status, error: data["error"]?.stringValue)))
        case .bridgeMessage:
            log.append(Observation(t: now, webview: w, step: step,
                                   .bridgeMessage(component: p["component"]?.stringValue ?? "?", event: p["event"]?.stringValue ?? "?",
                                                  url: p["data"]?["metadata"]?["url"]?.stringValue, ignored: p["ignored"]?.boolValue ?? false,
                                                  reason: p["reason"]?.stringValue)))
        case .hotwirePathConfiguration:
            pathConfiguration = p
        case .capacitorCall:
            log.append(Observation(t: now, webview: w.isEmpty ? top : w, step: step,
                                   .capacitorCall(plugin: p["plugin"]?.stringValue ?? "?", method: p["method"]?.stringValue ?? "?",
                                                  callbackId: p["callbackId"]?.stringValue, unavailable: p["unavailable"]?.boolValue ?? false)))
        case .capacitorResult:
            // (Listener events are results of `addListener` calls: not answers to judge.)
            guard p["method"]?.stringValue != "addListener" else { break }
            let error = p["error"]
            log.append(Observation(t: now, webview: w.isEmpty ? top : w, step: step,
                                   .capacitorResult(plugin: p["plugin"]?.stringValue ?? "?", method: p["method"]?.stringValue ?? "?",
                                                    callbackId: p["callbackId"]?.stringValue ?? "?", success: p["success"]?.boolValue ?? true,
                                                    error: error?["message"]?.stringValue ?? error?.stringValue, code: error?["code"]?.stringValue)))
        case .sessionClosed:
            // The app ended its session (App.exitApp): nothing of it is asked or waited for any
            // more. The checker's own session.close (`closed`) is not the app's doing.
            let reason = p["reason"]?.stringValue ?? "closed"
            guard reason != "closed" else { break }
            sessionEnded = reason
            connected = []
            pendingProbes = []
            log.append(Observation(t: now, webview: top, step: step, .sessionEnded(reason: reason)))
        default:
            break
        }
    }

    static let answers: Set<ControllerEventName> = [
        .stackChanged, .webviewOpen, .webviewClosed, .webviewFailed, .externalOpen, .pageDisconnected, .pageConnected, .webviewDialog, .webviewCrashed, .browserCrashed, .webviewUnresponsive, .sessionLimit, .webviewDownload, .sessionClosed,
    ]
}
