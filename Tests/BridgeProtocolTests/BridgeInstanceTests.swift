import XCTest
@testable import BridgeProtocol

/// `--instance NAME`: session ids `s-NAME-RANDOM`, and `unknown-session` naming the owner of an
/// id that belongs to another daemon of a farm.
final class BridgeInstanceTests: XCTestCase {
    func testInstanceNamesAreOneToSixteenLowercaseLettersOrDigits() {
        for good in ["a", "z9", "0", String(repeating: "x", count: 16), "abc123"] {
            XCTAssertTrue(BridgeConfiguration.isValidInstance(good), good)
        }
        for bad in ["", String(repeating: "x", count: 17), "A", "a-b", "a_b", "a b", "é", "a.b"] {
            XCTAssertFalse(BridgeConfiguration.isValidInstance(bad), bad)
        }
    }

    func testInstanceOfASessionID() {
        XCTAssertEqual(Bridge<SeededRandom>.instance(ofSession: "s-a-0123456789abcdef"), "a")
        XCTAssertEqual(Bridge<SeededRandom>.instance(ofSession: "s-farm01-ff"), "farm01")
        XCTAssertNil(Bridge<SeededRandom>.instance(ofSession: "s-0123456789abcdef"))
        XCTAssertNil(Bridge<SeededRandom>.instance(ofSession: "s-A-01"))
        XCTAssertNil(Bridge<SeededRandom>.instance(ofSession: "s-a-"))
        XCTAssertNil(Bridge<SeededRandom>.instance(ofSession: "x-a-01"))
        XCTAssertNil(Bridge<SeededRandom>.instance(ofSession: "s-a-b-01"))
    }

    func testEverySessionIDCarriesTheInstance() throws {
        var config = BridgeConfiguration()
        config.instance = "b7"
        var h = BridgeHarness(configuration: config)
        let page = h.connect()
        let hello = h.request(page, "hello", ["protocol": 1, "role": "page", "url": "http://127.0.0.1/app/"])
        let sid = try XCTUnwrap(hello["result"]?["session"]?.stringValue)
        XCTAssertTrue(sid.hasPrefix("s-b7-"), sid)
        XCTAssertEqual(sid.utf8.count, "s-b7-".utf8.count + 16)
        let ctl = h.connect()
        let ctlHello = h.request(ctl, "hello", ["protocol": 1, "role": "controller"])
        XCTAssertEqual(ctlHello["result"]?["instance"], "b7")
        let created = h.request(ctl, "session.create", [:])
        XCTAssertTrue(created["result"]?["session"]?.stringValue?.hasPrefix("s-b7-") == true)
    }

    func testWithoutAnInstanceIdsAreAsBefore() throws {
        var h = BridgeHarness()
        let page = h.connect()
        let hello = h.request(page, "hello", ["protocol": 1, "role": "page"])
        let sid = try XCTUnwrap(hello["result"]?["session"]?.stringValue)
        XCTAssertEqual(sid.utf8.count, 18)
        XCTAssertNil(Bridge<SeededRandom>.instance(ofSession: sid))
        let ctl = h.connect()
        XCTAssertNil(h.request(ctl, "hello", ["protocol": 1, "role": "controller"])["result"]?["instance"])
    }

    func testAClaimForAnotherInstancesSessionNamesThatInstance() {
        var config = BridgeConfiguration()
        config.instance = "b"
        var h = BridgeHarness(configuration: config)
        let page = h.connect()
        let reply = h.request(page, "hello", ["protocol": 1, "role": "page", "session": "s-a-0123456789abcdef",
                                               "webview": "W1", "token": "t"])
        XCTAssertEqual(reply["error"]?["code"], "unknown-session")
        let message = reply["error"]?["message"]?.stringValue ?? ""
        XCTAssertTrue(message.contains("instance \"a\""), message)
        XCTAssertTrue(message.contains("instance \"b\""), message)
        XCTAssertTrue(message.contains("/bridge?session=s-a-0123456789abcdef"), message)
        XCTAssertEqual(h.bridge.sessionCount, 0, "a refused claim creates nothing")

        let ctl = h.connect()
        _ = h.request(ctl, "hello", ["protocol": 1, "role": "controller"])
        for method in ["session.get", "navigation.back", "session.close"] {
            let r = h.request(ctl, method, ["session": "s-c-00"])
            XCTAssertEqual(r["error"]?["code"], "unknown-session", method)
            XCTAssertTrue(r["error"]?["message"]?.stringValue?.contains("instance \"c\"") == true, method)
        }
        // An id of this instance, or one without an instance, gets the plain message.
        for sid in ["s-b-00", "s-0123456789abcdef"] {
            let r = h.request(ctl, "session.get", ["session": .string(sid)])
            XCTAssertEqual(r["error"]?["message"], .string("no session \"\(sid)\""))
        }
    }

    func testADaemonWithoutAnInstanceStillNamesTheOwner() {
        var h = BridgeHarness()
        let page = h.connect()
        let reply = h.request(page, "hello", ["protocol": 1, "role": "page", "session": "s-a-01", "webview": "W1", "token": "t"])
        let message = reply["error"]?["message"]?.stringValue ?? ""
        XCTAssertTrue(message.contains("instance \"a\"") && message.contains("without --instance"), message)
    }
}
