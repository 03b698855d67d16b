import BridgeProtocol
import Foundation

/// The shell's everyday duties (docs/BROWSER.md, "What the shell decides"): what Chromium hands
/// to the app instead of a person — JavaScript dialogs, file choosers, permission prompts,
/// downloads, a renderer's death — reported as `BrowserEvent.shell(ShellEvent)`, and carried out
/// as the owner decides (`answerDialog`, `setFiles`, `reload`, `setGeolocation`).
extension BrowserHost {
    /// The shell's events of a web view's tab (`handleTabEvent`); true when `event` was one.
    func handleShellEvent(_ event: CDPEvent, tab: Tab, cdp: CDPConnection) async -> Bool {
        switch event.method {
        case "Page.javascriptDialogOpening":
            let p = event.params
            let type = p["type"]?.stringValue.flatMap(DialogType.init(rawValue:)) ?? .alert
            let dialog = Dialog(type: type, message: p["message"]?.stringValue ?? "", defaultValue: p["defaultPrompt"]?.stringValue ?? "",
                                url: p["url"]?.stringValue ?? "")
            emitShell(.dialogOpened(session: tab.session, webview: tab.webview, dialog))
        case "Page.javascriptDialogClosed":
            emitShell(.dialogClosed(session: tab.session, webview: tab.webview, accepted: event.params["result"]?.boolValue ?? false,
                                    text: event.params["userInput"]?.stringValue ?? ""))
        case "Page.fileChooserOpened":
            guard let node = event.params["backendNodeId"]?.intValue else { return true }
            let multiple = event.params["mode"]?.stringValue == "selectMultiple"
            fileChoosers[TabKey(tab.session, tab.webview)] = node
            // The input's `accept` (a page that just opened a chooser answers at once; bounded).
            var accept = ""
            do {
                let described = try await cdp.call("DOM.describeNode", ["backendNodeId": .int(node)], session: tab.cdpSession, timeout: 2)
                let attributes = described["node"]?["attributes"]?.arrayValue ?? []
                var i = 0
                while i + 1 < attributes.count {
                    if attributes[i].stringValue == "accept" { accept = attributes[i + 1].stringValue ?? "" }
                    i += 2
                }
            } catch {
                debug("\(tab.session) \(tab.webview): its file chooser's accept is not known: \(error)")
            }
            emitShell(.fileChooser(session: tab.session, webview: tab.webview, multiple: multiple, accept: accept))
        case "Inspector.targetCrashed":
            emitShell(.crashed(session: tab.session, webview: tab.webview, reason: "the page's renderer process died"))
        default:
            return false
        }
        return true
    }

    /// A dialog opened in a tab that is no web view's (a spare, a tab being closed): dismissed
    /// (a `beforeunload` lets the page go), so that nothing waits on it.
    func answerStrayDialog(_ event: CDPEvent, cdpSession: String, cdp: CDPConnection) {
        guard event.method == "Page.javascriptDialogOpening" else { return }
        let accept = event.params["type"]?.stringValue == "beforeunload"
        _ = cdp.start("Page.handleJavaScriptDialog", ["accept": .bool(accept)], session: cdpSession, timeout: options.callTimeoutSeconds)
    }

    func emitShell(_ event: ShellEvent) { emit(.shell(event)) }

    // MARK: The owner's answers

    /// Answers the open dialog of `webview`'s page. A dialog already gone (the page navigated,
    /// another DevTools client answered it) is no error.
    public func answerDialog(session: String, webview: ItemID, accept: Bool, text: String?) async {
        guard let (tab, cdp) = try? tab(session, webview) else { return }
        var params: JSONObject = ["accept": .bool(accept)]
        if let text { params["promptText"] = .string(text) }
        do {
            _ = try await cdp.call("Page.handleJavaScriptDialog", params, session: tab.cdpSession, timeout: options.callTimeoutSeconds)
        } catch {
            debug("\(session) \(webview): its dialog was not answered: \(error)")
        }
    }

    /// Loads the tab's page again (a crashed renderer starts anew, as a native shell reloads
    /// after its web content process died).
    public func reload(session: String, webview: ItemID, url: String) async throws {
        let (tab, cdp) = try tab(session, webview)
        _ = try await cdp.call("Page.reload", session: tab.cdpSession, timeout: options.callTimeoutSeconds)
    }

    /// Answers the open file chooser of `webview` with `files` (absolute paths).
    public func setFiles(session: String, webview: ItemID, files: [String]) async throws {
        let (tab, cdp) = try tab(session, webview)
        guard let node = fileChoosers.removeValue(forKey: TabKey(session, webview)) else {
            throw BrowserError.browser("\(webview) has no file chooser open")
        }
        _ = try await cdp.call("DOM.setFileInputFiles", ["files": .array(files.map { .string($0) }), "backendNodeId": .int(node)],
                               session: tab.cdpSession, timeout: options.callTimeoutSeconds)
    }

    /// Every tab of `session`, now and later, reports `position` to `navigator.geolocation`.
    public func setGeolocation(session: String, _ position: Geolocation) async throws {
        geolocations[session] = position
        guard let b = browser else { throw BrowserError.disconnected }
        for (key, tab) in tabs where key.session == session {
            _ = try await b.cdp.call("Emulation.setGeolocationOverride", Self.geolocationParams(position), session: tab.cdpSession,
                                     timeout: options.callTimeoutSeconds)
        }
    }

    static func geolocationParams(_ g: Geolocation) -> JSONObject {
        ["latitude": .double(g.latitude), "longitude": .double(g.longitude), "accuracy": .double(g.accuracy)]
    }

    /// The session's settings, applied to its browser context once it has one: permissions
    /// (`Browser.setPermission`), downloads reported and never saved, and the position its tabs
    /// report.
    public func applyShellSettings(session: String, _ settings: ShellSettings) async {
        if let g = settings.geolocation { geolocations[session] = g }
        guard let b = browser, let context = contexts[session] else { return }
        let t = options.callTimeoutSeconds
        await reportDownloads(b, context: context)
        for (name, setting) in settings.permissions.sorted(by: { $0.key < $1.key }) {
            do {
                _ = try await b.cdp.call("Browser.setPermission", [
                    "permission": ["name": .string(name)], "setting": .string(setting.rawValue), "browserContextId": .string(context),
                ], timeout: t)
            } catch {
                emit(.warning("\(session): permission \(name) was not set to \(setting.rawValue): \(error)"))
            }
        }
        if let g = settings.geolocation {
            for (key, tab) in tabs where key.session == session {
                do {
                    _ = try await b.cdp.call("Emulation.setGeolocationOverride", Self.geolocationParams(g), session: tab.cdpSession, timeout: t)
                } catch {
                    emit(.warning("\(session) \(key.webview): its position was not set: \(error)"))
                }
            }
        }
    }

    /// A context's downloads are reported (`Browser.downloadWillBegin`) and cancelled as they
    /// begin: the web view stays where it was, nothing is kept on disk. (Chromium reports no
    /// download it was told to deny: they are allowed into the browser's profile directory,
    /// which goes with the browser, and cancelled at once.)
    func reportDownloads(_ b: Browser, context: String) async {
        do {
            _ = try await b.cdp.call("Browser.setDownloadBehavior", [
                "behavior": "allowAndName", "browserContextId": .string(context), "eventsEnabled": true,
                "downloadPath": .string(b.process.profileDirectory + "/downloads"),
            ], timeout: options.callTimeoutSeconds)
        } catch {
            emit(.warning("downloads of browser context \(context) will not be reported (a download may leave a blank web view): \(error)"))
        }
    }

    /// `Browser.downloadWillBegin` (on the browser's own session): the tab whose frame began it.
    func downloadBegan(_ event: CDPEvent) {
        if let guid = event.params["guid"]?.stringValue, let b = browser {
            var params: JSONObject = ["guid": .string(guid)]
            if let frame = event.params["frameId"]?.stringValue, let key = tabsByTarget[frame], let context = contexts[key.session] {
                params["browserContextId"] = .string(context)
            }
            _ = b.cdp.start("Browser.cancelDownload", params, timeout: options.callTimeoutSeconds)
        }
        guard let frame = event.params["frameId"]?.stringValue, let key = tabsByTarget[frame], let tab = tabs[key] else { return }
        emitShell(.download(session: tab.session, webview: tab.webview, url: event.params["url"]?.stringValue ?? "",
                            filename: event.params["suggestedFilename"]?.stringValue ?? ""))
    }
}
