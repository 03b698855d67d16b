/// Hotwire Native's tab bar in a hotwire-native session (docs/HOTWIRE.md, "Tabs"): selecting
/// a tab; each tab's navigator, web views and items are `HotwireTabState`s of the session's
/// `HotwireState` (Bridge+Hotwire.swift).
extension Bridge {
    /// The tab bar selects tab `name` (`router.selectTab`): its navigator becomes the one the
    /// user sees and navigates; started on first selection (its web view's tab opens on the
    /// tab's URL, `webview.open`), else its web view comes to the front. Answered with
    /// `{action: "selectTab", tab, removed: [], stack, tree}` before the events. An unknown tab
    /// is `invalid-params` and changes nothing; the selected one changes nothing. (A session
    /// without `tabs` has no tab bar: `conflict`, as for the router's other actions.)
    mutating func selectHotwireTab(_ s: inout Session, name: String, client: ClientID, id: Int64, now: Int64) throws(ProtocolError) {
        let h = s.hotwire!
        let names = h.profile.tabs.map(\.title)
        guard let tab = names.firstIndex(of: name) else {
            throw ProtocolError(.invalidParams, "session \(s.id) has no tab \(name.debugDescription); its tabs: \(names.joined(separator: ", "))")
        }
        let sid = s.id
        let mark = effects.count
        if tab != h.selected {
            s.hotwire!.selected = tab
            var opened: (ItemID, String, String)?
            if !h.tabs[tab].started, let webview = h.tabs[tab].webviews[.default] {
                s.hotwire!.tabs[tab].started = true
                let url = h.tabs[tab].navigator.main.first?.url ?? ""
                opened = (webview, url, issueToken(&s, webview))
            } else if let top = h.topWebView(of: tab) {
                effects.append(.host(.showTab(session: sid, webview: top)))
            }
            applyHotwire(HotwireDecision(presentation: .none, outcome: ["selectTab"], commands: [], changed: true),
                         &s, tab: tab, now: now)
            if let (webview, url, token) = opened {
                rememberToken(&s, webview, token)
                emitWebviewOpen(&s, webview, url: url, token: token)
                effects.append(.host(.openTab(session: sid, webview: webview, url: url, token: token, post: nil, root: false)))
            }
        }
        let stack = stackJSON(&s)
        let tree = s.tree?.toJSON() ?? .null
        let reply = replyEffect(client) { b in
            b.sendResult(client, id: id) { w in
                w.key("action"); w.string("selectTab")
                w.key("tab"); w.string(name)
                w.key("removed"); w.write(.array([]))
                w.key("stack"); w.raw(stack)
                w.key("tree"); w.write(tree)
            }
        }
        effects.insert(contentsOf: reply, at: mark)
    }
}
