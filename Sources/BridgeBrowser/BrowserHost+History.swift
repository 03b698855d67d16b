import BridgeProtocol

/// A web view's own history and loads, for a profile whose app has one web view that navigates
/// in place (docs/ARCHITECTURE.md, "Profiles": `HostWork.readHistory`, `goBackInHistory`,
/// `loadURL`).
extension BrowserHost {
    /// Whether the tab of `webview` has an http(s) entry before its current one (a web view's
    /// `canGoBack()`; `about:blank`, where a tab starts, is not one). False when there is no tab.
    public func canGoBack(session: String, webview: ItemID) async -> Bool {
        guard let (tab, cdp) = try? tab(session, webview) else { return false }
        let history: JSONValue
        do {
            history = try await cdp.call(.navigationHistory, session: tab.cdpSession, timeout: options.callTimeoutSeconds)
        } catch {
            // Said, then answered as a web view without a page behind it would be.
            emit(.warning("\(session) \(webview): its history could not be read (\(error)); taken as no entry to go back to"))
            return false
        }
        guard let index = history["currentIndex"]?.intValue, let entries = history["entries"]?.arrayValue,
              index > 0, Int(index) <= entries.count else { return false }
        let url = entries[Int(index) - 1]["url"]?.stringValue ?? ""
        return url.hasPrefix("http:") || url.hasPrefix("https:")
    }

    /// The tab of `webview` goes one entry back in its history, as the web view's own
    /// traversal (let through to another document, never handed over as a back: see
    /// `TabMachine.Tab.ownTraversalPending`). Nothing at its first http(s) entry.
    public func goBackInHistory(session: String, webview: ItemID) async throws {
        let (tab, cdp) = try tab(session, webview)
        let t = options.callTimeoutSeconds
        let history = try await cdp.call(.navigationHistory, session: tab.cdpSession, timeout: t)
        guard let index = history["currentIndex"]?.intValue, index > 0,
              let entries = history["entries"]?.arrayValue, Int(index) <= entries.count,
              let id = entries[Int(index) - 1]["id"]?.intValue,
              TabMachine.isNetwork(entries[Int(index) - 1]["url"]?.stringValue ?? "") else { return }
        machine.tabs[TabKey(session, webview)]?.ownTraversalPending = true
        _ = try await cdp.call(DevToolsCall(.pageNavigateToHistoryEntry, ["entryId": .int(id)]), session: tab.cdpSession, timeout: t)
    }

    /// The tab of `webview` loads `url` itself, as its own load (not stopped again).
    public func load(session: String, webview: ItemID, url: String) async throws {
        let (tab, cdp) = try tab(session, webview)
        machine.tabs[TabKey(session, webview)]?.ownLoadPending = TabMachine.isNetwork(url)
        let nav = try await cdp.call(.navigate(url), session: tab.cdpSession, timeout: options.callTimeoutSeconds)
        if let error = nav["errorText"]?.stringValue, !error.isEmpty, error != "net::ERR_ABORTED" {
            throw BrowserError.loadFailed(url: url, reason: error)
        }
    }
}
