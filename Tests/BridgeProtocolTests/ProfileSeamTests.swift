import Testing
@testable import BridgeProtocol

extension ProfileRegistry {
    /// The standard profiles and the test profile (Profiles/Kiosk/): its one registration line.
    static let withKiosk = ProfileRegistry(standard.kinds + [
        KioskProfile.self,
    ])
}

/// The profile seam (Sources/BridgeProtocol/Profiles/Profile.swift): one parser for every
/// front end, and a third profile made of a folder and one registration line.
@Suite struct ProfileSeamTests {
    static func harness() -> BridgeHarness {
        var configuration = BridgeConfiguration()
        configuration.profiles = .withKiosk
        return BridgeHarness(configuration: configuration)
    }

    /// A kiosk session on `http://k/app/`, its page connected.
    static func kiosk(_ h: inout BridgeHarness, _ ctl: ClientID) -> PageHandle {
        let r = h.request(ctl, "session.create", ["url": "http://k/app/", "profile": "kiosk", "home": "http://k/"])
        #expect(r["result"]?["profile"] == "kiosk", "\(r)")
        let sid = r["result"]?["session"]?.stringValue ?? ""
        return h.claimed(sid, "W1", r["result"]?["token"]?.stringValue ?? "")
    }

    @Test func oneParserForEveryProfile() throws {
        #expect(try SessionProfile.parse([:]) == .plain)
        #expect(try SessionProfile.parse(["profile": "astro"]) == .plain)
        let hotwire = try SessionProfile.parse(["profile": "hotwire-native", "platform": "android", "bridgeComponents": ["form"]])
        #expect(hotwire.name == "hotwire-native" && hotwire.needsBrowser && !hotwire.astroShim && hotwire.checkRules == "hotwire-native")
        // Written back as params, parsed again: the same profile.
        #expect(try SessionProfile.parse(hotwire.params) == hotwire)
        let ios = try SessionProfile.parse(["profile": "hotwire-native"])
        #expect(hotwire != .plain && hotwire != ios)
        #expect(hotwire.userAgent?("Chromium") == HotwireUserAgent.build(base: "Chromium", platform: .android, components: ["form"]))
        #expect(hotwire.pageScript?.asset == "hotwire.js" && ProfileRegistry.standard.scriptAssets == ["hotwire.js"])
        // The kiosk is known only where it is registered.
        #expect(throws: ProfileError("unknown profile \"kiosk\": \"astro\" (the default) or \"hotwire-native\"")) {
            try SessionProfile.parse(["profile": "kiosk", "home": "http://k/"])
        }
        #expect(throws: ProfileError("unknown profile \"x\": \"astro\" (the default), \"hotwire-native\" or \"kiosk\"")) {
            try SessionProfile.parse(["profile": "x"], registry: .withKiosk)
        }
        #expect(throws: ProfileError("'home' needs \"profile\": \"kiosk\"", param: "home")) {
            try SessionProfile.parse(["home": "http://k/"], registry: .withKiosk)
        }
        #expect(throws: ProfileError("'home' needs \"profile\": \"kiosk\"", param: "home")) {
            try SessionProfile.parse(["profile": "hotwire-native", "home": "http://k/"], registry: .withKiosk)
        }
        let kiosk = try SessionProfile.parse(["profile": "kiosk", "home": "http://k/"], registry: .withKiosk)
        #expect(kiosk.name == "kiosk" && kiosk.params == ["profile": "kiosk", "home": "http://k/"] && kiosk.astroShim)
        #expect(kiosk.userAgent?("Chromium") == "Chromium Kiosk/1.0")
    }

    /// `session.create {profile: "kiosk"}`: the profile starts the session, `session.get` says
    /// what it adds, the daemon's question (what its tabs get) is answered by it.
    @Test func aThirdProfileAnswersTheCoresQuestions() {
        var h = Self.harness()
        let ctl = h.controller(subscribeAll: true)
        let page = Self.kiosk(&h, ctl)
        let get = h.sessionGet(page.session)["result"]
        #expect(get?["profile"] == "kiosk" && get?["home"] == "http://k/" && get?["blocked"] == 0, "\(get ?? .null)")
        #expect(h.bridge.sessionProfile(page.session)?.name == "kiosk")
        #expect(h.bridge.sessionProfile(page.session)?.userAgent?("C") == "C Kiosk/1.0")
        // A profile's param on a plain Bridge: refused as unknown.
        var plain = BridgeHarness()
        let other = plain.controller()
        let refused = plain.request(other, "session.create", ["url": "http://k/", "profile": "kiosk", "home": "http://k/"])
        #expect(refused["error"]?["code"] == "invalid-params")
    }

    /// Its navigation hook decides what leaves the site; the core does the rest.
    @Test func theProfileDecidesNavigationsAndBack() {
        var h = Self.harness()
        let ctl = h.controller(subscribeAll: true)
        let page = Self.kiosk(&h, ctl)
        // Away from home: the profile's answer, nothing stacked.
        let away = h.request(page.client, "navigate", ["url": "http://elsewhere/"])
        #expect(away["result"] == ["handledBy": "kiosk"], "\(away)")
        #expect(h.eventParams(ctl, "kiosk.blocked").map { $0["url"] } == ["http://elsewhere/"])
        let pushed = h.request(ctl, "navigation.navigateToUrl", ["session": .string(page.session), "url": "http://other/"])
        #expect(Self.ids(pushed["result"]?["stack"]) == "W1", "\(pushed)")
        #expect(h.stackIDs(page.session) == "W1")
        // At home: the core's navigation (a classic push).
        _ = h.push(ctl, page.session, "http://k/app/two")
        #expect(h.stackIDs(page.session) == "W1 W2")
        #expect(h.sessionGet(page.session)["result"]?["blocked"] == 2)
        // Back: the core's while it can go back, then the profile's.
        let back = h.request(ctl, "navigation.back", ["session": .string(page.session)])
        #expect(back["result"]?["action"] != "none" && h.stackIDs(page.session) == "W1", "\(back)")
        let home = h.request(ctl, "navigation.back", ["session": .string(page.session)])
        #expect(home["result"]?["action"] == "none" && h.eventParams(ctl, "kiosk.home").count == 1, "\(home)")
        // Its page event; any other is the core's (app.event).
        let page1 = h.claimed(page.session, "W1", page.token)
        h.event(page1.client, "kiosk.ping")
        h.event(page1.client, "cart.add")
        #expect(h.eventParams(ctl, "kiosk.pong").count == 1 && h.eventParams(ctl, "app.event").count == 1)
        // A method of another profile's: refused with its owner's name.
        let reply = h.request(ctl, "bridge.reply", ["session": .string(page.session), "webview": "W1", "id": "1", "component": "c", "event": "e"])
        #expect(reply["error"]?["message"]?.stringValue == "session \(page.session) is not a hotwire-native session: bridge.reply needs {\"profile\": \"hotwire-native\"}")
    }

    /// The profile's state is part of the Bridge's value: the same inputs give equal Bridges, a
    /// different state does not compare equal.
    @Test func theProfileStateIsPartOfTheBridgesValue() {
        var a = Self.harness()
        var b = Self.harness()
        for h in [0, 1] {
            var x = h == 0 ? a : b
            let ctl = x.controller()
            let page = Self.kiosk(&x, ctl)
            _ = x.request(page.client, "navigate", ["url": "http://elsewhere/"])
            if h == 0 { a = x } else { b = x }
        }
        #expect(a.bridge == b.bridge)
        let sid = a.bridge.sessionIDs.first!
        _ = a.bridge.withSession(sid) { _, s in
            var state = s.profile as! KioskState
            state.blocked.append("http://more/")
            s.profile = state
        }
        #expect(a.bridge != b.bridge)
    }

    static func ids(_ stack: JSONValue?) -> String { BridgeHarness.ids(stack) }
}
