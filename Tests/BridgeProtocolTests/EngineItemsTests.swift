import Testing
@testable import BridgeProtocol

/// Item ids (their text form is what pages and controllers send), error codes and renderings.
@Suite struct EngineItemsTests: EngineIDs {
    @Test(arguments: [
        ("W1", ItemID.webview(1)), ("P12", .placeholder(12)), ("N3", .native(3)),
        ("W999999999999999", .webview(999_999_999_999_999)),
    ])
    func parsesIds(_ text: String, _ id: ItemID) {
        #expect(ItemID(parsing: text) == id)
        #expect(id.description == text)
    }

    @Test(arguments: ["", "W", "W0", "W01", "w1", "X1", "W-1", "W+1", "W1 ", " W1", "W1a", "P", "WW1", "W1000000000000000", "W١"])
    func rejectsMalformedIds(_ text: String) {
        #expect(ItemID(parsing: text) == nil)
    }

    @Test func idsOrderByKindThenNumber() {
        #expect(W1 < W2 && W2 < W9)
        #expect(W9 < P1 && P4 < N1)
        #expect([P2, W3, N1, W1, P1].sorted() == [W1, W3, P1, P2, N1])
    }

    @Test func errorCodesAreTheProtocols() {
        let cases: [(EngineError, String)] = [
            (.unknownWebview(W1), "unknown-webview"), (.conflict("x"), "conflict"),
            (.limitExceeded("x"), "limit-exceeded"), (.staleTimer(T1), "conflict"),
            (.closed, "unknown-session"), (.invalid("x"), "invalid-params"),
        ]
        for (error, code) in cases {
            #expect(error.code == code)
            #expect(error.description.hasPrefix(code + ": "))
        }
        #expect(EngineError.unknownWebview(W3).message.contains("W3"))
        #expect(EngineError.staleTimer(T2).message.contains("T2"))
    }

    @Test func renderings() {
        var h = EngineFixture.seed.make()
        h.step(.pageDisconnected(W2))
        h.step(.pushNative(url: "tt://x", requester: nil))
        #expect(h.rendering == "P1 W1(*P) W2(*C)~ P2 P3 W3(*P) N1")
        #expect(h.ids == "P1 W1 W2 P2 P3 W3 N1")
        #expect(SessionEngine.render([]) == "")
        #expect(EngineFixture.empty.make().ids == "")
    }
}
