import BridgeProtocol
import Foundation

/// What the machine makes of Chromium's events (docs/BROWSER.md, "How it works").
extension TabMachine {
    /// An event from Chromium: of a page (`session`, its DevTools session) or of the browser.
    /// `now`: the time it was handled (nanoseconds of a monotonic clock).
    mutating func event(_ event: DevToolsEvent, session: CDPSessionID?, now: UInt64) -> [TabCommand] {
        guard let s = session else { return browserEvent(event) }
        guard let key = tabsByCDPSession[s], let tab = tabs[key] else { return strayEvent(event, session: s) }
        lastTabActivity = now
        if let shell = shellEvent(event, tab: tab) { return shell }
        return tabEvent(event, tab: tab, now: now)
    }

    /// An event of a tab that is no web view's (a spare, a tab being closed).
    func strayEvent(_ event: DevToolsEvent, session s: CDPSessionID) -> [TabCommand] {
        switch event {
        case .requestPaused(let request):
            // A tab being closed loads nothing more (a spare whose client failed: its page
            // would run without it).
            if closing[s] != nil { return [.call(.failRequest(request.requestId), session: s)] }
            return [.call(.continueRequest(request.requestId), session: s)]
        case .dialogOpening(let type, _, _, _):
            // Dismissed (a `beforeunload` lets the page go), so that nothing waits on it.
            return [.send(.handleDialog(accept: type == "beforeunload"), session: s)]
        case .frameNavigated(_, true, _, _):
            // A tab being closed committed a document: the close may have been dropped.
            guard let targetId = closing[s] else { return [] }
            return [.call(.closeTarget(targetId))]
        default:
            return []
        }
    }

    /// The browser's own events (its targets, its downloads).
    mutating func browserEvent(_ event: DevToolsEvent) -> [TabCommand] {
        switch event {
        case .targetCreated(let info), .targetInfoChanged(let info):
            guard info.type == "page", tabsByTarget[info.targetId] == nil else { return [] }
            if case .targetCreated = event {
                guard let opener = info.openerId, let openerKey = tabsByTarget[opener] else { return [] }
                popups[info.targetId] = openerKey
            }
            guard let openerKey = popups[info.targetId], !info.url.isEmpty, info.url != "about:blank" else { return [] }
            popups[info.targetId] = nil
            var commands: [TabCommand] = [.call(.closeTarget(info.targetId))]
            if let opener = tabs[openerKey] {
                commands.append(.emit(.navigationRequested(session: opener.session, webview: opener.webview,
                                                           request: NavigationRequest(url: info.url, kind: .windowOpen))))
            }
            return commands
        case .targetDestroyed(let targetId):
            popups[targetId] = nil
            if let s = closing.first(where: { $0.value == targetId })?.key { closing[s] = nil }
            return [.dropSpare(targetId)]
        case .targetCrashed(let targetId, let status, let errorCode):
            var commands: [TabCommand] = [.dropSpare(targetId)]
            if let key = tabsByTarget[targetId], let tab = tabs[key], !tab.rendererGone {
                tabs[key]?.rendererGone = true
                let code = errorCode.map { ", code \($0)" } ?? ""
                commands.append(.emit(.shell(.crashed(session: tab.session, webview: tab.webview,
                                                      reason: "the page's renderer process died (\(status ?? "crashed")\(code))"))))
            }
            return commands
        case .downloadWillBegin(let guid, let frameId, let url, let filename):
            // Reported and cancelled as it begins: nothing is kept on disk.
            var commands: [TabCommand] = []
            let key = frameId.flatMap { tabsByTarget[TargetID($0)] }
            if let guid {
                commands.append(.send(.cancelDownload(guid: guid, context: key.flatMap { contexts[$0.session] })))
            }
            if let key, let tab = tabs[key] {
                commands.append(.emit(.shell(.download(session: tab.session, webview: tab.webview, url: url, filename: filename))))
            }
            return commands
        default:
            return []
        }
    }

    /// The shell's events of a web view's tab (BrowserHost+Shell.swift); nil when `event` is
    /// none.
    mutating func shellEvent(_ event: DevToolsEvent, tab: Tab) -> [TabCommand]? {
        switch event {
        case .dialogOpening(let type, let message, let defaultPrompt, let url):
            let dialog = Dialog(type: type.flatMap(DialogType.init(rawValue:)) ?? .alert, message: message, defaultValue: defaultPrompt, url: url)
            return [.emit(.shell(.dialogOpened(session: tab.session, webview: tab.webview, dialog)))]
        case .dialogClosed(let accepted, let text):
            return [.emit(.shell(.dialogClosed(session: tab.session, webview: tab.webview, accepted: accepted, text: text)))]
        case .fileChooserOpened(let node, let multiple):
            guard let node else { return [] }
            fileChoosers[tab.key] = node
            // The input's `accept` (a page that just opened a chooser answers at once; bounded).
            return [.ask(DevToolsCall(.domDescribeNode, ["backendNodeId": .int(node)]), session: tab.cdpSession, timeout: 2,
                         then: .fileChooser(tab.key, multiple: multiple))]
        case .inspectorTargetCrashed:
            guard !tab.rendererGone else { return [] }
            tabs[tab.key]?.rendererGone = true
            return [.emit(.shell(.crashed(session: tab.session, webview: tab.webview, reason: "the page's renderer process died")))]
        default:
            return nil
        }
    }

    /// A web view's tab's own events: its navigations, its requests, its loads.
    mutating func tabEvent(_ event: DevToolsEvent, tab: Tab, now: UInt64) -> [TabCommand] {
        let key = tab.key
        switch event {
        case .frameStartedNavigating(let frameId, let url, let type):
            guard frameId == tab.mainFrame else { return [] }
            tabs[key]?.lastNavigationType = type
            tabs[key]?.foreignLoad = type == "differentDocument" && !tab.pageRequestedNavigation && !tab.ownLoadPending
            tabs[key]?.pageRequestedNavigation = false
            if tab.ownTraversalPending {
                // The host's own traversal: to another fetched document it is the tab's own
                // load; to one that is not fetched (about:blank, where the tab began) it stops
                // there, and nothing is handed over.
                tabs[key]?.ownTraversalPending = false
                if type == "historyDifferentDocument" {
                    guard let url, Self.isNetwork(url) else { return [.call(.stopLoading, session: tab.cdpSession)] }
                    tabs[key]?.ownLoadPending = true
                }
                return []
            }
            // A traversal to a document that is not fetched (the tab's first entry, about:blank,
            // which stands for the web view below) pauses nowhere: it is stopped here. Fetched
            // ones are stopped at `Fetch.requestPaused`.
            if type == "historyDifferentDocument", let url, !Self.isNetwork(url) {
                return [.call(.stopLoading, session: tab.cdpSession), .emit(.historyBack(session: tab.session, webview: tab.webview))]
            }
            return []
        case .frameRequestedNavigation(let frameId, let url, let reason, let disposition):
            guard frameId == tab.mainFrame, let url, let scheme = url.split(separator: ":", maxSplits: 1).first?.lowercased() else { return [] }
            if ["http", "https"].contains(scheme) {
                tabs[key]?.pageRequestedNavigation = true
                guard settings.decidesNavigationsEarly, !tab.ownLoadPending, !tab.clientPending,
                      Self.decidedEarly(url: url, reason: reason, disposition: disposition) else { return [] }
                // Decided where a native shell decides (a web view's navigation action), not
                // once the request reaches the network: the next web view's tab loads while this
                // tab's own navigation starts. Its request is aborted when it comes.
                var decided = tab.decidedNavigations
                if decided.count == Self.decidedNavigationsLimit { decided.removeFirst() }
                decided.append(DecidedNavigation(url: url, at: now))
                tabs[key]?.decidedNavigations = decided
                return [.emit(.navigationRequested(session: tab.session, webview: tab.webview, request: NavigationRequest(url: url)))]
            }
            guard !["about", "data", "blob", "javascript", "file"].contains(scheme) else { return [] }
            return [.emit(.navigationRequested(session: tab.session, webview: tab.webview, request: NavigationRequest(url: url, kind: .customScheme)))]
        case .requestPaused(let request):
            return requestPaused(request, tab: tab, now: now)
        case .navigatedWithinDocument(let frameId, let url):
            guard frameId == tab.mainFrame, let url else { return [] }
            return [.emit(.urlChanged(session: tab.session, webview: tab.webview, url: url))]
        case .frameNavigated(let frameId, let isMain, let url, let unreachable):
            guard isMain, frameId == tab.mainFrame else { return [] }
            // A document again (a reload after a crash): a later death is reported again.
            tabs[key]?.rendererGone = false
            if let unreachable, !unreachable.isEmpty {
                // A load that failed after it started (the root's, which `location.replace`
                // starts, or any later one): Chromium shows its error page instead.
                tabs[key]?.failedLoad = unreachable
                return []
            }
            guard let url, Self.isNetwork(url) else { return [] }
            return [.emit(.urlChanged(session: tab.session, webview: tab.webview, url: url))]
        case .requestWillBeSent(let id, let type, let frameId):
            guard tab.watchingNetwork, type == "Document", frameId == tab.mainFrame, let id else { return [] }
            tabs[key]?.documentRequest = id
            tabs[key]?.netError = nil
            return []
        case .loadingFailed(let id, let text):
            guard tab.watchingNetwork, let id, id == tab.documentRequest, let text, !text.isEmpty else { return [] }
            tabs[key]?.netError = text
            return []
        case .loadEventFired:
            return loaded(tab)
        default:
            return []
        }
    }

    /// `Page.loadEventFired` of a web view's tab.
    private mutating func loaded(_ tab: Tab) -> [TabCommand] {
        let key = tab.key
        var commands: [TabCommand] = []
        if tab.watchingNetwork, tab.documentRequest != nil {
            // The root's first page (or Chromium's error page for it) has loaded. Not awaited:
            // the browser's later events (this load's failure, the spare tab it starts) do not
            // wait for the answer; a network event that still comes is ignored.
            tabs[key]?.watchingNetwork = false
            commands.append(.disableNetwork(tab.cdpSession, label: "\(tab.session) \(tab.webview)"))
        }
        if let failed = tab.failedLoad {
            tabs[key]?.failedLoad = nil
            tabs[key]?.netError = nil
            if let net = tab.netError {
                commands.append(.emit(.loadFailed(session: tab.session, webview: tab.webview, url: failed, reason: net)))
            } else {
                // Not watched (a later load): the error page names the net error (`ERR_CONNECTION_REFUSED`, …).
                commands.append(.ask(.evaluate("(document.querySelector('.error-code') || {}).textContent || ''", returnByValue: true),
                                     session: tab.cdpSession, then: .errorPage(key, url: failed)))
            }
            return commands
        }
        if tab.spareAfterLoad {
            tabs[key]?.spareAfterLoad = false
            commands.append(.spareAfterLoad(session: tab.session))
        }
        return commands
    }

    /// `Fetch.requestPaused` of a web view's tab: let through, served, or stopped for the owner
    /// to decide.
    private mutating func requestPaused(_ request: PausedRequest, tab: Tab, now: UInt64) -> [TabCommand] {
        let key = tab.key, requestId = request.requestId, url = request.url, method = request.method
        // What the session's web directory serves (its subresources, its frames' documents).
        if let web = webDirectories[tab.session], web.serves(url), request.resourceType != "Document" || request.frameId != tab.mainFrame {
            return [.serve(requestId: requestId, url: url, web, session: tab.cdpSession, label: "\(tab.session) \(tab.webview)")]
        }
        // Frames inside the page load as they like.
        if request.frameId != tab.mainFrame { return [.call(.continueRequest(requestId), session: tab.cdpSession)] }
        // The tab's own load, a reload, or a load another DevTools client started (Playwright's
        // `page.goto`: the host loading a url into this web view).
        if tab.ownLoadPending || tab.lastNavigationType == "reload" || (tab.foreignLoad && tab.lastNavigationType == "differentDocument") {
            tabs[key]?.ownLoadPending = false
            var params: JSONObject = ["requestId": .string(requestId)]
            if let post = tab.ownLoadPost, tab.ownLoadPending {
                tabs[key]?.ownLoadPost = nil
                params["method"] = .string(post.method)
                if let body = post.postData { params["postData"] = .string(Data(body).base64EncodedString()) }
                var headers = request.headers
                for (name, value) in post.headers { headers[name] = .string(value) }
                params["headers"] = .array(headers.map { .object(["name": .string($0.key), "value": $0.value]) })
            }
            // (Answered from the session's web directory when it serves the URL: `--web-dir`.)
            let served = webDirectories[tab.session].flatMap { $0.serves(url) ? $0 : nil }
            return [.letThrough(LetThrough(key: key, cdpSession: tab.cdpSession, requestId: requestId, url: url, continued: params,
                                           served: served, afterClient: tab.clientPending))]
        }
        if !tab.decidedNavigations.isEmpty {
            // Those that never came within the window are forgotten.
            let window = UInt64(max(0, settings.decidedNavigationSeconds) * 1_000_000_000)
            tabs[key]?.decidedNavigations.removeAll { now &- $0.at > window }
        }
        let historyBack = tab.lastNavigationType == "historyDifferentDocument"
        if method == "GET", !historyBack, let decided = tabs[key]?.decidedNavigations.firstIndex(where: { $0.url == url }) {
            // Handed over when the page asked for it: aborted, not reported again (not awaited:
            // the next web view's own request, paused beside it, comes next).
            tabs[key]?.decidedNavigations.remove(at: decided)
            return [.send(.failRequest(requestId), session: tab.cdpSession)]
        }
        var headers: [String: String] = [:]
        for (name, value) in request.headers {
            if let v = value.stringValue { headers[name] = v }
        }
        var stopped = StoppedNavigation(key: key, cdpSession: tab.cdpSession, requestId: requestId, url: url, method: method, headers: headers,
                                        postData: nil, historyBack: historyBack)
        if method != "GET", request.hasPostData {
            guard let inline = request.postData else {
                return [.ask(.getRequestPostData(requestId), session: tab.cdpSession, then: .postData(stopped))]
            }
            stopped.postData = Array(inline.utf8)
        }
        return Self.stop(stopped)
    }

    /// The request is aborted (the page stays where it was), and the owner hears where it went.
    static func stop(_ stopped: StoppedNavigation) -> [TabCommand] {
        let (session, webview) = (stopped.key.session, stopped.key.webview)
        let heard: BrowserEvent = stopped.historyBack ? .historyBack(session: session, webview: webview)
            : .navigationRequested(session: session, webview: webview, request: NavigationRequest(
                url: stopped.url, method: stopped.method, postData: stopped.postData, headers: stopped.headers))
        return [.call(.failRequest(stopped.requestId), session: stopped.cdpSession), .emit(heard)]
    }

    /// The answer to an `.ask`.
    mutating func answered(_ followUp: TabFollowUp, _ result: Result<JSONValue, any Error>) -> [TabCommand] {
        switch followUp {
        case .postData(var stopped):
            var commands: [TabCommand] = []
            switch result {
            case .success(let body):
                if let text = body["postData"]?.stringValue {
                    stopped.postData = body["base64Encoded"]?.boolValue == true ? Data(base64Encoded: text).map { [UInt8]($0) } : Array(text.utf8)
                }
            case .failure(let error):
                // Said, not swallowed: the new web view's POST goes without its body.
                commands.append(.emit(.warning("\(stopped.key.session) \(stopped.key.webview): the body of the \(stopped.method) to \(stopped.url) could not be read (\(error)); its web view sends it without one")))
            }
            return commands + Self.stop(stopped)
        case .errorPage(let key, let url):
            let name = (try? result.get())?["result"]?["value"]?.stringValue ?? ""
            let reason = name.hasPrefix("ERR_") ? "net::" + name : "the page could not be loaded (Chromium shows its error page)"
            return [.emit(.loadFailed(session: key.session, webview: key.webview, url: url, reason: reason))]
        case .fileChooser(let key, let multiple):
            var commands: [TabCommand] = []
            var accept = ""
            switch result {
            case .success(let described):
                let attributes = described["node"]?["attributes"]?.arrayValue ?? []
                var i = 0
                while i + 1 < attributes.count {
                    if attributes[i].stringValue == "accept" { accept = attributes[i + 1].stringValue ?? "" }
                    i += 2
                }
            case .failure(let error):
                commands.append(.debug("\(key.session) \(key.webview): its file chooser's accept is not known: \(error)"))
            }
            commands.append(.emit(.shell(.fileChooser(session: key.session, webview: key.webview, multiple: multiple, accept: accept))))
            return commands
        case .closeAnswered(let closed, let spareRight):
            // (A close that failed is sent again as one that was dropped.)
            var commands: [TabCommand] = []
            if let front = frontAfterClose(closed, spareRight: spareRight) { commands.append(.call(.bringToFront, session: front.cdpSession)) }
            commands.append(.retryClose(closed.targetId, closed.cdpSession))
            return commands
        }
    }
}
