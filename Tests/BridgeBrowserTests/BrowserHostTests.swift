import BridgeBrowser
import BridgeTesting
import BridgeProtocol
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The host's events, awaited as they arrive (no polling).
typealias EventLog = Inbox<BrowserEvent>

/// Processes of a process group that are not zombies (read from /proc).
func liveProcesses(inGroup group: Int32) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { name -> Int32? in
        guard let pid = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After "comm)": state ppid pgrp …
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 2, fields[0] != "Z", Int32(fields[2]) == group else { return nil }
        return pid
    }
}

func dataURL(_ html: String) -> String {
    "data:text/html;base64," + Data(html.utf8).base64EncodedString()
}

/// Chromium must be installed for these tests (scripts/install-deps.sh --test installs it).
final class BrowserHostTests: XCTestCase {
    /// Every host a test made; shut down (awaited) after the test, so no Chromium and no
    /// profile directory outlives it.
    private var hosts: [BrowserHost] = []

    func makeHost(_ log: EventLog, configure: (inout BrowserOptions) -> Void = { _ in }) -> BrowserHost {
        var options = BrowserOptions()
        configure(&options)
        let host = BrowserHost(options: options) { log.append($0) }
        hosts.append(host)
        return host
    }

    override func tearDown() async throws {
        for host in hosts { await host.shutdown() }
        hosts.removeAll()
        try await super.tearDown()
    }

    /// Waits for the tab's page to have loaded: in the page, for its `load` event. A tab starts
    /// on about:blank and `openTab` returns with its page on the way; a wait begun in the
    /// document that goes away ends with it (the browser says the context was destroyed) and is
    /// begun again in the next one.
    func loaded(_ host: BrowserHost, _ s: String, _ w: ItemID) async throws {
        let expression = """
            new Promise(r => { if (location.href !== "about:blank" && document.readyState === "complete") r(true);
              else addEventListener("load", () => r(true), {once: true}); })
            """
        var documentsLeft = 10
        while true {
            do {
                let value = try await host.evaluate(session: s, webview: w, expression: expression)
                XCTAssertEqual(value, .bool(true))
                return
            } catch BrowserError.browser(let message) where documentsLeft > 0 {
                // The document the wait began in went away.
                documentsLeft -= 1
                _ = message
            }
        }
    }

    func navigation(_ log: EventLog, _ w: ItemID) async throws -> NavigationRequest {
        let event = try await log.next { if case .navigationRequested(_, w, _) = $0 { return true }; return false }
        guard case .navigationRequested(_, _, let request) = event else { fatalError() }
        return request
    }

    func testNoChromiumGivesAClearError() async throws {
        let host = makeHost(EventLog()) { $0.chromium = "/nonexistent/chromium" }
        do {
            try await host.createSession("s1")
            XCTFail("expected an error")
        } catch let error as BrowserError {
            XCTAssertEqual(error, .notInstalled("/nonexistent/chromium"))
            XCTAssertTrue(error.description.contains("apt-get install chromium"), error.description)
        }
        let sessions = await host.sessionCount
        XCTAssertEqual(sessions, 0)
    }

    func testATabIsDressedAsTheAppsWebView() async throws {
        let log = EventLog()
        let host = makeHost(log)
        try await host.createSession("s1")
        let page = dataURL("<meta name='viewport' content='width=device-width'><script>document.title = 'seen:' + (window.__injected || 'no')</script><p>hi</p>")
        try await host.openTab(session: "s1", webview: .webview(1), url: page, script: "window.__injected = 'yes';")
        try await loaded(host, "s1", .webview(1))
        let title = try await host.evaluate(session: "s1", webview: .webview(1), expression: "document.title")
        XCTAssertEqual(title, .string("seen:yes"), "the injected script runs before the page's own")
        let ua = try await host.evaluate(session: "s1", webview: .webview(1), expression: "navigator.userAgent")
        XCTAssertTrue(ua.stringValue?.hasSuffix(" Astro App/1.0") == true, "\(ua)")
        XCTAssertFalse(ua.stringValue?.contains("Headless") == true, "\(ua)")
        // A phone's: Chromium's Android form, with Mobile.
        XCTAssertTrue(ua.stringValue?.contains("(Linux; Android 10; K)") == true && ua.stringValue?.contains(" Mobile Safari/") == true, "\(ua)")
        let size = try await host.evaluate(session: "s1", webview: .webview(1), expression: "[innerWidth, innerHeight, navigator.maxTouchPoints > 0]")
        XCTAssertEqual(size, [390, 844, true])
        let promised = try await host.evaluate(session: "s1", webview: .webview(1), expression: "new Promise(r => setTimeout(() => r({a: [1, 'x']}), 10))")
        XCTAssertEqual(promised, ["a": [1, "x"]])
        do {
            _ = try await host.evaluate(session: "s1", webview: .webview(1), expression: "throw new Error('boom')")
            XCTFail("expected an error")
        } catch let error as BrowserError {
            XCTAssertTrue(error.description.contains("boom"), error.description)
        }
        let shot = try await host.screenshot(session: "s1", webview: .webview(1))
        XCTAssertEqual(Array(shot.prefix(2)), [0xFF, 0xD8], "a JPEG")
        XCTAssertEqual(Array(shot.suffix(2)), [0xFF, 0xD9], "a whole JPEG")
    }

    func testNavigationsAreStoppedNatively() async throws {
        let log = EventLog()
        let host = makeHost(log)
        try await host.createSession("s1")
        // Port 9 (discard) is never reached: every request stops before it leaves the browser.
        let page = dataURL("""
            <input id="q" value="">
            <a id="link" href="http://127.0.0.1:9/link">link</a>
            <a id="tt" href="tt://settings">settings</a>
            <form id="f" method="post" action="http://127.0.0.1:9/submit"><input name="name" value="a b&c"><button id="go">go</button></form>
            <a id="hash" href="#top">hash</a>
            <script>window.alive = 'yes';</script>
            """)
        try await host.openTab(session: "s1", webview: .webview(1), url: page, script: nil)
        try await loaded(host, "s1", .webview(1))

        try await host.click(session: "s1", webview: .webview(1), selector: "#link")
        var request = try await navigation(log, .webview(1))
        XCTAssertEqual(request, NavigationRequest(url: "http://127.0.0.1:9/link", method: "GET", headers: request.headers, kind: .document))

        try await host.click(session: "s1", webview: .webview(1), selector: "#go")
        request = try await navigation(log, .webview(1))
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.url, "http://127.0.0.1:9/submit")
        XCTAssertEqual(request.postData.map { String(decoding: $0, as: UTF8.self) }, "name=a+b%26c")
        XCTAssertEqual(request.headers["Content-Type"], "application/x-www-form-urlencoded")

        _ = try await host.evaluate(session: "s1", webview: .webview(1), expression: "location.href = 'http://127.0.0.1:9/assigned'; 1")
        request = try await navigation(log, .webview(1))
        XCTAssertEqual(request.url, "http://127.0.0.1:9/assigned")

        _ = try await host.evaluate(session: "s1", webview: .webview(1), expression: "window.open('http://127.0.0.1:9/popup'); 1")
        request = try await navigation(log, .webview(1))
        XCTAssertEqual(request, NavigationRequest(url: "http://127.0.0.1:9/popup", kind: .windowOpen))

        try await host.click(session: "s1", webview: .webview(1), selector: "#tt")
        request = try await navigation(log, .webview(1))
        XCTAssertEqual(request, NavigationRequest(url: "tt://settings", kind: .customScheme))

        // Same-document changes are the page's own business.
        try await host.click(session: "s1", webview: .webview(1), selector: "#hash")
        _ = try await host.evaluate(session: "s1", webview: .webview(1), expression: "history.pushState({}, '', '#pushed'); 1")
        let hash = try await host.evaluate(session: "s1", webview: .webview(1), expression: "location.hash")
        XCTAssertEqual(hash, "#pushed")
        // The page was never left: its state is intact.
        let alive = try await host.evaluate(session: "s1", webview: .webview(1), expression: "window.alive")
        XCTAssertEqual(alive, "yes")
        let tabs = await host.tabCount
        XCTAssertEqual(tabs, 1, "the popup was closed")
        XCTAssertFalse(log.untaken.contains { if case .navigationRequested = $0 { return true }; return false }, "\(log.untaken)")
    }

    func testAClickWhoseElementThePageReplacedBeforeTheReleaseStillClicks() async throws {
        let log = EventLog()
        let host = makeHost(log)
        try await host.createSession("s1")
        // Armed, the next press makes the page replace the link in a task of its own (as Turbo
        // renders a response over the cached snapshot it showed): when that task runs before the
        // release (a later input), Chromium dispatches no click for the press (its element left
        // the document). Whether it does is Chromium's scheduling: ten rounds.
        let page = dataURL("""
            <a id="link" href="http://127.0.0.1:9/replaced">link</a>
            <script>
            window.armed = false; window.clicks = 0;
            addEventListener("mousedown", () => { if (!window.armed) return; window.armed = false; setTimeout(() => {
              const a = document.getElementById("link"); a.replaceWith(a.cloneNode(true)); }, 0); });
            addEventListener("click", () => { window.clicks++; });
            </script>
            """)
        try await host.openTab(session: "s1", webview: .webview(1), url: page, script: nil)
        try await loaded(host, "s1", .webview(1))
        for round in 1...10 {
            _ = try await host.evaluate(session: "s1", webview: .webview(1),
                                        expression: "window.armed = true; document.getElementById('link').href = 'http://127.0.0.1:9/r\(round)'; true")
            try await host.click(session: "s1", webview: .webview(1), selector: "#link")
            let request = try await navigation(log, .webview(1))
            XCTAssertEqual(request.url, "http://127.0.0.1:9/r\(round)")
        }
        let clicks = try await host.evaluate(session: "s1", webview: .webview(1), expression: "window.clicks")
        XCTAssertEqual(clicks, 10, "one click reached the page per round")
    }

    func testTabsBelowKeepTheirStateAndClosingTheSessionClosesThem() async throws {
        let log = EventLog()
        let host = makeHost(log)
        try await host.createSession("s1")
        try await host.openTab(session: "s1", webview: .webview(1), url: dataURL("<input id='q'>"), script: nil)
        try await loaded(host, "s1", .webview(1))
        try await host.type(session: "s1", webview: .webview(1), selector: "#q", text: "typed here")
        try await host.openTab(session: "s1", webview: .webview(2), url: dataURL("<p>second</p>"), script: nil)
        _ = try await host.screenshot(session: "s1", webview: .webview(2))
        await host.closeTab(session: "s1", webview: .webview(2))
        let value = try await host.evaluate(session: "s1", webview: .webview(1), expression: "document.querySelector('#q').value")
        XCTAssertEqual(value, "typed here")
        var tabs = await host.tabCount
        XCTAssertEqual(tabs, 1)
        await host.closeSession("s1")
        tabs = await host.tabCount
        XCTAssertEqual(tabs, 0)
        do {
            _ = try await host.evaluate(session: "s1", webview: .webview(1), expression: "1")
            XCTFail("expected an error")
        } catch let error as BrowserError {
            XCTAssertEqual(error, .unknownTarget("s1 W1"))
        }
        await host.shutdown()
    }

    func testShutdownLeavesNoChromiumBehindAndACrashIsReported() async throws {
        let log = EventLog()
        let host = makeHost(log)
        try await host.createSession("s1")
        try await host.openTab(session: "s1", webview: .webview(1), url: "about:blank", script: nil)
        let first = await host.chromiumPID
        let pid = try XCTUnwrap(first)
        let firstDirectory = await host.profileDirectory
        let firstProfile = try XCTUnwrap(firstDirectory)
        XCTAssertTrue(FileManager.default.fileExists(atPath: firstProfile))
        kill(pid, SIGKILL)
        let crashed = try await log.next { if case .browserCrashed = $0 { return true }; return false }
        XCTAssertEqual(crashed, .browserCrashed(sessions: ["s1"]))
        let after = await host.tabCount
        XCTAssertEqual(after, 0)
        // The next session starts a new Chromium.
        try await host.createSession("s2")
        let restarted = await host.chromiumPID
        let second = try XCTUnwrap(restarted)
        XCTAssertNotEqual(second, pid)
        try await host.openTab(session: "s2", webview: .webview(1), url: "about:blank", script: nil)
        let secondDirectory = await host.profileDirectory
        let secondProfile = try XCTUnwrap(secondDirectory)
        XCTAssertNotEqual(secondProfile, firstProfile)
        await host.shutdown()
        XCTAssertFalse(FileManager.default.fileExists(atPath: firstProfile), "the crashed Chromium's profile is removed")
        XCTAssertFalse(FileManager.default.fileExists(atPath: secondProfile), "so is the running one's")
        XCTAssertEqual(liveProcesses(inGroup: second), [], "Chromium and every process of its group are gone")
        XCTAssertEqual(liveProcesses(inGroup: pid), [], "so is the crashed one's group")
        let none = await host.chromiumPID
        XCTAssertNil(none)
    }
}

final class UserAgentTests: XCTestCase {
    let chromium = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.7000.1 Safari/537.36"

    func testAPhoneViewportGetsChromiumsMobileUserAgent() {
        XCTAssertEqual(BrowserOptions.userAgent(chromium: chromium, phone: true),
                       "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.7000.1 Mobile Safari/537.36")
        XCTAssertEqual(BrowserOptions.userAgent(chromium: chromium, phone: false),
                       "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.7000.1 Safari/537.36")
        XCTAssertEqual(BrowserOptions.phoneClientHints(userAgent: chromium)["brands"]?[0]?["version"], "156")
    }

    func testPhoneIsNarrowerThan800() {
        var o = BrowserOptions()
        XCTAssertTrue(o.isPhone)
        o.viewportWidth = BrowserOptions.phoneMaxWidth
        XCTAssertTrue(o.isPhone)
        o.viewportWidth = BrowserOptions.phoneMaxWidth + 1
        XCTAssertFalse(o.isPhone)
    }
}
