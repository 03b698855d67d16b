import Testing

@testable import BridgeProtocol

/// The presentation table as flows: a start, set-up proposals, one step, the stacks, visits and
/// outcome expected. Every visit completes at once with restoration identifier `r<screen id>`.
@Suite struct HotwireNavigatorTests {
    static let config = try! HotwirePathConfiguration(text: """
        {"rules": [
          {"patterns": ["/new$", "/edit$"], "properties": {"context": "modal"}},
          {"patterns": ["/numbers$"], "properties": {"view_controller": "numbers", "uri": "hotwire://fragment/numbers"}},
          {"patterns": ["^/$"], "properties": {"presentation": "clear_all"}},
          {"patterns": ["/do/refresh$"], "properties": {"presentation": "refresh"}},
          {"patterns": ["/do/pop$"], "properties": {"presentation": "pop"}},
          {"patterns": ["/do/none$"], "properties": {"presentation": "none"}},
          {"patterns": ["/do/replace$"], "properties": {"presentation": "replace"}},
          {"patterns": ["/do/push$"], "properties": {"presentation": "push"}},
          {"patterns": ["/do/root$"], "properties": {"presentation": "replace_root"}},
          {"patterns": ["/sheet/replace$"], "properties": {"presentation": "replace", "context": "modal"}},
          {"patterns": ["/sheet/root$"], "properties": {"presentation": "replace_root", "context": "modal"}},
          {"patterns": ["/search"], "properties": {"query_string_presentation": "replace"}}
        ]}
        """)
    static let origin = "http://app.test"

    enum Step: Sendable {
        case go(String, HotwireVisitAction = .advance, redirected: Bool = false)
        case back
        case modalFormFinished
        case failed(Int)
        case invalidated
    }

    struct Flow: CustomTestStringConvertible, Sendable {
        var name: String
        var platform: HotwirePlatform
        var start = "/"
        var setup: [Step] = []
        var step: Step
        var main: [String]
        var modal: [String] = []
        var commands: [String]
        var outcome: String
        var testDescription: String { "\(platform): \(name)" }
    }

    static func path(_ screen: HotwireScreen) -> String {
        if let native = screen.nativeScreen { return "#" + native }
        return String(screen.url.dropFirst(origin.count))
    }

    static func describe(_ command: HotwireCommand) -> String {
        switch command {
        case .visit(let v):
            var text = "\(v.context.stackName):\(v.action.rawValue)\(v.coldBoot ? "!" : ""):\(v.url.dropFirst(origin.count))"
            if let rid = v.restorationIdentifier { text += "@" + rid }
            return text
        case .cacheSnapshot(let c): return "cache:\(c.stackName)"
        case .clearSnapshotCache(let c): return "clear:\(c.stackName)"
        case .openExternal(let url): return "external:\(url)"
        case .restoreCurrentVisit(let c): return "restoreCurrent:\(c.stackName)"
        }
    }

    /// Runs one step; every visit completes with identifier `r<screen>`.
    static func run(_ step: Step, _ nav: inout HotwireNavigator) -> HotwireDecision? {
        let decision: HotwireDecision?
        switch step {
        case .go(let path, let action, let redirected):
            var options: JSONObject = ["action": .string(action.rawValue)]
            if redirected { options["response"] = ["statusCode": 200, "redirected": true] }
            let url = path.hasPrefix("http") ? path : origin + path
            decision = nav.propose(location: url, options: options, from: nav.activeContext)
        case .back:
            decision = nav.back()
        case .modalFormFinished:
            nav.formSubmissionFinished(context: .modal)
            return nil
        case .failed(let status):
            nav.recordFailure(context: nav.activeContext, statusCode: status)
            return nil
        case .invalidated:
            decision = nav.pageInvalidated(context: nav.activeContext)
        }
        for visit in decision?.visits ?? [] {
            nav.recordVisit(context: visit.context, restorationIdentifier: "r\(visit.screen)")
        }
        return decision
    }

    static func check(_ f: Flow) {
        var nav = HotwireNavigator(platform: f.platform, configuration: config, startURL: origin + f.start)
        nav.recordVisit(context: .default, restorationIdentifier: "r1")
        for step in f.setup { _ = run(step, &nav) }
        let decision = run(f.step, &nav)
        #expect(nav.main.map(path) == f.main, "main")
        #expect(nav.modal.map(path) == f.modal, "modal")
        #expect((decision?.commands ?? []).map(describe) == f.commands, "commands")
        #expect((decision?.outcome ?? ["nil"]).joined(separator: "+") == f.outcome, "outcome")
    }

    static let ios: [Flow] = [
        .init(name: "advance pushes", platform: .ios, step: .go("/one"),
              main: ["/", "/one"], commands: ["cache:main", "main:advance:/one"], outcome: "push"),
        .init(name: "same URL replaces", platform: .ios, setup: [.go("/one")], step: .go("/one"),
              main: ["/", "/one"], commands: ["main:advance:/one"], outcome: "replace"),
        .init(name: "previous URL pops", platform: .ios, setup: [.go("/one"), .go("/two")], step: .go("/one"),
              main: ["/", "/one"], commands: ["main:restore:/one@r2"], outcome: "pop"),
        .init(name: "replace action replaces", platform: .ios, setup: [.go("/one")], step: .go("/two", .replace),
              main: ["/", "/two"], commands: ["main:replace:/two"], outcome: "replace"),
        .init(name: "modal context presents, cold boot", platform: .ios, setup: [.go("/one")], step: .go("/items/new"),
              main: ["/", "/one"], modal: ["/items/new"], commands: ["cache:main", "modal:advance!:/items/new"], outcome: "present"),
        .init(name: "modal on modal pushes", platform: .ios, setup: [.go("/items/new")], step: .go("/items/1/edit"),
              main: ["/"], modal: ["/items/new", "/items/1/edit"], commands: ["cache:modal", "modal:advance:/items/1/edit"], outcome: "push"),
        .init(name: "modal form redirect pops the modal and pushes the result", platform: .ios,
              setup: [.go("/one"), .go("/items/new")], step: .go("/items/5", redirected: true),
              main: ["/", "/one", "/items/5"], commands: ["cache:main", "main:advance:/items/5"], outcome: "redirect+dismiss+push"),
        .init(name: "default from a modal dismisses and pushes even on replace", platform: .ios,
              setup: [.go("/one"), .go("/items/new")], step: .go("/two", .replace),
              main: ["/", "/one", "/two"], commands: ["cache:main", "main:replace:/two"], outcome: "dismiss+push"),
        .init(name: "GET redirect pops then replaces", platform: .ios,
              setup: [.go("/one"), .go("/follow")], step: .go("/redirected", .replace, redirected: true),
              main: ["/", "/redirected"], commands: ["main:replace:/redirected"], outcome: "redirect+pop+replace"),
        .init(name: "pop presentation", platform: .ios, setup: [.go("/one")], step: .go("/do/pop"),
              main: ["/"], commands: ["main:restore:/@r1"], outcome: "pop"),
        .init(name: "pop presentation dismisses a modal of one", platform: .ios, setup: [.go("/items/new")], step: .go("/do/pop"),
              main: ["/"], commands: [], outcome: "dismiss"),
        .init(name: "refresh pops and refreshes", platform: .ios, setup: [.go("/one"), .go("/two")], step: .go("/do/refresh"),
              main: ["/", "/one"], commands: ["main:replace:/one"], outcome: "pop+refresh"),
        .init(name: "refresh in a modal of one dismisses and refreshes main", platform: .ios,
              setup: [.go("/one"), .go("/items/new")], step: .go("/do/refresh"),
              main: ["/", "/one"], commands: ["main:replace:/one"], outcome: "dismiss+refresh"),
        .init(name: "clear_all", platform: .ios, setup: [.go("/one"), .go("/two"), .go("/items/new")], step: .go("/"),
              main: ["/"], commands: ["main:replace:/"], outcome: "dismiss+clear_all+refresh"),
        .init(name: "replace_root", platform: .ios, setup: [.go("/one")], step: .go("/do/root"),
              main: ["/do/root"], commands: ["main:replace:/do/root"], outcome: "replace_root"),
        .init(name: "none", platform: .ios, setup: [.go("/one")], step: .go("/do/none"),
              main: ["/", "/one"], commands: [], outcome: "none"),
        .init(name: "replace in modal context without a modal presents", platform: .ios, step: .go("/sheet/replace"),
              main: ["/"], modal: ["/sheet/replace"], commands: ["cache:main", "modal:advance!:/sheet/replace"], outcome: "present"),
        .init(name: "view_controller pushes a native screen and caches the snapshot", platform: .ios, step: .go("/numbers"),
              main: ["/", "#numbers"], commands: ["cache:main"], outcome: "push"),
        .init(name: "back from a native screen restores the web screen", platform: .ios, setup: [.go("/numbers")], step: .back,
              main: ["/"], commands: ["main:restore:/@r1"], outcome: "back+pop"),
        .init(name: "query_string_presentation replace compares paths", platform: .ios,
              setup: [.go("/search?q=a")], step: .go("/search?q=b"),
              main: ["/", "/search?q=b"], commands: ["main:advance:/search?q=b"], outcome: "replace"),
        .init(name: "a query change pushes by default", platform: .ios, setup: [.go("/list?p=1")], step: .go("/list?p=2"),
              main: ["/", "/list?p=1", "/list?p=2"], commands: ["cache:main", "main:advance:/list?p=2"], outcome: "push"),
        .init(name: "recede from a modal dismisses and pops", platform: .ios,
              setup: [.go("/one"), .go("/items/new")], step: .go("/recede_historical_location", redirected: true),
              main: ["/"], commands: ["main:restore:/@r1"], outcome: "redirect+dismiss+pop"),
        .init(name: "recede without redirect", platform: .ios,
              setup: [.go("/one"), .go("/items/new")], step: .go("/recede_historical_location"),
              main: ["/"], commands: ["main:restore:/@r1"], outcome: "dismiss+pop"),
        .init(name: "resume dismisses only", platform: .ios,
              setup: [.go("/one"), .go("/items/new")], step: .go("/resume_historical_location"),
              main: ["/", "/one"], commands: [], outcome: "dismiss+none"),
        .init(name: "refresh_historical dismisses and refreshes main", platform: .ios,
              setup: [.go("/one"), .go("/items/new")], step: .go("/refresh_historical_location"),
              main: ["/", "/one"], commands: ["main:replace:/one"], outcome: "dismiss+refresh"),
        .init(name: "another host opens outside", platform: .ios, step: .go("http://other.test/x"),
              main: ["/"], commands: ["external:http://other.test/x"], outcome: "external"),
        .init(name: "back restores with the stored id", platform: .ios, setup: [.go("/one"), .go("/two")], step: .back,
              main: ["/", "/one"], commands: ["main:restore:/one@r2"], outcome: "back+pop"),
        .init(name: "back at the root", platform: .ios, step: .back, main: ["/"], commands: [], outcome: "nil"),
        .init(name: "back in a modal of two restores the modal", platform: .ios,
              setup: [.go("/items/new"), .go("/items/1/edit")], step: .back,
              main: ["/"], modal: ["/items/new"], commands: ["modal:restore:/items/new@r2"], outcome: "back+pop"),
        .init(name: "after a modal form, dismissing clears main's snapshot cache", platform: .ios,
              setup: [.go("/one"), .go("/items/new"), .modalFormFinished], step: .back,
              main: ["/", "/one"], commands: ["clear:main"], outcome: "back+dismiss"),
        .init(name: "a second modal is no cold boot", platform: .ios,
              setup: [.go("/items/new"), .back], step: .go("/items/2/edit"),
              main: ["/"], modal: ["/items/2/edit"], commands: ["cache:main", "modal:advance:/items/2/edit"], outcome: "present"),
        .init(name: "pageInvalidated cold-boots the shown screen", platform: .ios, setup: [.go("/one")], step: .invalidated,
              main: ["/", "/one"], commands: ["main:advance!:/one"], outcome: "reload"),
        .init(name: "push is unknown on iOS", platform: .ios, setup: [.go("/one")], step: .go("/do/push", .replace),
              main: ["/", "/do/push"], commands: ["main:replace:/do/push"], outcome: "replace"),
    ]

    static let android: [Flow] = [
        .init(name: "advance pushes", platform: .android, step: .go("/one"),
              main: ["/", "/one"], commands: ["cache:main", "main:advance:/one"], outcome: "push"),
        .init(name: "same URL replaces", platform: .android, setup: [.go("/one")], step: .go("/one"),
              main: ["/", "/one"], commands: ["main:advance:/one"], outcome: "replace"),
        .init(name: "same URL at the start replaces the root", platform: .android, start: "/home", step: .go("/home"),
              main: ["/home"], commands: ["main:replace:/home"], outcome: "replace_root"),
        .init(name: "previous URL pops", platform: .android, setup: [.go("/one"), .go("/two")], step: .go("/one"),
              main: ["/", "/one"], commands: ["main:restore:/one@r2"], outcome: "pop"),
        .init(name: "GET redirect replaces (redirected is not read)", platform: .android,
              setup: [.go("/one"), .go("/follow")], step: .go("/redirected", .replace, redirected: true),
              main: ["/", "/one", "/redirected"], commands: ["main:replace:/redirected"], outcome: "replace"),
        .init(name: "modal context presents", platform: .android, setup: [.go("/one")], step: .go("/items/new"),
              main: ["/", "/one"], modal: ["/items/new"], commands: ["cache:main", "modal:advance!:/items/new"], outcome: "present"),
        .init(name: "replace into a modal pops the main top first", platform: .android, setup: [.go("/one")],
              step: .go("/items/new", .replace),
              main: ["/"], modal: ["/items/new"], commands: ["modal:replace!:/items/new"], outcome: "pop+present"),
        .init(name: "a main stack changed under the modal restores when it shows", platform: .android,
              setup: [.go("/one"), .go("/items/new", .replace)], step: .back,
              main: ["/"], commands: ["main:restore:/@r1"], outcome: "back+dismiss"),
        .init(name: "modal form redirect dismisses and pushes the result", platform: .android,
              setup: [.go("/one"), .go("/items/new")], step: .go("/items/5", redirected: true),
              main: ["/", "/one", "/items/5"], commands: ["cache:main", "main:advance:/items/5"], outcome: "dismiss+push"),
        .init(name: "modal result to the previous location replaces it", platform: .android,
              setup: [.go("/one"), .go("/items/new")], step: .go("/one"),
              main: ["/", "/one"], commands: ["main:replace:/one"], outcome: "dismiss+replace"),
        .init(name: "refresh refreshes the current screen without a pop", platform: .android,
              setup: [.go("/one"), .go("/two")], step: .go("/do/refresh"),
              main: ["/", "/one", "/two"], commands: ["main:replace:/two"], outcome: "refresh"),
        .init(name: "pop at the start is none", platform: .android, step: .go("/do/pop"),
              main: ["/"], commands: [], outcome: "none"),
        .init(name: "clear_all at the start is none", platform: .android, step: .go("/"),
              main: ["/"], commands: [], outcome: "none"),
        .init(name: "clear_all pops to the root, which restores", platform: .android,
              setup: [.go("/one"), .go("/two")], step: .go("/"),
              main: ["/"], commands: ["main:restore:/@r1"], outcome: "clear_all"),
        .init(name: "push presentation", platform: .android, setup: [.go("/one")], step: .go("/do/push", .replace),
              main: ["/", "/one", "/do/push"], commands: ["cache:main", "main:replace:/do/push"], outcome: "push"),
        .init(name: "modal replace_root is refused", platform: .android, step: .go("/sheet/root"),
              main: ["/"], commands: [], outcome: "rejected"),
        .init(name: "recede from a modal dismisses and pops", platform: .android,
              setup: [.go("/one"), .go("/items/new")], step: .go("/recede_historical_location"),
              main: ["/"], commands: ["main:restore:/@r1"], outcome: "dismiss+pop"),
        .init(name: "resume from a modal dismisses", platform: .android,
              setup: [.go("/one"), .go("/items/new")], step: .go("/resume_historical_location"),
              main: ["/", "/one"], commands: [], outcome: "dismiss+none"),
        .init(name: "refresh_historical from a modal refreshes main", platform: .android,
              setup: [.go("/one"), .go("/items/new")], step: .go("/refresh_historical_location"),
              main: ["/", "/one"], commands: ["main:replace:/one"], outcome: "dismiss+refresh"),
        .init(name: "native screen from the uri", platform: .android, step: .go("/numbers"),
              main: ["/", "#hotwire://fragment/numbers"], commands: ["cache:main"], outcome: "push"),
        .init(name: "back restores", platform: .android, setup: [.go("/one"), .go("/two")], step: .back,
              main: ["/", "/one"], commands: ["main:restore:/one@r2"], outcome: "back+pop"),
        .init(name: "back from a native screen restores the current visit", platform: .android,
              setup: [.go("/one"), .go("/numbers")], step: .back,
              main: ["/", "/one"], commands: ["restoreCurrent:main"], outcome: "back+pop"),
    ]

    @Test(arguments: ios) func iosFlow(_ f: Flow) { Self.check(f) }
    @Test(arguments: android) func androidFlow(_ f: Flow) { Self.check(f) }

    /// The router routes by host, as hotwire-native's same-host rule does: another port or
    /// scheme of the start host stays in the app; another host, or a non-http(s) URL, goes out.
    @Test(arguments: HotwirePlatform.allCases) func sameHostAnyPortStaysInTheApp(_ platform: HotwirePlatform) {
        var nav = HotwireNavigator(platform: platform, configuration: Self.config, startURL: "http://app.test:8080/")
        let port = nav.propose(location: "http://APP.test:9090/one")
        #expect(!port.outcome.contains("external"))
        #expect(nav.main.count == 2)
        let scheme = nav.propose(location: "https://app.test/two")
        #expect(!scheme.outcome.contains("external"))
        #expect(nav.propose(location: "http://other.test:8080/x").outcome == ["external"])
        #expect(nav.propose(location: "mailto:a@app.test").outcome == ["external"])
    }

    @Test func restoreWithoutAnIdIsAdvanceOnAndroid() {
        var nav = HotwireNavigator(platform: .android, configuration: Self.config, startURL: Self.origin + "/")
        _ = nav.propose(location: Self.origin + "/one")  // no identifier recorded for anything
        let back = nav.back()
        #expect(back?.visits.map(\.action) == [.advance])
        var ios = HotwireNavigator(platform: .ios, configuration: Self.config, startURL: Self.origin + "/")
        _ = ios.propose(location: Self.origin + "/one")
        #expect(ios.back()?.visits.map(\.action) == [.restore])
    }

    @Test func failureStateUntilTheNextVisit() {
        var nav = HotwireNavigator(platform: .ios, configuration: Self.config, startURL: Self.origin + "/")
        _ = nav.propose(location: Self.origin + "/missing")
        nav.recordFailure(context: .default, statusCode: 404)
        #expect(nav.top.failedStatus == 404)
        _ = nav.back()
        #expect(nav.top.failedStatus == nil)
        nav.recordVisit(context: .default, restorationIdentifier: "x", url: Self.origin + "/moved")
        #expect(nav.top.url == Self.origin + "/moved" && nav.top.restorationIdentifier == "x")
    }

    @Test func visitOptionsCarryTheResponse() {
        var nav = HotwireNavigator(platform: .ios, configuration: Self.config, startURL: Self.origin + "/")
        let response: JSONValue = ["statusCode": 200, "redirected": true, "responseHTML": "<p>"]
        let d = nav.propose(location: Self.origin + "/x", options: ["action": "advance", "response": response])
        #expect(d.visits.first?.options == ["action": "advance", "response": response])
        #expect(d.cause == "hotwire:default:redirect+push" || d.cause == "hotwire:default:push")
        #expect(d.changed)
    }
}
