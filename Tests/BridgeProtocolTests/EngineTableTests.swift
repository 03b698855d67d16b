import Testing
@testable import BridgeProtocol

/// Every input against the states where it means something different: the reply (or the one
/// failure), the stack afterwards and the foreground afterwards. Failures must leave the engine
/// `==` to what it was. The effects of the interesting rows are checked in full in the other
/// engine suites.
@Suite struct EngineTableTests: EngineIDs {
    enum Outcome: Sendable {
        case reply(SessionReply)
        case failure(EngineErrorMatch)
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let fixture: EngineFixture
        let input: SessionInput
        let outcome: Outcome
        /// `SessionEngine.rendering` afterwards (successes only).
        let after: String
        /// `foregroundSummary` afterwards (successes only).
        let foreground: String?
        let line: Int

        var testDescription: String { "line \(line): \(fixture) + \(input)" }
    }

    static func ok(
        _ fixture: EngineFixture, _ input: SessionInput, _ reply: SessionReply, _ after: String,
        fg: String? = nil, line: Int = #line
    ) -> Row {
        Row(fixture: fixture, input: input, outcome: .reply(reply), after: after, foreground: fg, line: line)
    }

    static func fail(_ fixture: EngineFixture, _ input: SessionInput, _ error: EngineErrorMatch, line: Int = #line) -> Row {
        Row(fixture: fixture, input: input, outcome: .failure(error), after: "", foreground: nil, line: line)
    }

    static let nav = "http://app/n"

    static let rows: [Row] = [
        // createRoot
        ok(.empty, .createRoot(url: "http://app/", token: "t1", connected: true), .created(webview: W1), "W1(*C)"),
        ok(.empty, .createRoot(url: "http://app/", token: "t1", connected: false), .created(webview: W1), "W1(*C)~"),
        fail(.root, .createRoot(url: "http://app/", token: "t9", connected: true), .conflict),
        fail(.afterPop, .createRoot(url: "http://app/", token: "t9", connected: true), .conflict),
        fail(.closed, .createRoot(url: "http://app/", token: "t9", connected: true), .closed),

        // pageConnected
        ok(.rootNoPage, .pageConnected(W1, url: "http://app/x"), .connected(webview: W1), "W1(*C)"),
        ok(.twoViews, .pageConnected(W1, url: nil), .connected(webview: W1), "W1(*C) W2(*C)"),
        ok(.pwaUp, .pageConnected(W1, url: nil), .connected(webview: W1), "P1 W1(*P)", fg: "W1 blank T1"),
        fail(.empty, .pageConnected(W1, url: nil), .unknownWebview(W1)),
        fail(.root, .pageConnected(W9, url: nil), .unknownWebview(W9)),
        fail(.pwaDone, .pageConnected(P1, url: nil), .unknownWebview(P1)),
        fail(.native, .pageConnected(N1, url: nil), .unknownWebview(N1)),
        fail(.afterPop, .pageConnected(W2, url: nil), .unknownWebview(W2)),
        fail(.closed, .pageConnected(W1, url: nil), .closed),

        // pageDisconnected
        ok(.root, .pageDisconnected(W1), .disconnected, "W1(*C)~"),
        ok(.pwaUp, .pageDisconnected(W1), .disconnected, "P1 W1(*P)~"),
        ok(.seed, .pageDisconnected(W1), .disconnected, "P1 W1(*P)~ W2(*C) P2 P3 W3(*P)"),
        ok(.seedSwapUp, .pageDisconnected(W2), .disconnected, "P1 W1(*P) W2(*C)~ P2 W3(*P)", fg: "W3 placeholder T4"),
        fail(.root, .pageDisconnected(W9), .unknownWebview(W9)),
        fail(.pwaDone, .pageDisconnected(P1), .unknownWebview(P1)),
        fail(.afterPop, .pageDisconnected(W2), .unknownWebview(W2)),
        fail(.closed, .pageDisconnected(W1), .closed),

        // pwaNavigate
        ok(.root, .pwaNavigate(from: W1, url: "http://app/a", title: "A"), .pwaNavigate(placeholder: P1), "P1 W1(*P)", fg: "W1 blank T1"),
        ok(.pwaUp, .pwaNavigate(from: W1, url: "http://app/b", title: nil), .pwaNavigate(placeholder: P2), "P1 P2 W1(*P)", fg: "W1 blank T2"),
        ok(.pwaTimedOut, .pwaNavigate(from: W1, url: nil, title: nil), .pwaNavigate(placeholder: P2), "P1 P2 W1(*P)", fg: "W1 blank T2"),
        ok(.seedSwapUp, .pwaNavigate(from: W3, url: "http://app/e", title: nil), .pwaNavigate(placeholder: P4),
           "P1 W1(*P) W2(*C) P2 P4 W3(*P)", fg: "W3 blank T5"),
        fail(.twoViews, .pwaNavigate(from: W1, url: "http://app/a", title: nil), .conflict),
        fail(.native, .pwaNavigate(from: W1, url: "http://app/a", title: nil), .conflict),
        fail(.seed, .pwaNavigate(from: W2, url: "http://app/a", title: nil), .conflict),
        fail(.root, .pwaNavigate(from: W9, url: nil, title: nil), .unknownWebview(W9)),
        fail(.pwaDone, .pwaNavigate(from: P1, url: nil, title: nil), .unknownWebview(P1)),
        fail(.native, .pwaNavigate(from: N1, url: nil, title: nil), .unknownWebview(N1)),
        fail(.afterPop, .pwaNavigate(from: W2, url: nil, title: nil), .unknownWebview(W2)),
        fail(.full, .pwaNavigate(from: W1, url: "http://app/c", title: nil), .limitExceeded),
        fail(.closed, .pwaNavigate(from: W1, url: nil, title: nil), .closed),

        // pwaRendered
        ok(.pwaUp, .pwaRendered(from: W1), .pwaRendered(removed: true, latencyMs: 10), "P1 W1(*P)"),
        ok(.pwaDone, .pwaRendered(from: W1), .pwaRendered(removed: false, latencyMs: nil), "P1 W1(*P)"),
        ok(.pwaTimedOut, .pwaRendered(from: W1), .pwaRendered(removed: false, latencyMs: nil), "P1 W1(*P)"),
        ok(.root, .pwaRendered(from: W1), .pwaRendered(removed: false, latencyMs: nil), "W1(*C)"),
        ok(.seed, .pwaRendered(from: W1), .pwaRendered(removed: false, latencyMs: nil), "P1 W1(*P) W2(*C) P2 P3 W3(*P)"),
        ok(.seedSwapUp, .pwaRendered(from: W2), .pwaRendered(removed: false, latencyMs: nil),
           "P1 W1(*P) W2(*C) P2 W3(*P)", fg: "W3 placeholder T4"),
        fail(.root, .pwaRendered(from: W9), .unknownWebview(W9)),
        fail(.pwaDone, .pwaRendered(from: P1), .unknownWebview(P1)),
        fail(.afterPop, .pwaRendered(from: W2), .unknownWebview(W2)),
        fail(.closed, .pwaRendered(from: W1), .closed),

        // pwaNavigated: informational, any web view on the stack, the mode stays.
        ok(.root, .pwaNavigated(from: W1, url: "http://app/#x"), .pwaNavigated, "W1(*C)"),
        ok(.seed, .pwaNavigated(from: W2, url: "http://app/y"), .pwaNavigated, "P1 W1(*P) W2(*C) P2 P3 W3(*P)"),
        fail(.root, .pwaNavigated(from: W9, url: "http://app/"), .unknownWebview(W9)),
        fail(.native, .pwaNavigated(from: N1, url: "http://app/"), .unknownWebview(N1)),
        fail(.closed, .pwaNavigated(from: W1, url: "http://app/"), .closed),

        // navigateToUrl
        ok(.root, .navigateToUrl(url: nav, token: "tn", requester: W1, singleTab: false), .navigateToUrl(webview: W2, token: "tn"), "W1(*C) W2(*C)~"),
        ok(.root, .navigateToUrl(url: nav, token: "tn", requester: W1, singleTab: true), .navigateToUrl(webview: W2, token: "tn"), "W1(*C)~ W2(*C)~"),
        ok(.root, .navigateToUrl(url: nav, token: "tn", requester: nil, singleTab: false), .navigateToUrl(webview: W2, token: "tn"), "W1(*C) W2(*C)~"),
        ok(.root, .navigateToUrl(url: nav, token: "tn", requester: nil, singleTab: true), .navigateToUrl(webview: W2, token: "tn"), "W1(*C)~ W2(*C)~"),
        ok(.rootNoPage, .navigateToUrl(url: nav, token: "tn", requester: nil, singleTab: true), .navigateToUrl(webview: W2, token: "tn"), "W1(*C)~ W2(*C)~"),
        ok(.pwaUp, .navigateToUrl(url: nav, token: "tn", requester: W1, singleTab: false), .navigateToUrl(webview: W2, token: "tn"), "P1 W1(*P) W2(*C)~"),
        ok(.native, .navigateToUrl(url: nav, token: "tn", requester: nil, singleTab: false), .navigateToUrl(webview: W2, token: "tn"), "W1(*C) N1 W2(*C)~"),
        ok(.seed, .navigateToUrl(url: nav, token: "tn", requester: W3, singleTab: false), .navigateToUrl(webview: W4, token: "tn"),
           "P1 W1(*P) W2(*C) P2 P3 W3(*P) W4(*C)~"),
        fail(.twoViews, .navigateToUrl(url: nav, token: "tn", requester: W1, singleTab: false), .conflict),
        fail(.twoViews, .navigateToUrl(url: nav, token: "tn", requester: W1, singleTab: true), .conflict),
        fail(.native, .navigateToUrl(url: nav, token: "tn", requester: W1, singleTab: false), .conflict),
        fail(.root, .navigateToUrl(url: nav, token: "tn", requester: W9, singleTab: false), .unknownWebview(W9)),
        fail(.pwaDone, .navigateToUrl(url: nav, token: "tn", requester: P1, singleTab: false), .unknownWebview(P1)),
        fail(.afterPop, .navigateToUrl(url: nav, token: "tn", requester: W2, singleTab: true), .unknownWebview(W2)),
        fail(.full, .navigateToUrl(url: nav, token: "tn", requester: nil, singleTab: false), .limitExceeded),
        fail(.full, .navigateToUrl(url: nav, token: "tn", requester: W1, singleTab: true), .limitExceeded),
        fail(.closed, .navigateToUrl(url: nav, token: "tn", requester: nil, singleTab: false), .closed),

        // pushNative
        ok(.root, .pushNative(url: "tt://a", requester: W1), .pushNative(screen: N1), "W1(*C) N1"),
        ok(.pwaUp, .pushNative(url: "tt://a", requester: nil), .pushNative(screen: N1), "P1 W1(*P) N1"),
        ok(.native, .pushNative(url: "tt://b", requester: nil), .pushNative(screen: N2), "W1(*C) N1 N2"),
        fail(.twoViews, .pushNative(url: "tt://a", requester: W1), .conflict),
        fail(.native, .pushNative(url: "tt://a", requester: W1), .conflict),
        fail(.root, .pushNative(url: "tt://a", requester: W9), .unknownWebview(W9)),
        fail(.native, .pushNative(url: "tt://a", requester: N1), .unknownWebview(N1)),
        fail(.full, .pushNative(url: "tt://a", requester: nil), .limitExceeded),
        fail(.closed, .pushNative(url: "tt://a", requester: nil), .closed),

        // back
        ok(.root, .back(requester: nil, singleTab: false), .back(action: .none, removed: []), "W1(*C)"),
        ok(.root, .back(requester: W1, singleTab: true), .back(action: .none, removed: []), "W1(*C)"),
        ok(.pwaDone, .back(requester: nil, singleTab: false), .back(action: .swap, removed: [P1]), "W1(*P)", fg: "W1 placeholder T2"),
        ok(.pwaUp, .back(requester: W1, singleTab: false), .back(action: .swap, removed: [P1]), "W1(*P)", fg: "W1 placeholder T2"),
        ok(.twoViews, .back(requester: nil, singleTab: false), .back(action: .pop, removed: [W2]), "W1(*C)"),
        ok(.twoViews, .back(requester: W2, singleTab: false), .back(action: .pop, removed: [W2]), "W1(*C)"),
        ok(.native, .back(requester: nil, singleTab: false), .back(action: .pop, removed: [N1]), "W1(*C)"),
        ok(.seed, .back(requester: W3, singleTab: false), .back(action: .swap, removed: [P3]), "P1 W1(*P) W2(*C) P2 W3(*P)", fg: "W3 placeholder T4"),
        ok(.seedSwapUp, .back(requester: nil, singleTab: false), .back(action: .swap, removed: [P2]), "P1 W1(*P) W2(*C) W3(*P)", fg: "W3 placeholder T5"),
        ok(.full, .back(requester: nil, singleTab: false), .back(action: .swap, removed: [P2]), "P1 W1(*P)", fg: "W1 placeholder T3"),
        fail(.twoViews, .back(requester: W1, singleTab: false), .conflict),
        fail(.native, .back(requester: W1, singleTab: false), .conflict),
        fail(.seed, .back(requester: W2, singleTab: false), .conflict),
        fail(.root, .back(requester: W9, singleTab: false), .unknownWebview(W9)),
        fail(.afterPop, .back(requester: W2, singleTab: true), .unknownWebview(W2)),
        fail(.native, .back(requester: N1, singleTab: false), .unknownWebview(N1)),
        fail(.closed, .back(requester: nil, singleTab: false), .closed),

        // popToRoot
        ok(.root, .popToRoot(singleTab: false), .popToRoot(removed: []), "W1(*C)"),
        ok(.pwaDone, .popToRoot(singleTab: false), .popToRoot(removed: []), "P1 W1(*P)"),
        ok(.pwaUp, .popToRoot(singleTab: false), .popToRoot(removed: []), "P1 W1(*P)", fg: "W1 blank T1"),
        ok(.native, .popToRoot(singleTab: false), .popToRoot(removed: [N1]), "W1(*C)"),
        ok(.seed, .popToRoot(singleTab: false), .popToRoot(removed: [W3, P3, P2, W2]), "P1 W1(*P)"),
        ok(.seedSwapUp, .popToRoot(singleTab: true), .popToRoot(removed: [W3, P2, W2]), "P1 W1(*P)"),
        fail(.closed, .popToRoot(singleTab: false), .closed),

        // timerFired
        ok(.pwaUp, .timerFired(T1), .timerHandled, "P1 W1(*P)"),
        ok(.seedSwapUp, .timerFired(T4), .timerHandled, "P1 W1(*P) W2(*C) P2 W3(*P)"),
        fail(.pwaUp, .timerFired(T2), .staleTimer(T2)),
        fail(.pwaDone, .timerFired(T1), .staleTimer(T1)),
        fail(.pwaTimedOut, .timerFired(T1), .staleTimer(T1)),
        fail(.root, .timerFired(T1), .staleTimer(T1)),
        fail(.seedSwapUp, .timerFired(T3), .staleTimer(T3)),
        fail(.closed, .timerFired(T1), .closed),

        // close
        ok(.empty, .close(reason: "closed"), .closed, ""),
        ok(.root, .close(reason: "closed"), .closed, "W1(*C)~"),
        ok(.pwaUp, .close(reason: "idle"), .closed, "P1 W1(*P)~"),
        ok(.seed, .close(reason: "closed"), .closed, "P1 W1(*P)~ W2(*C)~ P2 P3 W3(*P)~"),
        fail(.closed, .close(reason: "closed"), .closed),
    ]

    @Test(arguments: rows)
    func row(_ row: Row) {
        var h = row.fixture.make()
        let before = h.engine
        let effects = h.step(row.input)
        let location = SourceLocation(fileID: #fileID, filePath: #filePath, line: row.line, column: 9)
        switch row.outcome {
        case .reply(let reply):
            #expect(effects.first == .reply(reply), "effects: \(effects)", sourceLocation: location)
            let replies = effects.filter { if case .reply = $0 { true } else { false } }
            let failures = effects.filter { if case .failure = $0 { true } else { false } }
            #expect(replies.count == 1 && failures.isEmpty, "effects: \(effects)", sourceLocation: location)
            #expect(h.rendering == row.after, sourceLocation: location)
            #expect(EngineCheck.foreground(h.engine) == row.foreground, sourceLocation: location)
            #expect(EngineCheck.invariantViolations(h.engine) == [], sourceLocation: location)
            if case .close = row.input {
                #expect(h.engine.isClosed, sourceLocation: location)
            } else {
                #expect(!h.engine.isClosed, sourceLocation: location)
            }
        case .failure(let match):
            #expect(h.engine == before, "a failed input changed the engine", sourceLocation: location)
            #expect(effects.count == 1, "effects: \(effects)", sourceLocation: location)
            if case .failure(let error)? = effects.first {
                #expect(match.matches(error), "got \(error)", sourceLocation: location)
                #expect(error.code == match.code, sourceLocation: location)
            } else {
                Issue.record("no failure: \(effects)", sourceLocation: location)
            }
        }
    }

    /// The fixtures themselves are what their names say.
    @Test(arguments: EngineFixture.allCases)
    func fixture(_ fixture: EngineFixture) {
        let h = fixture.make()
        let expected: (String, String?) =
            switch fixture {
            case .empty: ("", nil)
            case .root, .afterPop: ("W1(*C)", nil)
            case .rootNoPage: ("W1(*C)~", nil)
            case .pwaUp: ("P1 W1(*P)", "W1 blank T1")
            case .pwaDone, .pwaTimedOut: ("P1 W1(*P)", nil)
            case .twoViews: ("W1(*C) W2(*C)", nil)
            case .native: ("W1(*C) N1", nil)
            case .seed: ("P1 W1(*P) W2(*C) P2 P3 W3(*P)", nil)
            case .seedSwapUp: ("P1 W1(*P) W2(*C) P2 W3(*P)", "W3 placeholder T4")
            case .full: ("P1 P2 W1(*P)", nil)
            case .closed: ("W1(*C)~", nil)
            }
        #expect(h.rendering == expected.0)
        #expect(EngineCheck.foreground(h.engine) == expected.1)
        #expect(h.engine.isClosed == (fixture == .closed))
        #expect(EngineCheck.invariantViolations(h.engine) == [])
    }
}
