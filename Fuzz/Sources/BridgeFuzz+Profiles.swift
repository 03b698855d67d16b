// The session profiles in `fuzz-bridge` (BridgeFuzz.swift's Driver): `session.create` with
// `profile: "hotwire-native"` or `"capacitor"` and their params, the page events of their
// scripts (js-client/hotwire/hotwire.js, js-client/capacitor/capacitor.js), their controller
// methods, and the host work only they ask for (`fetchPathConfiguration`, `readHistory`).
// Compiled with it: in the fuzz binary, and through a link in the replay tests.
#if canImport(BridgeProtocol)
@testable import BridgeProtocol
#endif

extension Driver {
    // MARK: session.create

    /// The path configuration of the fuzzed hotwire sessions: a modal, a native screen, a replace.
    static let hotwirePathConfiguration: JSONValue = [
        "rules": [
            ["patterns": ["/new$"], "properties": ["context": "modal"]],
            ["patterns": ["/numbers$"], "properties": ["view_controller": "numbers"]],
            ["patterns": ["/replace$"], "properties": ["presentation": "replace"]],
        ],
    ]

    /// Other documents (a fetched server copy): a modal with a native screen, a refresh, one
    /// that is no path configuration, an empty one.
    static let otherPathConfigurations: [JSONValue] = [
        hotwirePathConfiguration,
        ["rules": [
            ["patterns": ["/new$", "/edit$"], "properties": ["context": "modal", "pull_to_refresh_enabled": false]],
            ["patterns": ["/numbers$"], "properties": ["context": "modal", "view_controller": "numbers", "uri": "hotwire://fragment/numbers"]],
            ["patterns": ["/b$"], "properties": ["presentation": "refresh"]],
            ["patterns": ["/a$"], "properties": ["presentation": "clear_all"]],
        ], "settings": ["x": 1]],
        ["rules": "not a list"],
        [1, 2],
        ["rules": []],
    ]

    /// Tab titles of the fuzzed hotwire sessions (`tabs`), and the routed runs' tabs.
    static let tabTitles = ["Home", "Numbers", "More"]

    /// A profile's params for `session.create {browser: true}`, or none (the plain profile).
    mutating func profileParams(_ s: inout Script) -> JSONObject {
        var p: JSONObject = [:]
        switch s.byte() % 8 {
        case 0, 1, 2:
            p["profile"] = "hotwire-native"
            let platform = s.byte()
            if platform % 8 != 0 { p["platform"] = .string(platform % 16 == 1 ? "windows" : platform % 2 == 0 ? "ios" : "android") }
            switch s.byte() % 4 {
            case 0: break
            case 1: p["pathConfigurationUrl"] = .string(s.byte() % 8 == 0 ? "ftp://h/x" : "http://h/config.json")
            default: p["pathConfiguration"] = Self.hotwirePathConfiguration
            }
            if s.byte() % 2 == 0 {
                let n = 2 + s.byte() % 2
                var tabs: [JSONValue] = []
                for i in 0..<n {
                    var t: JSONObject = ["title": .string(Self.tabTitles[i])]
                    if i > 0 { t["url"] = .string(["http://h/app/a", "http://h/app/numbers", "http://h/app/b"][i]) }
                    tabs.append(.object(t))
                }
                if s.byte() % 16 == 0 { tabs.append(tabs[0]) }  // a title twice: refused
                p["tabs"] = .array(tabs)
            }
            if s.byte() % 2 == 0 { p["bridgeComponents"] = s.byte() % 16 == 0 ? ["no spaces"] : ["form", "menu"] }
        case 3, 4, 5:
            p["profile"] = "capacitor"
            let platform = s.byte()
            if platform % 8 != 0 { p["platform"] = .string(platform % 16 == 1 ? "web" : platform % 2 == 0 ? "ios" : "android") }
            if s.byte() % 3 != 0 {
                var c: JSONObject = ["appId": "com.example.fuzz"]
                switch s.byte() % 4 {
                case 0: c["plugins"] = ["App", "Browser", "Preferences", ["name": "Custom", "methods": ["ping", ["name": "watch", "rtype": "callback"]]]]
                case 1: c["plugins"] = ["App", "Nope"]  // refused
                case 2: c["plugins"] = ["Device", "Dialog"]
                default: break
                }
                if s.byte() % 2 == 0 { c["allowNavigation"] = ["*.example.com", "elsewhere.example"] }
                if s.byte() % 3 == 0 { c["launchUrl"] = "myapp://item/7" }
                if s.byte() % 4 == 0 { c["androidScheme"] = .string(s.byte() % 2 == 0 ? "http" : "gopher") }
                p["capacitor"] = .object(c)
            }
            if s.byte() % 4 == 0 { p["webDir"] = s.byte() % 4 == 0 ? "yes" : true }
            if s.byte() % 4 == 0 { p["appendUserAgent"] = "FuzzApp/1" }
        default:
            break
        }
        return p
    }

    // MARK: Pages

    /// The profile of session `sid`, as the driver plays it.
    func profileKind(of sid: String) -> String? {
        guard let s = bridge.sessions[sid] else { return nil }
        if s.hotwire != nil { return "hotwire" }
        if s.profile is CapacitorState { return "capacitor" }
        return nil
    }

    /// A URL of a hotwire session's app: the ones the rules match, the historical locations, or
    /// any of `someURL`'s.
    mutating func hotwireURL(_ s: inout Script) -> String {
        let path = s.byte()
        if path % 4 == 0 { return someURL(&s) }
        return "http://h/app" + s.pick(["/items/new", "/numbers", "/x/replace", "/recede_historical_location",
                                        "/resume_historical_location", "/refresh_historical_location", "/a", "/b",
                                        "/items/\(path % 3)", "/"])
            + (path % 16 == 1 ? "?q=\(path)" : "")
    }

    /// A page event of its session's profile for page `c` (nil: its session has none).
    mutating func profilePageEvent(for c: ClientID, _ s: inout Script) -> (String, JSONObject)? {
        guard case .page(let sid, let w)? = bridge.clients[c]?.role, let kind = profileKind(of: sid) else { return nil }
        let here = bridge.sessions[sid]?.engine.webView(w)?.url ?? "http://h/app/"
        if kind == "capacitor" { return capacitorPageEvent(here, &s) }
        let location: JSONValue = .string(s.byte() % 4 == 0 ? hotwireURL(&s) : here)
        switch s.byte() % 8 {
        case 0:
            return ("bridge.ready", ["location": location])
        case 1:
            var data: JSONObject = ["title": "T"]
            let meta = s.byte() % 4
            if meta != 0 { data["metadata"] = ["url": meta == 1 ? .string(hotwireURL(&s)) : location] }
            return ("bridge.message", ["id": .string(String(s.byte() % 4)), "component": .string(s.pick(["form", "menu", "nope"])),
                                       "event": .string(s.pick(["connect", "submitEnabled", "display"])), "data": .object(data),
                                       "location": location])
        case 2 where s.byte() % 8 == 0:
            return ("hotwire.pathConfiguration", ["rules": []])  // not a page's to send: refused
        default:
            break
        }
        let name = s.pick(["visitProposed", "visitProposed", "visitProposed", "pageLoaded", "visitStarted", "visitRendered",
                           "visitCompleted", "visitRequestFailed", "formSubmissionFinished", "pageInvalidated", "turboIsReady",
                           "visitRequestFailedWithNonHttpStatusCode", "visitProposalScrollingToAnchor", "pageLoadFailed"])
        var data: JSONObject = [:]
        let rid = JSONValue.string("r\(s.byte() % 4)")
        let vid = JSONValue.string("v\(s.byte() % 4)")
        switch name {
        case "visitProposed":
            data["location"] = .string(s.byte() % 16 == 0 ? "" : hotwireURL(&s))
            var options: JSONObject = [:]
            let a = s.byte()
            if a % 8 != 0 { options["action"] = .string(a % 8 == 1 ? "bogus" : ["advance", "advance", "replace", "restore"][a % 4]) }
            if s.byte() % 4 == 0 {
                options["response"] = ["statusCode": .int(Int64(s.pick([200, 302, 422, 500]))), "redirected": .bool(s.byte() % 2 == 0)]
            }
            data["options"] = .object(options)
        case "pageLoaded":
            data["restorationIdentifier"] = rid
        case "visitStarted":
            data["location"] = location
            data["identifier"] = vid
            data["hasCachedSnapshot"] = .bool(s.byte() % 2 == 0)
        case "visitRendered":
            data["identifier"] = vid
        case "visitCompleted":
            data["restorationIdentifier"] = rid
            data["identifier"] = vid
        case "visitRequestFailed", "visitRequestFailedWithNonHttpStatusCode":
            data["statusCode"] = .int(Int64(s.pick([0, 404, 401, 500, -1])))
            data["identifier"] = vid
        case "formSubmissionFinished":
            data["location"] = location
        default:
            break
        }
        return ("hotwire.message", ["name": .string(name), "data": .object(data), "location": location])
    }

    /// capacitor.js's `capacitor.ready` and `capacitor.call`s.
    mutating func capacitorPageEvent(_ here: String, _ s: inout Script) -> (String, JSONObject) {
        if s.byte() % 6 == 0 {
            return ("capacitor.ready", ["platform": .string(s.pick(["android", "ios"])), "url": .string(here)])
        }
        let calls: [(String, String, JSONObject, Bool)] = [
            ("App", "addListener", ["eventName": "backButton"], true),
            ("App", "addListener", ["eventName": "appStateChange"], true),
            ("App", "addListener", ["eventName": "appUrlOpen"], true),
            ("App", "removeAllListeners", [:], false),
            ("App", "toggleBackButtonHandler", ["enabled": false], false),
            ("App", "toggleBackButtonHandler", ["enabled": true], false),
            ("App", "getInfo", [:], false), ("App", "getState", [:], false), ("App", "getLaunchUrl", [:], false),
            ("App", "exitApp", [:], false), ("App", "minimizeApp", [:], false),
            ("Browser", "open", ["url": "https://elsewhere.example/x"], false), ("Browser", "close", [:], false),
            ("Browser", "addListener", ["eventName": "browserFinished"], true),
            ("Browser", "addListener", ["eventName": "browserPageLoaded"], true),
            ("Preferences", "set", ["key": "k", "value": "v"], false), ("Preferences", "get", ["key": "k"], false),
            ("Preferences", "keys", [:], false), ("Preferences", "clear", [:], false),
            ("Device", "getInfo", [:], false), ("Dialog", "confirm", ["message": "?"], false),
            ("Camera", "getPhoto", [:], false), ("Custom", "ping", [:], false), ("Custom", "watch", [:], true),
            ("Nope", "x", [:], false),
        ]
        let (plugin, method, options, save) = s.pick(calls)
        var p: JSONObject = ["plugin": .string(plugin), "method": .string(method), "options": .object(options), "save": .bool(save)]
        switch s.byte() % 8 {
        case 0: p["callbackId"] = "-1"
        case 1: p["callbackId"] = .null; p["unavailable"] = true
        case 2: p["callbackId"] = .int(Int64(s.byte() % 8))
        case 3: p["plugin"] = nil  // refused
        default: p["callbackId"] = .string(String(s.byte() % 8))
        }
        return ("capacitor.call", p)
    }

    // MARK: Controllers

    /// The profiles' controller methods.
    static let profileMethods = ["router.selectTab", "bridge.reply", "capacitor.mock", "capacitor.reply", "capacitor.emit",
                                 "navigation.openUrl", "app.pause", "app.resume"]

    /// The params of a profile's controller method `name`.
    mutating func profileRequestParams(_ name: String, _ s: inout Script) -> JSONObject {
        var p: JSONObject = ["session": .string(someSession(&s))]
        switch name {
        case "router.selectTab":
            p["tab"] = .string(s.pick(Self.tabTitles + ["home", "nope"]))
        case "bridge.reply":
            p["webview"] = .string(s.pick(["W1", "W2", "W3", "W4", "P1"]))
            p["id"] = .string(String(s.byte() % 4))
            p["component"] = .string(s.pick(["form", "menu"]))
            p["event"] = .string(s.pick(["connect", "submitEnabled"]))
            if s.byte() % 2 == 0 { p["data"] = s.byte() % 8 == 0 ? "x" : ["title": "Save"] }
        case "capacitor.mock":
            p["plugin"] = .string(s.pick(["App", "Camera", "Custom", "Browser", ""]))
            p["method"] = .string(s.pick(["getPhoto", "ping", "getInfo", "open", "exitApp"]))
            switch s.byte() % 5 {
            case 0: p["hold"] = true
            case 1: p["error"] = ["message": "no", "code": "E"]
            case 2: p["result"] = .null
            case 3: p["result"] = ["v": 1]; p["hold"] = true  // refused: two answers
            default: p["result"] = ["path": "/p.jpg"]
            }
            if s.byte() % 4 == 0 { p["times"] = .int(Int64(s.pick([1, 3, 0, 20000]))) }
        case "capacitor.reply":
            p["callbackId"] = s.byte() % 4 == 0 ? .int(Int64(s.byte() % 8)) : .string(String(s.byte() % 8))
            if s.byte() % 3 == 0 { p["error"] = "denied" } else { p["data"] = ["ok": true] }
        case "capacitor.emit":
            p["plugin"] = .string(s.pick(["App", "Browser", "Custom", "Nope"]))
            p["event"] = .string(s.pick(["backButton", "appUrlOpen", "browserFinished", "tick"]))
            if s.byte() % 2 == 0 { p["data"] = ["url": "myapp://x"] }
        case "navigation.openUrl":
            p["url"] = .string(s.pick(["myapp://item/7", "https://elsewhere.example/", "", "no scheme"]))
        default:
            break
        }
        return p
    }

    // MARK: The host

    /// The browser's answer to the work only profiles ask for; nil for work that needs none.
    mutating func profileHostResult(_ w: HostWork, fail: Bool, _ s: inout Script) -> HostResult? {
        switch w {
        case .fetchPathConfiguration(let sid, _, let url):
            let asked = s.byte() % 16 == 0 ? "http://h/other.json" : url
            return .pathConfigurationFetched(session: sid, url: asked,
                                             fail ? .failed("HTTP 404") : .document(s.pick(Self.otherPathConfigurations)))
        case .readHistory(let sid, let webview):
            return .historyRead(session: sid, webview: webview, canGoBack: s.byte() % 2 == 0)
        default:
            return nil
        }
    }
}
