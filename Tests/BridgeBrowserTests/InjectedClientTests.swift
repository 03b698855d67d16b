import BridgeBrowser
import BridgeProtocol
import Foundation
import Testing

/// A tab's injected script: inject.js with bridge.js in it and the tab's configuration, made
/// from pieces cut once (`InjectedClient.Template`), the same text as the markers replaced.
@Suite struct InjectedClientTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The markers replaced in the template, configuration first (what each tab's script was).
    static func replaced(_ template: String, bridge: String, config: String) -> String {
        template.replacingOccurrences(of: "/*@CONFIG@*/ null", with: config).replacingOccurrences(of: "/*@BRIDGE_JS@*/", with: bridge)
    }

    /// The session's configuration as the prelude writes it: the claim is the prelude's argument.
    static func configured(astro: Bool) -> String {
        let value: JSONValue = ["url": "ws://127.0.0.1:8080/bridge", "moduleUrl": "http://127.0.0.1:8080/bridge.js", "astro": .bool(astro)]
        return "Object.assign(" + value.jsonString + ", { claim: __bridgedClaim })"
    }

    @Test func theRealClientIsTheTemplateWithItsMarkersReplacedInsideTheSessionsPart() throws {
        let template = try String(contentsOf: Self.repo.appendingPathComponent("Sources/BridgeServer/Assets/inject.js"), encoding: .utf8)
        let bridge = InjectedClient.classicBridge(try String(contentsOf: Self.repo.appendingPathComponent("js-client/bridge.js"), encoding: .utf8))
        let made = InjectedClient.Template(template: template, classicBridge: bridge)
        var preludes: Set<String> = []
        for (webview, token, astro) in [(ItemID.webview(1), "t1", true), (.webview(12), "t\"2", false), (.webview(13), "t3", false)] {
            let script = made.script(bridgeURL: "ws://127.0.0.1:8080/bridge", moduleURL: "http://127.0.0.1:8080/bridge.js",
                                     session: "s-1", webview: webview, token: token, astro: astro, hotwire: astro ? nil : "HOTWIRE()")
            preludes.insert(script.prelude)
            // The session's part: the client, configured, as a function of its claim; the tab's
            // part calls it with the claim (escaped as JSON), after taking it off the window.
            #expect(script.prelude.contains(Self.replaced(template, bridge: bridge, config: Self.configured(astro: astro))))
            #expect(script.prelude.hasPrefix("(function () {") && script.prelude.contains(#"Object.defineProperty(window, "__bridgedStart""#))
            #expect(script.prelude.contains("HOTWIRE()") == !astro)
            #expect(!script.prelude.contains(token) && !script.prelude.contains(webview.description + "\""))
            let claim: JSONValue = ["session": "s-1", "webview": .string(webview.description), "token": .string(token)]
            #expect(script.start == #"(function () { var start = window.__bridgedStart; if (typeof start !== "function") return; delete window.__bridgedStart; start("#
                + claim.jsonString + "); })();")
            #expect(script.start.contains(#""token":"t\"2""#) == (token == "t\"2"))
            #expect(script.whole == script.prelude + "\n" + script.start)
            #expect(!script.whole.contains("/*@CONFIG@*/") && !script.whole.contains("/*@BRIDGE_JS@*/"))
        }
        // One session's part for the tabs of the same profile, whatever their web view.
        #expect(preludes.count == 2)
    }

    /// Markers inside bridge.js's text stay as they are (the configuration goes where the
    /// template says, once per marker of the template); a template without a configuration
    /// marker gets none.
    @Test func markersOnlyInTheTemplateAreReplaced() {
        let bridge = "const a = '/*@CONFIG@*/ null';"
        let template = "A /*@CONFIG@*/ null B /*@BRIDGE_JS@*/ C /*@CONFIG@*/ null"
        let script = InjectedClient.Template(template: template, classicBridge: bridge)
            .script(bridgeURL: "ws://127.0.0.1:8080/bridge", moduleURL: "http://127.0.0.1:8080/bridge.js", session: "s-1", webview: .webview(3), token: "x")
        #expect(script.prelude.contains(Self.replaced(template, bridge: bridge, config: Self.configured(astro: true))))
        #expect(InjectedClient.Template(template: "no marker /*@BRIDGE_JS@*/", classicBridge: "B")
            .prelude(bridgeURL: "u", moduleURL: "m").contains("\nno marker B\n"))
    }
}
