import Foundation
import BridgeConfig
import BridgeProtocol
import Testing
@testable import BridgeTrace

/// Drives a state machine the way the daemon does in record mode, keeping the trace's lines.
struct Recording {
    let tape = RandomTape()
    var bridge: Bridge<TapeRandom<SystemRandomNumberGenerator>>
    var recorder = TraceRecorder()
    var lines: [String]
    var now: Int64 = 5_000_000
    var inbox: [UInt64: [JSONValue]] = [:]

    init(configuration: BridgeConfiguration = BridgeConfiguration(), routerYAML: String? = nil) {
        let router = routerYAML.map { try! RouterConfigFile.router(yaml: $0) }
        bridge = Bridge(configuration: configuration, router: router, random: TapeRandom(SystemRandomNumberGenerator(), tape: tape))
        lines = [TraceHeader(configuration: configuration, routerYAML: routerYAML).line]
    }

    mutating func feed(_ input: BridgeInput) {
        bridge.apply(input, at: now)
        let effects = bridge.drainEffects()
        for case .send(let c, let bytes) in effects {
            inbox[c.raw, default: []].append(try! JSONParser.parse(bytes))
        }
        lines += recorder.lines(for: input, at: now, random: tape.take(), effects: effects, bridge: bridge)
    }

    mutating func send(_ c: UInt64, _ text: String) { feed(.frame(ClientID(c), text: Array(text.utf8))) }

    /// Several inputs before one drain of the effects, as a host that batches does.
    mutating func feedGroup(_ inputs: [BridgeInput]) {
        var recorded: [RecordedInput] = []
        for input in inputs {
            bridge.apply(input, at: now)
            recorded.append(RecordedInput(input, at: now, random: tape.take()))
            now += 7
        }
        let effects = bridge.drainEffects()
        lines += recorder.lines(for: recorded, effects: effects, bridge: bridge)
    }

    /// The seed scenario's start: a page, two PWA navigations (one rendered, one left to the
    /// timer), a controller's back, a classic navigation.
    static func seed() -> Recording {
        var r = Recording()
        r.feed(.connected(ClientID(1), isLoopback: true))
        r.send(1, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        r.send(1, #"{"id":2,"method":"session.subscribe","params":{}}"#)
        r.feed(.connected(ClientID(2), isLoopback: true))
        r.send(2, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://h/app/"}}"#)
        let sid = r.inbox[2]![0]["result"]!["session"]!.stringValue!
        r.now += 10_000
        r.send(2, #"{"id":2,"method":"pwa-navigate","params":{"url":"http://h/app/#/a"}}"#)
        r.now += 42_000
        r.send(2, #"{"id":3,"method":"pwa-rendered","params":{}}"#)
        r.send(2, #"{"id":4,"method":"pwa-navigate","params":{"url":"http://h/app/#/b"}}"#)
        r.now += 1_000_000
        let key = r.scheduledKeys.last!
        r.feed(.timerFired(key))
        r.send(1, #"{"id":3,"method":"navigation.back","params":{"session":"\#(sid)"}}"#)
        r.send(2, #"{"event":"navigate","params":{"url":"http://h/app/classic.html"}}"#)
        r.send(2, "not json")
        r.feed(.left(ClientID(2)))
        return r
    }

    var scheduledKeys: [TimerKey] {
        lines.compactMap { l -> TimerKey? in
            guard let e = try? TraceEvent.parse(l, number: 0), case .output(.schedule(let k, _), _) = e else { return nil }
            return k
        }
    }

    var text: String { lines.joined(separator: "\n") + "\n" }
}

@Suite struct TraceTests {
    @Test func everyLineRoundTrips() throws {
        let r = Recording.seed()
        let trace = try Trace.parse(r.text)
        #expect(trace.events.count == r.lines.count - 1)
        for (line, event) in trace.events {
            #expect(event.line == r.lines[line - 1])
        }
        // The random words of the session id and the page's token sit on the page's hello.
        let hello = trace.events.first { if case .input(.frame(ClientID(2), _), _, let rand) = $0.event { return !rand.isEmpty } else { return false } }
        if case .input(_, _, let rand)? = hello?.event { #expect(rand.count == 3) } else { Issue.record("no hello with random words") }
        // Stacks in the seed's notation, a snapshot reference per placeholder.
        let stacks = trace.events.compactMap { e -> String? in if case .stack(_, let s, _) = e.event { return s ?? "gone" } else { return nil } }
        #expect(stacks == ["W1(*C)", "P1 W1(*P)", "P1 P2 W1(*P)", "P1 W1(*P)", "P1 W1(*P)~ W2(*C)~"])
        let snaps = trace.events.compactMap { e -> String? in if case .snapshot(_, let p, _, _) = e.event { return p } else { return nil } }
        #expect(snaps == ["P1", "P2"])
    }

    @Test func recordedSessionReplaysIdentically() throws {
        let r = Recording.seed()
        let outcome = try Replayer.replay(try Trace.parse(r.text))
        guard case .identical(let inputs, let outputs) = outcome else {
            Issue.record("diverged: \(outcome)"); return
        }
        #expect(inputs == 13)
        #expect(outputs > 20)
    }

    /// A routed session where the engine (navigateToUrl, pwa-navigate) and the router
    /// (deeplink.open) both create items: ids come from the session's one allocator, and the
    /// replay draws the same ones.
    @Test func routedSessionReplaysToTheSameIDs() throws {
        let yaml = """
            version: 1
            web_base: http://h/app/
            tabs:
              - {name: home, url: "http://h/app/"}
              - {name: more, url: "http://h/app/more"}
            """
        var r = Recording(routerYAML: yaml)
        r.feed(.connected(ClientID(1), isLoopback: true))
        r.send(1, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        r.send(1, #"{"id":2,"method":"session.subscribe","params":{}}"#)
        r.feed(.connected(ClientID(2), isLoopback: true))
        r.send(2, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://h/app/"}}"#)
        let sid = r.inbox[2]![0]["result"]!["session"]!.stringValue!
        r.send(2, #"{"id":2,"method":"pwa-navigate","params":{"url":"http://h/app/#/a"}}"#)
        r.send(1, #"{"id":3,"method":"navigation.navigateToUrl","params":{"session":"\#(sid)","url":"http://h/app/x"}}"#)
        r.send(1, #"{"id":4,"method":"deeplink.open","params":{"session":"\#(sid)","url":"http://h/app/y"}}"#)
        r.send(1, #"{"id":5,"method":"navigation.navigateToUrl","params":{"session":"\#(sid)","url":"http://h/app/z"}}"#)
        let replies = r.inbox[1]!.filter { $0["id"] != nil }
        #expect(replies.first { $0["id"] == 3 }?["result"]?["webview"] == "W3")
        #expect(replies.first { $0["id"] == 4 }?["result"]?["item"]?["id"] == "W4")
        #expect(replies.first { $0["id"] == 5 }?["result"]?["webview"] == "W5")
        let stack = replies.first { $0["id"] == 5 }?["result"]?["stack"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        #expect(stack == ["P1", "W1", "W3", "W4", "W5"], "\(String(describing: stack))")
        let outcome = try Replayer.replay(try Trace.parse(r.text))
        guard case .identical = outcome else { Issue.record("diverged: \(outcome)"); return }
    }

    /// `--allow-controller-origin`: a controller from a browser page of another origin is
    /// refused, one of the allowed origin accepted. The connect lines carry the origins and the
    /// header the allowed list, so the replay refuses and accepts the same ones.
    @Test func controllerRefusedForItsOriginReplaysIdentically() throws {
        var configuration = BridgeConfiguration()
        configuration.controllerOrigins = ["http://localhost:5173"]
        var r = Recording(configuration: configuration)
        r.feed(.connected(ClientID(1), isLoopback: true, origin: "http://evil.example"))
        r.send(1, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        r.feed(.connected(ClientID(2), isLoopback: true, origin: "http://localhost:5173"))
        r.send(2, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        r.feed(.connected(ClientID(3), isLoopback: true))
        r.send(3, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://h/app/"}}"#)
        #expect(r.inbox[1]?.first?["error"]?["code"]?.stringValue == "not-allowed")
        #expect(r.inbox[2]?.first?["result"] != nil)
        #expect(r.inbox[3]?.first?["result"] != nil)

        let text = r.text
        #expect(text.contains(#""origin":"http://evil.example""#))
        #expect(text.contains(#""controllerOrigins":["http://localhost:5173"]"#))
        let trace = try Trace.parse(text)
        #expect(trace.header.controllerOrigins == ["http://localhost:5173"])
        let origins = trace.events.compactMap { e -> String?? in
            if case .input(.connected(_, _, let origin), _, _) = e.event { return origin } else { return nil }
        }
        #expect(origins == ["http://evil.example", "http://localhost:5173", nil])
        guard case .identical(let inputs, _) = try Replayer.replay(trace) else {
            Issue.record("diverged: \(try Replayer.replay(trace))"); return
        }
        #expect(inputs == 6)

        // Without the origins (as before they were recorded) the refused controller is
        // accepted on replay: the first difference is its hello's answer.
        let stripped = text.replacingOccurrences(of: #","origin":"http://evil.example""#, with: "")
        guard case .diverged = try Replayer.replay(try Trace.parse(stripped)) else {
            Issue.record("a trace without the refused controller's origin replayed identically"); return
        }
    }

    /// A trace written before connect lines had an origin and the header the limits and the
    /// allowed origins still reads and replays: no origin, the defaults.
    @Test func connectLinesWithoutOriginStillReplay() throws {
        let r = Recording.seed()
        #expect(!r.text.contains(#""origin""#))
        #expect(!r.text.contains("controllerOrigins"))
        let trace = try Trace.parse(r.text)
        #expect(trace.header.maxURLBytes == BridgeConfiguration().maxURLBytes)
        #expect(trace.header.maxSessionBytes == BridgeConfiguration().maxSessionBytes)
        #expect(trace.header.controllerOrigins.isEmpty)
        let old = try TraceEvent.parse(#"{"t":5,"k":"connect","c":4,"loopback":false}"#, number: 2)
        #expect(old == .input(.connected(ClientID(4), isLoopback: false, origin: nil), at: 5, random: []))
        guard case .identical = try Replayer.replay(trace) else { Issue.record("the seed trace diverged"); return }
    }

    /// Limits other than the defaults are in the header, and a replay applies them.
    @Test func headerCarriesTheLimits() throws {
        var configuration = BridgeConfiguration()
        configuration.maxURLBytes = 100
        configuration.maxSessionBytes = 4096
        configuration.maxTabsPerSession = 7
        configuration.keepsTabs = false
        let header = TraceHeader(configuration: configuration)
        let parsed = try TraceHeader.parse(header.line)
        #expect(parsed == header)
        #expect(parsed.bridgeConfiguration.maxURLBytes == 100)
        #expect(parsed.bridgeConfiguration.maxSessionBytes == 4096)
        #expect(parsed.bridgeConfiguration.maxTabsPerSession == 7)
        #expect(parsed.bridgeConfiguration.keepsTabs == false)
        // The defaults are not written (and read back as the defaults).
        let plain = TraceHeader(configuration: BridgeConfiguration())
        #expect(!plain.line.contains("maxTabs") && !plain.line.contains("keepsTabs"))
        #expect(try TraceHeader.parse(plain.line).bridgeConfiguration == BridgeConfiguration())
        #expect(throws: TraceError.self) {
            try TraceHeader.parse(#"{"controllerOrigins":[1],"# + header.line.dropFirst())
        }
        #expect(throws: TraceError.self) {
            try TraceHeader.parse(#"{"keepsTabs":"no","# + plain.line.dropFirst())
        }
    }

    /// One frame edited by hand: the replay names that line.
    @Test func editedFrameIsReportedAtItsLine() throws {
        let r = Recording.seed()
        var lines = r.lines
        let target = try #require(lines.firstIndex { $0.contains(#""k":"out""#) && $0.contains(#"\"reason\":\"rendered\""#) })
        lines[target] = lines[target].replacingFirst(#"\"reason\":\"rendered\""#, with: #"\"reason\":\"timeout\""#)
        let outcome = try Replayer.replay(try Trace.parse(lines.joined(separator: "\n")))
        guard case .diverged(let d) = outcome else { Issue.record("not detected"); return }
        #expect(d.line == target + 1)
        #expect(d.expected == lines[target])
        #expect(d.actual == r.lines[target])
    }

    /// An input edited by hand: the first output that differs is reported.
    @Test func editedInputIsReportedAtTheFirstDifference() throws {
        let r = Recording.seed()
        var lines = r.lines
        let target = try #require(lines.firstIndex { $0.contains("http://h/app/#/a") && $0.contains(#""k":"in""#) })
        lines[target] = lines[target].replacingFirst("#/a", with: "#/z")
        guard case .diverged(let d) = try Replayer.replay(try Trace.parse(lines.joined(separator: "\n"))) else { Issue.record("not detected"); return }
        #expect(d.line > target + 1)
        #expect(d.line < lines.count)
        #expect(d.actual?.contains("#/z") == true)
    }

    @Test func missingAndExtraLinesAreDivergences() throws {
        let r = Recording.seed()
        var lines = r.lines
        let target = try #require(lines.lastIndex { $0.contains(#""k":"out""#) })
        lines.remove(at: target)
        guard case .diverged(let d) = try Replayer.replay(try Trace.parse(lines.joined(separator: "\n"))) else { Issue.record("not detected"); return }
        #expect(d.line == target + 1, "\(d) \(lines.count) \(lines[target - 1]) || \(target < lines.count ? lines[target] : "-")")
        #expect(d.actual == r.lines[target])

        var more = r.lines
        more.insert(#"{"t":1,"k":"out","c":9,"text":"{}"}"#, at: 3)
        guard case .diverged(let d2) = try Replayer.replay(try Trace.parse(more.joined(separator: "\n"))) else { Issue.record("not detected"); return }
        #expect(d2.line == 4)
    }

    @Test func randomWordsMustMatch() throws {
        let r = Recording.seed()
        var lines = r.lines
        let target = try #require(lines.firstIndex { $0.contains(#""rand""#) })
        // Drop the words: the replay draws where the trace recorded none.
        let event = try TraceEvent.parse(lines[target], number: target + 1)
        guard case .input(let input, let t, _) = event else { Issue.record("not an input"); return }
        lines[target] = TraceEvent.input(input, at: t, random: []).line
        guard case .diverged(let d) = try Replayer.replay(try Trace.parse(lines.joined(separator: "\n"))) else { Issue.record("not detected"); return }
        #expect(d.line == target + 1)
        #expect(d.note.contains("random words"))
    }

    @Test func olderFormatSaysSo() {
        let r = Recording.seed()
        var lines = r.lines
        lines[0] = lines[0].replacingFirst(#""format":1"#, with: #""format":0"#)
        #expect(throws: TraceError.self) { try Trace.parse(lines.joined(separator: "\n")) }
        do { _ = try Trace.parse(lines.joined(separator: "\n")) } catch {
            #expect(error.line == 1)
            #expect(error.message.contains("format 0"))
            #expect(error.message.contains("record it again"))
        }
        #expect(throws: TraceError.self) { try Trace.parse("{\"hello\":1}\n") }
        #expect(throws: TraceError.self) { try Trace.parse("") }
    }

    @Test func badLinesNameTheirNumber() {
        let r = Recording.seed()
        var lines = r.lines
        lines[4] = "{\"t\":1}"
        do { _ = try Trace.parse(lines.joined(separator: "\n")); Issue.record("accepted") } catch {
            #expect(error.line == 5)
        }
        lines[4] = "{\"t\":1,\"k\":\"teleport\"}"
        do { _ = try Trace.parse(lines.joined(separator: "\n")); Issue.record("accepted") } catch {
            #expect(error.line == 5)
            #expect(error.message.contains("teleport"))
        }
    }

    @Test func browserLinesRoundTrip() throws {
        let r = HostRequest(client: ClientID(3), id: 9)
        let post = NavigationStop(session: "s-1", webview: .webview(2), url: "http://h/f", method: "POST", body: [0, 1, 255],
                                  headers: [.init("Content-Type", "application/x-www-form-urlencoded")], disposition: .document)
        let results: [HostResult] = [
            .tabOpened(session: "s-1", webview: .webview(1), targetId: "6A1C", browserContextId: "9F2B"),
            .tabFailed(session: "s-1", webview: .webview(2), url: "http://127.0.0.1:9/down", reason: "net::ERR_CONNECTION_REFUSED"),
            .snapshotTaken(session: "s-1", webview: .webview(1), image: [0xFF, 0xD8, 1, 2, 0xFF, 0xD9]),
            .snapshotTaken(session: "s-1", webview: .webview(2), image: nil),
            .navigationStopped(post),
            .navigationStopped(NavigationStop(session: "s-1", webview: .webview(1), url: "tt://x", disposition: .customScheme)),
            .historyTraversed(session: "s-1", webview: .webview(2)),
            .urlChanged(session: "s-1", webview: .webview(1), url: "http://h/#x"),
            .answered(r, .value(["a": [1, 2, ["b": true]]])), .answered(r, .done), .answered(r, .image([1, 2, 3])), .answered(r, .failed("no")),
            .browserCrashed(sessions: ["s-1", "s-2"]),
            .pathConfigurationFetched(session: "s-1", url: "http://o/pc.json", .document(["rules": [["patterns": ["/new$"]]]])),
            .pathConfigurationFetched(session: "s-1", url: "http://o/pc.json", .failed("HTTP 404")),
            .answered(r, .unresponsive("no answer in 15 s")),
            .historyRead(session: "s-1", webview: .webview(1), canGoBack: true),
            .historyRead(session: "s-1", webview: .webview(1), canGoBack: false),
            .shell(.dialogOpened(session: "s-1", webview: .webview(1), Dialog(type: .prompt, message: "Name?", defaultValue: "Ann", url: "http://h/"))),
            .shell(.dialogOpened(session: "s-1", webview: .webview(1), Dialog(type: .alert, message: "hi"))),
            .shell(.dialogClosed(session: "s-1", webview: .webview(1), accepted: true, text: "Bo")),
            .shell(.crashed(session: "s-1", webview: .webview(2), reason: "killed")),
            .shell(.unresponsive(session: "s-1", webview: .webview(1), true)),
            .shell(.unresponsive(session: "s-1", webview: .webview(1), false)),
            .shell(.fileChooser(session: "s-1", webview: .webview(1), multiple: true, accept: "image/*")),
            .shell(.download(session: "s-1", webview: .webview(1), url: "http://h/f.pdf", filename: "f.pdf")),
        ]
        let work: [HostWork] = [
            .openTab(session: "s-1", webview: .webview(1), url: "http://h/", token: "t", post: nil, root: true),
            .openTab(session: "s-1", webview: .webview(2), url: "http://h/f", token: "u", post: post, root: false),
            .closeTab(session: "s-1", webview: .webview(2)), .closeSession(session: "s-1"),
            .keepTab(session: "s-1", webview: .webview(2)),
            .reuseTab(session: "s-1", webview: .webview(3), kept: .webview(2), url: "http://h/new", token: "v"),
            .takeSnapshot(session: "s-1", webview: .webview(1)),
            .showOverlay(session: "s-1", webview: .webview(1), image: [9]), .showOverlay(session: "s-1", webview: .webview(1), image: nil),
            .removeOverlay(session: "s-1", webview: .webview(1)),
            .evaluate(r, session: "s-1", webview: .webview(1), expression: "1+1"),
            .click(r, session: "s-1", webview: .webview(1), selector: "#a"),
            .type(r, session: "s-1", webview: .webview(1), selector: "#a", text: "hi"),
            .screenshot(r, session: "s-1", target: .placeholder(1)),
            .fetchPathConfiguration(session: "s-1", webview: .webview(1), url: "http://o/pc.json"),
            .showTab(session: "s-1", webview: .webview(2)),
            .readHistory(session: "s-1", webview: .webview(1)),
            .goBackInHistory(session: "s-1", webview: .webview(1)),
            .loadURL(session: "s-1", webview: .webview(1), url: "https://localhost/inner"),
            .shell(.answerDialog(session: "s-1", webview: .webview(1), accept: true, text: "Bo")),
            .shell(.answerDialog(session: "s-1", webview: .webview(1), accept: false, text: nil)),
            .shell(.reload(r, session: "s-1", webview: .webview(2), url: "http://h/")),
            .shell(.setFiles(r, session: "s-1", webview: .webview(1), files: ["/tmp/a.png", "/tmp/b b.png"])),
            .shell(.setGeolocation(r, session: "s-1", Geolocation(latitude: 52.5, longitude: 13.4, accuracy: 5))),
        ]
        // Every kind of host result and host work is in the lists above (a new case fails to
        // compile here until it is named, then this test until it is listed).
        func kind(_ h: HostResult) -> String {
            switch h {
            case .tabOpened: "tabOpened"
            case .tabFailed: "tabFailed"
            case .snapshotTaken: "snapshotTaken"
            case .navigationStopped: "navigationStopped"
            case .historyTraversed: "historyTraversed"
            case .urlChanged: "urlChanged"
            case .answered: "answered"
            case .browserCrashed: "browserCrashed"
            case .pathConfigurationFetched: "pathConfigurationFetched"
            case .historyRead: "historyRead"
            case .shell(let e):
                switch e {
                case .dialogOpened: "shell.dialogOpened"
                case .dialogClosed: "shell.dialogClosed"
                case .crashed: "shell.crashed"
                case .unresponsive: "shell.unresponsive"
                case .fileChooser: "shell.fileChooser"
                case .download: "shell.download"
                }
            }
        }
        func kind(_ w: HostWork) -> String {
            switch w {
            case .openTab: "openTab"
            case .closeTab: "closeTab"
            case .keepTab: "keepTab"
            case .reuseTab: "reuseTab"
            case .closeSession: "closeSession"
            case .takeSnapshot: "takeSnapshot"
            case .showOverlay: "showOverlay"
            case .removeOverlay: "removeOverlay"
            case .showTab: "showTab"
            case .evaluate: "evaluate"
            case .click: "click"
            case .type: "type"
            case .screenshot: "screenshot"
            case .fetchPathConfiguration: "fetchPathConfiguration"
            case .readHistory: "readHistory"
            case .goBackInHistory: "goBackInHistory"
            case .loadURL: "loadURL"
            case .shell(let s):
                switch s {
                case .answerDialog: "shell.answerDialog"
                case .reload: "shell.reload"
                case .setFiles: "shell.setFiles"
                case .setGeolocation: "shell.setGeolocation"
                }
            }
        }
        #expect(Set(results.map(kind)).count == 16, "\(Set(results.map(kind)).sorted())")
        #expect(Set(work.map(kind)).count == 21, "\(Set(work.map(kind)).sorted())")
        var events = results.map { TraceEvent.input(.host($0), at: 3, random: []) } + work.map { TraceEvent.output(.host($0), at: 4) }
        events.append(.input(.openBrowserSession(url: "http://h/"), at: 5, random: [7]))
        for e in events {
            // Structured JSON, not a Swift description.
            let v = try JSONParser.parse(e.line)
            #expect(v["what"]?.stringValue != nil || v["k"] == "open")
            #expect(try TraceEvent.parse(e.line, number: 1) == e)
        }
    }

    @Test func invalidUTF8InputSurvivesTheRoundTrip() throws {
        let e = TraceEvent.input(.frame(ClientID(3), text: [0x7B, 0xFF, 0x7D]), at: 9, random: [1, UInt64.max])
        #expect(try TraceEvent.parse(e.line, number: 1) == e)
    }

    @Test func idleSweepsAreNotWritten() {
        var r = Recording()
        let before = r.lines.count
        r.feed(.sweep)
        r.feed(.sweep)
        #expect(r.lines.count == before)
    }

    @Test func idleExpiryIsRecordedAndReplays() throws {
        var r = Recording(configuration: BridgeConfiguration(sessionIdleSeconds: 1))
        r.feed(.connected(ClientID(1), isLoopback: true))
        r.send(1, #"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://h/"}}"#)
        r.feed(.left(ClientID(1)))
        r.now += 2_000_000
        r.feed(.sweep)
        #expect(r.lines.last?.contains(#""stack":null"#) == true)
        #expect(r.lines.contains { $0.contains(#""k":"sweep""#) })
        let outcome = try Replayer.replay(try Trace.parse(r.text))
        guard case .identical(let inputs, _) = outcome else { Issue.record("diverged: \(outcome)"); return }
        #expect(inputs == 4)
    }

    /// Inputs fed before one drain replay.
    @Test func groupedInputsReplay() throws {
        var r = Recording()
        r.feedGroup([.connected(ClientID(7), isLoopback: true),
                     .frame(ClientID(7), text: Array(#"{"id":1,"method":"hello","params":{"protocol":1,"role":"controller"}}"#.utf8)),
                     .connected(ClientID(8), isLoopback: true),
                     .frame(ClientID(8), text: Array(#"{"id":1,"method":"hello","params":{"protocol":1,"role":"page","url":"http://h/"}}"#.utf8))])
        r.send(8, #"{"id":2,"method":"pwa-navigate","params":{}}"#)
        let kinds = r.lines.dropFirst().map { l in (try? TraceEvent.parse(l, number: 0)).map { e -> String in e.isInput ? "i" : "o" } ?? "?" }
        #expect(kinds.prefix(5) == ["i", "i", "i", "i", "o"])
        #expect(r.lines[1].hasSuffix(#","more":true}"#) && !r.lines[4].contains("more"))
        let outcome = try Replayer.replay(try Trace.parse(r.text))
        guard case .identical(let inputs, _) = outcome else { Issue.record("diverged: \(outcome)"); return }
        #expect(inputs == 5)
    }

    @Test func diagramDrawsEveryStackInBoxes() throws {
        let r = Recording.seed()
        let text = StackDiagram.render(try Trace.parse(r.text))
        #expect(text.contains("| P1 | | W1(*P) |"))
        #expect(text.contains("+----+ +--------+"))
        #expect(text.contains("pwa-navigate from #2"))
        #expect(text.contains("P1 W1(*P)~ W2(*C)~"))
        #expect(StackDiagram.boxes("") == ["(empty)"])
        #expect(StackDiagram.boxes("W1(*C)") == ["+--------+", "| W1(*C) |", "+--------+"])
    }
}

extension String {
    func replacingFirst(_ a: String, with b: String) -> String {
        guard let r = range(of: a) else { return self }
        return replacingCharacters(in: r, with: b)
    }
}
