// The frames `fuzz-bridge` sends (BridgeFuzz.swift's Driver): built from the protocol's
// templates, then mistyped. Compiled with it: in the fuzz binary, and through a link in the
// replay tests.
#if canImport(BridgeProtocol)
@testable import BridgeProtocol
#endif

extension Driver {
    // MARK: Frames

    /// A frame of the right shape with a member of the wrong type, missing or added (what
    /// byte mutations of the raw chunks seldom make).
    mutating func mistype(_ bytes: [UInt8], _ s: inout Script) -> [UInt8] {
        guard case .object(var o)? = try? JSONParser.parse(bytes) else { return bytes }
        let odd: JSONValue = s.pick([.null, true, 0, -1, 1.5, 1e300, "", "W1", [], [1, "a"], [:], ["a": [:]],
                                     .int(Int64.max), .int(Int64.min), .int(1 << 53 + 1), .string(String(repeating: "z", count: 300))])
        switch s.byte() % 6 {
        case 0: o["id"] = s.byte() % 3 == 0 ? nil : odd
        case 1: o["method"] = s.byte() % 3 == 0 ? nil : odd
        case 2: o["params"] = odd
        case 3: o["event"] = s.byte() % 2 == 0 ? .string("back") : odd
        default:
            var p = o["params"]?.objectValue ?? [:]
            if let key = p.keys.sorted().first, s.byte() % 2 == 0 {
                p[key] = odd
            } else {
                p[s.pick(["protocol", "role", "session", "webview", "token", "url", "handles", "events", "title", "action", "tab"])] = odd
            }
            o["params"] = .object(p)
        }
        return Array(JSONValue.object(o).jsonString.utf8)
    }

    mutating func someSession(_ s: inout Script) -> String {
        let current = bridge.sessionIDs
        switch s.byte() % 8 {
        case 0: return s.pick(["s-0000000000000000", "", "W1", "s-"])
        case 1 where !sessions.isEmpty: return s.pick(sessions)
        default: return current.isEmpty ? "s-none" : s.pick(current)
        }
    }

    mutating func someURL(_ s: inout Script) -> String {
        if routed, s.byte() % 5 < 3 {
            let n = s.byte()
            return s.pick(["http://h/app/home", "http://h/app/search", "tt://products/\(n)", "tt://cart", "tt://settings",
                           "os://search", "tt://account", "http://h/app/help/\(n)", "https://elsewhere.example/", "tt://nope/x"])
        }
        let n = s.byte()
        switch n % 12 {
        case 0: return "http://h/app/\(n)"
        case 1: return "tt://native/\(n % 3)"
        case 2: return ""
        case 3: return "http://h/app/?bridge_session=s-1&bridge_token=t"
        case 4: return "http://h/ü/ẞ#f"
        case 5: return "http://h/" + String(repeating: "a", count: s.byte() * 16)
        default: return s.pick(["http://h/app/", "http://h/app/a", "http://h/app/b?x=1", "http://h/c.html"])
        }
    }

    mutating func build(for c: ClientID, _ s: inout Script) -> [UInt8] {
        var params: JSONObject = [:]
        var name: String
        var asEvent = false
        switch roles[c] {
        case nil:
            name = s.byte() % 16 == 0 ? s.pick(["ping", "session.list", "pwa-navigate"]) : "hello"
            params["protocol"] = s.byte() % 16 == 0 ? 2 : 1
            if s.byte() % 4 != 0 {
                params["role"] = "page"
                if !claims.isEmpty && s.byte() % 3 != 0 {
                    let claim = s.pick(claims)
                    params["session"] = .string(claim.session)
                    params["webview"] = .string(claim.webview)
                    params["token"] = .string(s.byte() % 10 == 0 ? "bad" : claim.token)
                }
                if s.byte() % 3 != 0 { params["url"] = .string(someURL(&s)) }
            } else {
                params["role"] = "controller"
                var handles: [JSONValue] = []
                if s.byte() % 4 == 0 { handles.append("navigate") }
                if s.byte() % 4 == 0 { handles.append("webview.open") }
                if !handles.isEmpty { params["handles"] = .array(handles) }
            }
        case "page"?:
            if s.byte() % 3 != 0, let (event, p) = profilePageEvent(for: c, &s) {
                // Its profile's page events (hotwire.js, capacitor.js): events, no id.
                name = event
                params = p
                asEvent = s.byte() % 16 != 0
                break
            }
            name = s.pick(["pwa-navigate", "pwa-navigate", "pwa-rendered", "pwa-rendered", "back", "navigate", "ping",
                           "pwa-navigated", "cart.add", "hello", "session.list"] + (routed ? ["deeplink.open", "back"] : []))
            switch name {
            case "deeplink.open": params["url"] = .string(someURL(&s))
            case "pwa-navigate":
                if s.byte() % 5 != 0 { params["url"] = .string(someURL(&s)) }
                if s.byte() % 3 == 0 { params["title"] = .string("T\(s.byte())") }
            case "navigate", "pwa-navigated": params["url"] = .string(someURL(&s))
            case "cart.add": params["sku"] = .int(Int64(s.byte()))
            default: break
            }
            asEvent = name == "pwa-navigated" || name == "cart.add" || s.byte() % 3 == 0
        default:
            name = s.pick(["session.create", "session.list", "session.get", "session.close", "session.subscribe",
                           "session.unsubscribe", "navigation.navigateToUrl", "navigation.navigateToUrl", "navigation.back",
                           "navigation.canGoBack", "navigation.popToRoot", "ping", "bogus",
                           "webview.evaluate", "webview.click", "session.screenshot", "placeholder.snapshot"]
                          + (routed ? ["router.get", "router.perform", "router.perform", "router.perform", "router.selectTab",
                                       "deeplink.open", "router.resolve", "navigation.back"] : [])
                          + (s.byte() % 2 == 0 ? Self.profileMethods : []))
            switch name {
            case _ where Self.profileMethods.contains(name) && !(routed && name == "router.selectTab" && s.byte() % 2 == 0):
                params = profileRequestParams(name, &s)
            case "router.get":
                params["session"] = .string(someSession(&s))
            case "router.perform":
                params["session"] = .string(someSession(&s))
                let url = JSONValue.string(someURL(&s))
                params["action"] = s.pick(["goBack", "goBack", "popToTop", "resetHome", "openDrawer", "toggleDrawer", "bogus",
                                           ["type": "push", "url": url], ["type": "navigate", "url": url],
                                           ["type": "replace", "url": url], ["type": "pop", "count": .int(Int64(s.byte() % 3))]])
            case "router.selectTab":
                params["session"] = .string(someSession(&s))
                params["tab"] = .string(s.pick(["home", "search", "account", "nope"]))
            case "deeplink.open":
                params["session"] = .string(someSession(&s))
                params["url"] = .string(someURL(&s))
                if s.byte() % 3 == 0 { params["context"] = ["n": .int(Int64(s.byte()))] }
            case "router.resolve":
                params["url"] = .string(someURL(&s))
            case "session.create":
                if s.byte() % 3 != 0 { params["url"] = .string(someURL(&s)) }
                if s.byte() % 2 == 0 {
                    params["browser"] = true
                    let profile = profileParams(&s)
                    for (key, value) in zip(profile.keys, profile.values) { params[key] = value }
                }
            case "webview.evaluate", "webview.click":
                params["session"] = .string(someSession(&s))
                params["webview"] = .string(s.pick(["W1", "W2", "W3", "P1"]))
                params[name == "webview.click" ? "selector" : "expression"] = "x"
            case "session.screenshot":
                params["session"] = .string(someSession(&s))
            case "placeholder.snapshot":
                params["session"] = .string(someSession(&s))
                params["placeholder"] = .string(s.pick(["P1", "P2", "W1"]))
            case "session.get", "session.close", "navigation.back", "navigation.canGoBack", "navigation.popToRoot":
                params["session"] = .string(someSession(&s))
            case "session.subscribe", "session.unsubscribe":
                if s.byte() % 2 == 0 { params["session"] = .string(someSession(&s)) }
            case "navigation.navigateToUrl":
                params["session"] = .string(someSession(&s))
                params["url"] = .string(someURL(&s))
            default: break
            }
            asEvent = s.byte() % 32 == 0
        }
        var frame: JSONObject = [:]
        if asEvent {
            frame["event"] = .string(name)
        } else {
            nextID += 1
            frame["id"] = .int(s.byte() % 32 == 0 ? s.pick([0, -1, nextID - 1, 1 << 53]) : nextID)
            frame["method"] = .string(name)
        }
        if !params.isEmpty || s.byte() % 2 == 0 { frame["params"] = .object(params) }
        return Array(JSONValue.object(frame).jsonString.utf8)
    }
}
