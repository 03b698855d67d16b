import BridgeBrowser
import BridgeTesting
import BridgeProtocol
import Foundation
import Testing

/// The host's side of the shell's duties (BrowserHost+Shell.swift) against a fake Chromium: what
/// it reports of dialogs, file choosers, downloads and crashes, and what it sends to answer them.
@Suite struct ShellFakeTests {
    let chromium = FakeChromium()
    let events = Inbox<BrowserEvent>()

    func makeHost() -> BrowserHost {
        let events = self.events
        return BrowserHost(options: BrowserOptions(), launcher: chromium.launcher) { events.append($0) }
    }

    func rootTab(_ host: BrowserHost) async throws {
        try await host.createSession("s1")
        _ = try await host.openTab(session: "s1", webview: .webview(1), url: "http://app.test/a", script: nil, root: true)
    }

    @Test func aDialogIsReportedAndAnswered() async throws {
        let host = makeHost()
        try await rootTab(host)
        chromium.emit("Page.javascriptDialogOpening", ["url": "http://app.test/a", "message": "Name?", "type": "prompt", "defaultPrompt": "anon",
                                                       "hasBrowserHandler": false], session: "S-T1")
        let opened = try await events.next { if case .shell = $0 { return true }; return false }
        #expect(opened == .shell(.dialogOpened(session: "s1", webview: .webview(1),
                                               Dialog(type: .prompt, message: "Name?", defaultValue: "anon", url: "http://app.test/a"))))
        await host.answerDialog(session: "s1", webview: .webview(1), accept: true, text: "Ada")
        let answer = try await chromium.next("Page.handleJavaScriptDialog")
        #expect(answer.sessionId == "S-T1" && answer.params == ["accept": true, "promptText": "Ada"])
        chromium.emit("Page.javascriptDialogClosed", ["result": true, "userInput": "Ada"], session: "S-T1")
        let closed = try await events.next { if case .shell(.dialogClosed) = $0 { return true }; return false }
        #expect(closed == .shell(.dialogClosed(session: "s1", webview: .webview(1), accepted: true, text: "Ada")))
        await host.shutdown()
    }

    /// A tab that is no web view's (a spare) answers its own dialogs: nothing waits on it.
    @Test func aStrayDialogIsDismissed() async throws {
        let host = makeHost()
        try await rootTab(host)
        chromium.emit("Page.javascriptDialogOpening", ["url": "about:blank", "message": "x", "type": "confirm"], session: "S-T9")
        let answer = try await chromium.next("Page.handleJavaScriptDialog")
        #expect(answer.sessionId == "S-T9" && answer.params == ["accept": false])
        chromium.emit("Page.javascriptDialogOpening", ["url": "about:blank", "message": "", "type": "beforeunload"], session: "S-T9")
        let leave = try await chromium.next("Page.handleJavaScriptDialog") { $0.params["accept"] == true }
        #expect(leave.sessionId == "S-T9")
        await host.shutdown()
    }

    @Test func aFileChooserIsReportedWithItsAcceptAndAnswered() async throws {
        let host = makeHost()
        try await rootTab(host)
        chromium.on("DOM.describeNode") { _ in .result(["node": ["attributes": ["type", "file", "accept", "image/*"]]]) }
        chromium.emit("Page.fileChooserOpened", ["frameId": "T1", "mode": "selectMultiple", "backendNodeId": 42], session: "S-T1")
        let chooser = try await events.next { if case .shell = $0 { return true }; return false }
        #expect(chooser == .shell(.fileChooser(session: "s1", webview: .webview(1), multiple: true, accept: "image/*")))
        try await host.setFiles(session: "s1", webview: .webview(1), files: ["/tmp/a.png"])
        let set = try await chromium.next("DOM.setFileInputFiles")
        #expect(set.params == ["files": ["/tmp/a.png"], "backendNodeId": 42])
        // Answered once: a second answer has no chooser.
        await #expect(throws: BrowserError.self) { try await host.setFiles(session: "s1", webview: .webview(1), files: ["/tmp/b.png"]) }
        await host.shutdown()
    }

    @Test func settingsDressTheContextAndItsTabs() async throws {
        let host = makeHost()
        try await rootTab(host)
        var settings = ShellSettings()
        settings.permissions = ["geolocation": .granted, "camera": .denied]
        settings.geolocation = Geolocation(latitude: 1.5, longitude: 2.5, accuracy: 3)
        await host.applyShellSettings(session: "s1", settings)
        let downloads = try await chromium.next("Browser.setDownloadBehavior")
        #expect(downloads.params["behavior"] == "allowAndName" && downloads.params["browserContextId"] == "C1")
        #expect(downloads.params["eventsEnabled"] == true && downloads.params["downloadPath"]?.stringValue?.hasSuffix("/downloads") == true)
        let camera = try await chromium.next("Browser.setPermission") { $0.params["permission"]?["name"] == "camera" }
        #expect(camera.params == ["permission": ["name": "camera"], "setting": "denied", "browserContextId": "C1"])
        let geo = try await chromium.next("Emulation.setGeolocationOverride")
        #expect(geo.sessionId == "S-T1" && geo.params == ["latitude": 1.5, "longitude": 2.5, "accuracy": 3.0])
        // A later tab of the session gets the position too.
        _ = try await host.openTab(session: "s1", webview: .webview(2), url: "http://app.test/b", script: nil)
        let second = try await chromium.next("Emulation.setGeolocationOverride") { $0.sessionId == "S-T2" }
        #expect(second.params["latitude"] == 1.5)
        // A download in the tab is reported.
        chromium.emit("Browser.downloadWillBegin", ["frameId": "T2", "guid": "g", "url": "http://app.test/r.pdf", "suggestedFilename": "r.pdf"])
        let download = try await events.next { if case .shell(.download) = $0 { return true }; return false }
        #expect(download == .shell(.download(session: "s1", webview: .webview(2), url: "http://app.test/r.pdf", filename: "r.pdf")))
        // And cancelled at once: nothing is kept.
        let cancel = try await chromium.next("Browser.cancelDownload")
        #expect(cancel.params == ["guid": "g", "browserContextId": "C1"])
        await host.shutdown()
    }

    /// An own load whose request a newer navigation of the tab cancelled (Chromium: "Invalid
    /// InterceptionId") is no failure: the tab's next document request is its own load.
    @Test func anOwnLoadSupersededIsNotAFailure() async throws {
        let host = makeHost()
        try await rootTab(host)
        chromium.on("Fetch.continueRequest") { m in m.params["requestId"] == "r1" ? .error("Invalid InterceptionId.") : .result([:]) }
        try await host.load(session: "s1", webview: .webview(1), url: "http://app.test/b")
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T1", "request": ["url": "http://app.test/b", "method": "GET"]], session: "S-T1")
        _ = try await chromium.next("Fetch.continueRequest") { $0.params["requestId"] == "r1" }
        chromium.emit("Fetch.requestPaused", ["requestId": "r2", "frameId": "T1", "request": ["url": "http://app.test/b", "method": "GET"]], session: "S-T1")
        // Let through, not aborted as the page's own navigation would be.
        _ = try await chromium.next("Fetch.continueRequest") { $0.params["requestId"] == "r2" }
        #expect(!chromium.methods(session: "S-T1").contains("Fetch.failRequest"))
        #expect(events.all.allSatisfy { if case .loadFailed = $0 { return false }; return true })
        await host.shutdown()
    }

    /// What went wrong is heard: a load the browser would not let through fails its web view
    /// (it stayed paused, blank, for good), and a POST whose body could not be read is said.
    @Test func aLoadThatCannotGoOnFailsAndALostBodyIsSaid() async throws {
        let host = makeHost()
        try await rootTab(host)
        chromium.on("Fetch.continueRequest") { _ in .error("Internal error.") }
        chromium.emit("Fetch.requestPaused", ["requestId": "r1", "frameId": "T1", "request": ["url": "http://app.test/a", "method": "GET"]], session: "S-T1")
        let failed = try await events.next { if case .loadFailed = $0 { return true }; return false }
        guard case .loadFailed(let session, let webview, let url, let reason) = failed else { return }
        #expect(session == "s1" && webview == .webview(1) && url == "http://app.test/a")
        #expect(reason.hasPrefix("the browser did not let the page's load through"), "\(reason)")

        chromium.on("Fetch.getRequestPostData") { _ in .error("No post data available for the request") }
        chromium.emit("Fetch.requestPaused", ["requestId": "r2", "frameId": "T1",
                                              "request": ["url": "http://app.test/save", "method": "POST", "hasPostData": true]], session: "S-T1")
        let warning = try await events.next { if case .warning = $0 { return true }; return false }
        #expect(warning == .warning("s1 W1: the body of the POST to http://app.test/save could not be read (No post data available for the request); its web view sends it without one"))
        let stopped = try await events.next { if case .navigationRequested = $0 { return true }; return false }
        guard case .navigationRequested(_, _, let request) = stopped else { return }
        #expect(request.url == "http://app.test/save" && request.method == "POST" && request.postData == nil)
        await host.shutdown()
    }
}
