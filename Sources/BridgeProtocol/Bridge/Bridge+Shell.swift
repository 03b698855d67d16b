/// The shell's everyday duties in browser sessions (docs/BROWSER.md, "What the shell decides";
/// docs/PROTOCOL.md, "The shell's duties"): what a native web view hands to its app and the app
/// decides — JavaScript dialogs, file choosers, downloads, a renderer that died or a page that
/// stopped answering, a page opening tabs without end. The host reports them as
/// `HostResult.shell(ShellEvent)`; the Bridge tells controllers and decides, as
/// `HostWork.shell(ShellWork)`. Pure: the bounded wait for a controller's dialog answer is a timer.

/// A browser session's shell state (`BrowserState.shell`).
struct ShellState: Equatable {
    var settings = ShellSettings()
    struct OpenDialog: Equatable {
        var dialog: Dialog
        /// How it is being answered: `policy`, `controller` (waiting for one), `timeout`.
        var by: String
        /// Its timer while a controller's answer is awaited.
        var timer: TimerToken?
    }
    /// The open dialog of each web view's page.
    var dialogs: [ItemID: OpenDialog] = [:]
    /// Web views whose renderer died, with why (until `webview.reload`).
    var crashed: [ItemID: String] = [:]
    /// Web views whose page stopped answering (a call timed out), until one answers again.
    var unresponsive: Set<ItemID> = []
    /// Web views whose page has a file chooser open (`webview.setFiles` answers it).
    var fileChoosers: Set<ItemID> = []
    /// A navigation was refused for the tab limit and `session.limit` said so; said again only
    /// after the session went below the limit.
    var tabLimitReported = false
    /// The last dialog timer's number (`TimerToken` with `timerBit`).
    var timers: UInt64 = 0

    /// A web view closed: nothing of it is kept.
    mutating func forget(_ webview: ItemID) {
        dialogs[webview] = nil
        crashed[webview] = nil
        unresponsive.remove(webview)
        fileChoosers.remove(webview)
    }

    /// Timer tokens of the shell have this bit (the engine's count up from 1).
    static let timerBit: UInt64 = 1 << 63
    /// The app's own schemes (`Bridge.shellOpensOutside`).
    static let appSchemes: Set<String> = ["tt", "os"]
}

extension Bridge {
    // MARK: session.create

    /// The shell's settings of `session.create` (`dialogs`, `dialogTimeoutMs`, `permissions`,
    /// `geolocation`); nil when it names none of them. Checked in full: a bad one is
    /// `invalid-params` and nothing is created.
    static func shellSettings(_ o: JSONObject) throws(ProtocolError) -> ShellSettings? {
        let keys = ["dialogs", "dialogTimeoutMs", "permissions", "geolocation"]
        guard keys.contains(where: { o[$0] != nil && o[$0] != .null }) else { return nil }
        var settings = ShellSettings()
        let p = Params(o)
        if let text = try p.optionalString("dialogs") {
            guard let policy = DialogPolicy(rawValue: text) else {
                throw ProtocolError(.invalidParams, "\"dialogs\" is \"\(text)\"; it is one of \"accept\", \"dismiss\" (the default), \"controller\"")
            }
            settings.dialogs = policy
        }
        if let ms = try p.optionalInt("dialogTimeoutMs") {
            guard (1...Int64(ShellSettings.maxDialogTimeoutMs)).contains(ms) else {
                throw ProtocolError(.invalidParams, "\"dialogTimeoutMs\" must be between 1 and \(ShellSettings.maxDialogTimeoutMs) (got \(ms))")
            }
            settings.dialogTimeoutMs = Int(ms)
        }
        switch o["permissions"] {
        case nil, .null?: break
        case .object(let list)?:
            for (name, value) in list {
                guard ShellSettings.permissionNames.contains(name) else {
                    throw ProtocolError(.invalidParams, "\"permissions\" names \"\(name)\"; known: \(ShellSettings.permissionNames.sorted().joined(separator: ", "))")
                }
                guard let text = value.stringValue, let setting = PermissionSetting(rawValue: text) else {
                    throw ProtocolError(.invalidParams, "\"permissions\".\(name) must be \"granted\", \"denied\" or \"prompt\"")
                }
                settings.permissions[name] = setting
            }
        default:
            throw ProtocolError(.invalidParams, "\"permissions\" must be an object such as {\"geolocation\": \"granted\"}")
        }
        switch o["geolocation"] {
        case nil, .null?: break
        case .object(let g)?: settings.geolocation = try geolocation(Params(g), "geolocation.")
        default: throw ProtocolError(.invalidParams, "\"geolocation\" must be an object {latitude, longitude, accuracy}")
        }
        return settings
    }

    static func geolocation(_ p: Params, _ prefix: String = "") throws(ProtocolError) -> Geolocation {
        func number(_ key: String, _ range: ClosedRange<Double>, required: Bool) throws(ProtocolError) -> Double? {
            let v: Double
            switch p.object[key] {
            case nil, .null?:
                if required { throw ProtocolError(.invalidParams, "\"\(prefix)\(key)\" is required") }
                return nil
            case .int(let i)?: v = Double(i)
            case .double(let d)?: v = d
            default: throw ProtocolError(.invalidParams, "\"\(prefix)\(key)\" must be a number")
            }
            guard range.contains(v) else { throw ProtocolError(.invalidParams, "\"\(prefix)\(key)\" must be between \(range.lowerBound) and \(range.upperBound)") }
            return v
        }
        return Geolocation(latitude: try number("latitude", -90...90, required: true)!,
                           longitude: try number("longitude", -180...180, required: true)!,
                           accuracy: try number("accuracy", 0...1_000_000, required: false) ?? 10)
    }

    /// The shell's settings of a browser session (the daemon dresses its context with them).
    public func shellSettings(session sid: String) -> ShellSettings? { sessions[sid]?.browser?.shell.settings }

    // MARK: Requests

    mutating func shellRequest(_ client: ClientID, id: Int64, method: ShellMethod, named name: BridgeMethod, _ p: Params, now: Int64) throws(ProtocolError) {
        let (s, browser) = try browserSession(p, for: name)
        let sid = s.id
        let request = HostRequest(client: client, id: id)
        func webview() throws(ProtocolError) -> ItemID { try requestedWebView(p, in: s) }
        let work: ShellWork
        switch method {
        case .dialogAnswer:
            let wid = try webview()
            guard let open = browser.shell.dialogs[wid] else {
                throw ProtocolError(.conflict, "\(wid) of session \(sid) has no dialog open")
            }
            guard case .bool(let accept)? = p.object["accept"] else { throw ProtocolError(.invalidParams, "\"accept\" (a boolean) is required") }
            let text = try p.optionalString("text")
            withSession(sid) { b, s in
                if let timer = open.timer { b.effects.append(.cancel(TimerKey(session: s.serial, token: timer))) }
                s.browser!.shell.dialogs[wid]?.timer = nil
                s.browser!.shell.dialogs[wid]?.by = "controller"
            }
            sendResult(client, id: id) { _ in }
            effects.append(.host(.shell(.answerDialog(session: sid, webview: wid, accept: accept, text: open.dialog.type == .prompt ? (text ?? open.dialog.defaultValue) : nil))))
            return
        case .reload:
            let wid = try webview()
            // (The tab loads its own document again; the url says which, for the trace.)
            let url = s.engine.webView(wid)?.url ?? ""
            withSession(sid) { b, s in
                s.browser!.shell.crashed[wid] = nil
                s.browser!.shell.unresponsive.remove(wid)
                s.browser!.failed.removeAll { $0.webview == wid }
            }
            work = .reload(request, session: sid, webview: wid, url: url)
        case .setFiles:
            let wid = try webview()
            guard browser.shell.fileChoosers.contains(wid) else {
                throw ProtocolError(.conflict, "\(wid) of session \(sid) has no file chooser open (a click on an <input type=file> opens one: webview.fileChooser)")
            }
            guard let files = try p.optionalStringArray("files") else { throw ProtocolError(.invalidParams, "\"files\" (an array of paths) is required") }
            for f in files where !f.hasPrefix("/") {
                throw ProtocolError(.invalidParams, "\"files\" holds absolute paths on the daemon's machine (got \"\(f)\")")
            }
            withSession(sid) { _, s in s.browser!.shell.fileChoosers.remove(wid) }
            work = .setFiles(request, session: sid, webview: wid, files: files)
        case .setGeolocation:
            let g = try Self.geolocation(p)
            withSession(sid) { _, s in s.browser!.shell.settings.geolocation = g }
            work = .setGeolocation(request, session: sid, g)
        }
        hold(client, .answer(id: id))
        effects.append(.host(.shell(work)))
    }

    /// Why a request on `webview` of a browser session cannot be carried out now, if it cannot:
    /// its renderer died (`webview-crashed`, at once rather than after a timeout).
    func shellRefusal(_ s: Session, _ webview: ItemID) -> ProtocolError? {
        guard let reason = s.browser?.shell.crashed[webview] else { return nil }
        return ProtocolError(.webviewCrashed, "\(webview) of session \(s.id) crashed (\(reason)): webview.reload brings it back")
    }

    // MARK: What the shell reports

    mutating func shellEvent(_ event: ShellEvent, now: Int64) {
        switch event {
        case .dialogOpened(let sid, let wid, let dialog):
            withSession(sid) { b, s in
                guard s.browser != nil else { return }
                let settings = s.browser!.shell.settings
                var open = ShellState.OpenDialog(dialog: dialog, by: "policy")
                var answer: (accept: Bool, text: String?)?
                if dialog.type == .beforeunload {
                    // Native shells let the page go (no prompt to leave).
                    answer = (true, nil)
                } else {
                    switch settings.dialogs {
                    case .accept: answer = (true, dialog.type == .prompt ? dialog.defaultValue : nil)
                    case .dismiss: answer = (false, nil)
                    case .controller:
                        s.browser!.shell.timers &+= 1
                        let token = TimerToken(ShellState.timerBit | s.browser!.shell.timers)
                        open.by = "controller"
                        open.timer = token
                        b.effects.append(.schedule(TimerKey(session: s.serial, token: token), afterMs: settings.dialogTimeoutMs))
                    }
                }
                if let old = s.browser!.shell.dialogs[wid]?.timer { b.effects.append(.cancel(TimerKey(session: s.serial, token: old))) }
                s.browser!.shell.dialogs[wid] = open
                b.emit(&s, .webviewDialog) { w in
                    w.key("webview"); w.string(wid.description)
                    w.key("type"); w.string(dialog.type.rawValue)
                    w.key("message"); w.string(dialog.message)
                    w.key("defaultValue"); w.string(dialog.defaultValue)
                    w.key("url"); w.string(dialog.url)
                    w.key("policy"); w.string(dialog.type == .beforeunload ? "accept" : settings.dialogs.rawValue)
                }
                if let answer {
                    b.effects.append(.host(.shell(.answerDialog(session: sid, webview: wid, accept: answer.accept, text: answer.text))))
                }
            }
        case .dialogClosed(let sid, let wid, let accepted, let text):
            withSession(sid) { b, s in
                guard s.browser != nil, let open = s.browser!.shell.dialogs.removeValue(forKey: wid) else { return }
                if let timer = open.timer { b.effects.append(.cancel(TimerKey(session: s.serial, token: timer))) }
                b.emit(&s, .webviewDialogClosed) { w in
                    w.key("webview"); w.string(wid.description)
                    w.key("type"); w.string(open.dialog.type.rawValue)
                    w.key("accepted"); w.bool(accepted)
                    w.key("text"); w.string(text)
                    w.key("by"); w.string(open.timer != nil ? "page" : open.by)
                }
            }
        case .crashed(let sid, let wid, let reason):
            withSession(sid) { b, s in
                guard s.browser != nil, b.exists(wid, in: s), s.browser!.shell.crashed[wid] == nil else { return }
                s.browser!.shell.crashed[wid] = reason
                s.browser!.shell.unresponsive.remove(wid)
                s.browser!.shell.fileChoosers.remove(wid)
                if let open = s.browser!.shell.dialogs.removeValue(forKey: wid), let timer = open.timer {
                    b.effects.append(.cancel(TimerKey(session: s.serial, token: timer)))
                }
                let url = s.engine.webView(wid)?.url ?? ""
                b.emit(&s, .webviewCrashed) { w in
                    w.key("webview"); w.string(wid.description)
                    w.key("url"); w.string(url)
                    w.key("reason"); w.string(reason)
                }
            }
        case .unresponsive(let sid, let wid, let flag):
            withSession(sid) { b, s in
                guard s.browser != nil, b.exists(wid, in: s), s.browser!.shell.crashed[wid] == nil,
                      s.browser!.shell.unresponsive.contains(wid) != flag else { return }
                if flag { s.browser!.shell.unresponsive.insert(wid) } else { s.browser!.shell.unresponsive.remove(wid) }
                let url = s.engine.webView(wid)?.url ?? ""
                b.emit(&s, flag ? .webviewUnresponsive : .webviewResponsive) { w in
                    w.key("webview"); w.string(wid.description)
                    w.key("url"); w.string(url)
                }
            }
        case .fileChooser(let sid, let wid, let multiple, let accept):
            withSession(sid) { b, s in
                guard s.browser != nil, b.exists(wid, in: s) else { return }
                s.browser!.shell.fileChoosers.insert(wid)
                b.emit(&s, .webviewFileChooser) { w in
                    w.key("webview"); w.string(wid.description)
                    w.key("multiple"); w.bool(multiple)
                    w.key("accept"); w.string(accept)
                }
            }
        case .download(let sid, let wid, let url, let filename):
            withSession(sid) { b, s in
                guard s.browser != nil else { return }
                b.emit(&s, .webviewDownload) { w in
                    w.key("webview"); w.string(wid.description)
                    w.key("url"); w.string(url)
                    w.key("filename"); w.string(filename)
                }
                // A web view pushed for the download's link has no page to show: it goes, and
                // the web view below is where the user was (a native shell never leaves it).
                if s.engine.top?.id == wid, s.engine.stack.count > 1, s.pages[wid] == nil,
                   let pushed = s.engine.webView(wid), PageURL.stripClaim(pushed.url) == PageURL.stripClaim(url) {
                    b.back(&s, requester: nil, replyTo: nil, cause: BridgeMethod.navigationBack.name, now: now)
                }
            }
        }
    }

    /// A shell timer is due: a controller did not answer a dialog in time; the default answer
    /// goes (dismiss). Returns false for a timer that is not the shell's.
    mutating func shellTimerFired(_ key: TimerKey, now: Int64) -> Bool {
        guard key.token.raw & ShellState.timerBit != 0 else { return false }
        guard let sid = sessionIDBySerial[key.session] else { return true }
        withSession(sid) { b, s in
            guard s.browser != nil,
                  let wid = s.browser!.shell.dialogs.first(where: { $0.value.timer == key.token })?.key else { return }
            s.browser!.shell.dialogs[wid]?.timer = nil
            s.browser!.shell.dialogs[wid]?.by = "timeout"
            b.effects.append(.host(.shell(.answerDialog(session: sid, webview: wid, accept: false, text: nil))))
        }
        return true
    }

    // MARK: Bounds

    /// Whether a navigation stopped in a tab may open one more tab: a browser session has at
    /// most `maxTabsPerSession` live tabs. Refused: `session.limit {limit: "tabs", max, url}`
    /// (once, until the session is below the limit again) and nothing changes.
    mutating func shellAllowsTab(_ s: inout Session, for stop: NavigationStop) -> Bool {
        guard stop.disposition != .customScheme, s.browser != nil else { return true }
        let max = configuration.maxTabsPerSession
        guard s.browser!.tabbed.count >= max else {
            s.browser!.shell.tabLimitReported = false
            return true
        }
        guard !s.browser!.shell.tabLimitReported else { return false }
        s.browser!.shell.tabLimitReported = true
        let url = stop.url
        emit(&s, .sessionLimit) { w in
            w.key("limit"); w.string("tabs")
            w.key("max"); w.int(Int64(max))
            w.key("webview"); w.string(stop.webview.description)
            w.key("url"); w.string(url)
        }
        return false
    }

    /// The app's own schemes: `tt://` (a native screen) and `os://` (a web view) are stacked as
    /// any navigation; every other scheme a browser cannot load (`mailto:`, `tel:`, `sms:`,
    /// `intent:`, `market:`, another app's) opens outside the app, as a native shell hands it to
    /// the system.
    static var appSchemes: Set<String> { ShellState.appSchemes }

    /// A navigation of a scheme the browser cannot load and the app does not own: controllers
    /// get `external.open {url, webview}` and nothing is stacked (no tab on a page that cannot
    /// be shown). Routed and profiled sessions decide for themselves. True when it was opened
    /// outside.
    mutating func shellOpensOutside(_ s: inout Session, _ stop: NavigationStop) -> Bool {
        guard stop.disposition == .customScheme, !s.isRouted, s.profile == nil,
              let scheme = stop.url.split(separator: ":", maxSplits: 1).first?.lowercased(),
              !Self.appSchemes.contains(scheme) else { return false }
        emitExternalOpen(&s, url: stop.url, from: stop.webview)
        return true
    }

    // MARK: session.get

    /// `session.get`'s `"webviews"` of a browser session: each web view not in its ordinary
    /// state, `{"W2": {"state": "crashed", "reason": …}}` (`crashed`, `unresponsive`,
    /// `dialog` with the dialog, `fileChooser`).
    func writeShellStates(_ s: Session, into w: inout JSONWriter) {
        let shell = s.browser?.shell ?? ShellState()
        var ids = Set(shell.crashed.keys).union(shell.unresponsive).union(shell.dialogs.keys).union(shell.fileChoosers)
        ids = ids.filter { exists($0, in: s) }
        w.beginObject()
        for wid in ids.sorted() {
            w.key(wid.description); w.beginObject()
            if let reason = shell.crashed[wid] {
                w.key("state"); w.string("crashed")
                w.key("reason"); w.string(reason)
            } else if let open = shell.dialogs[wid] {
                w.key("state"); w.string("dialog")
                w.key("dialog"); w.beginObject()
                w.key("type"); w.string(open.dialog.type.rawValue)
                w.key("message"); w.string(open.dialog.message)
                w.endObject()
            } else if shell.unresponsive.contains(wid) {
                w.key("state"); w.string("unresponsive")
            } else {
                w.key("state"); w.string("fileChooser")
            }
            w.endObject()
        }
        w.endObject()
    }
}
