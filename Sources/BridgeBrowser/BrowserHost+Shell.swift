import BridgeProtocol
import Foundation

/// The shell's everyday duties (docs/BROWSER.md, "What the shell decides"): what Chromium hands
/// to the app instead of a person — JavaScript dialogs, file choosers, permission prompts,
/// downloads, a renderer's death — reported as `BrowserEvent.shell(ShellEvent)`, and carried out
/// as the owner decides (`answerDialog`, `setFiles`, `reload`, `setGeolocation`).
extension BrowserHost {
    // (What a tab reports of them, `Page.javascriptDialogOpening` and the rest, the
    // `TabMachine` decides: TabMachine+Events.swift, `shellEvent`.)

    // MARK: The owner's answers

    /// Answers the open dialog of `webview`'s page. A dialog already gone (the page navigated,
    /// another DevTools client answered it) is no error.
    public func answerDialog(session: String, webview: ItemID, accept: Bool, text: String?) async {
        guard let (tab, cdp) = try? tab(session, webview) else { return }
        do {
            _ = try await cdp.call(.handleDialog(accept: accept, text: text), session: tab.cdpSession, timeout: options.callTimeoutSeconds)
        } catch {
            debug("\(session) \(webview): its dialog was not answered: \(error)")
        }
    }

    /// Loads the tab's page again (a crashed renderer starts anew, as a native shell reloads
    /// after its web content process died).
    public func reload(session: String, webview: ItemID, url: String) async throws {
        let (tab, cdp) = try tab(session, webview)
        _ = try await cdp.call(.reload, session: tab.cdpSession, timeout: options.callTimeoutSeconds)
    }

    /// Answers the open file chooser of `webview` with `files` (absolute paths).
    public func setFiles(session: String, webview: ItemID, files: [String]) async throws {
        let (tab, cdp) = try tab(session, webview)
        guard let node = machine.fileChoosers.removeValue(forKey: TabKey(session, webview)) else {
            throw BrowserError.browser("\(webview) has no file chooser open")
        }
        _ = try await cdp.call(DevToolsCall(.domSetFileInputFiles, ["files": .array(files.map { .string($0) }), "backendNodeId": .int(node)]),
                               session: tab.cdpSession, timeout: options.callTimeoutSeconds)
    }

    /// Every tab of `session`, now and later, reports `position` to `navigator.geolocation`.
    public func setGeolocation(session: String, _ position: Geolocation) async throws {
        geolocations[session] = position
        guard let b = browser else { throw BrowserError.disconnected }
        for (key, tab) in machine.tabs where key.session == session {
            _ = try await b.cdp.call(Self.geolocationCall(position), session: tab.cdpSession, timeout: options.callTimeoutSeconds)
        }
    }

    static func geolocationCall(_ g: Geolocation) -> DevToolsCall {
        DevToolsCall(.emulationSetGeolocationOverride, ["latitude": .double(g.latitude), "longitude": .double(g.longitude), "accuracy": .double(g.accuracy)])
    }

    /// The session's settings, applied to its browser context once it has one: permissions
    /// (`Browser.setPermission`), downloads reported and never saved, and the position its tabs
    /// report.
    public func applyShellSettings(session: String, _ settings: ShellSettings) async {
        if let g = settings.geolocation { geolocations[session] = g }
        guard let b = browser, let context = machine.contexts[session] else { return }
        let t = options.callTimeoutSeconds
        await reportDownloads(b, context: context)
        for (name, setting) in settings.permissions.sorted(by: { $0.key < $1.key }) {
            do {
                _ = try await b.cdp.call(DevToolsCall(.browserSetPermission, [
                    "permission": ["name": .string(name)], "setting": .string(setting.rawValue), "browserContextId": .string(context.rawValue),
                ]), timeout: t)
            } catch {
                emit(.warning("\(session): permission \(name) was not set to \(setting.rawValue): \(error)"))
            }
        }
        if let g = settings.geolocation {
            for (key, tab) in machine.tabs where key.session == session {
                do {
                    _ = try await b.cdp.call(Self.geolocationCall(g), session: tab.cdpSession, timeout: t)
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
    func reportDownloads(_ b: Browser, context: BrowserContextID) async {
        do {
            _ = try await b.cdp.call(DevToolsCall(.browserSetDownloadBehavior, [
                "behavior": "allowAndName", "browserContextId": .string(context.rawValue), "eventsEnabled": true,
                "downloadPath": .string(b.process.profileDirectory + "/downloads"),
            ]), timeout: options.callTimeoutSeconds)
        } catch {
            emit(.warning("downloads of browser context \(context) will not be reported (a download may leave a blank web view): \(error)"))
        }
    }
}
