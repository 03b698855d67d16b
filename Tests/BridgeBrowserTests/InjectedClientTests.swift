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

    static func config(_ webview: ItemID, _ token: String, astro: Bool) -> String {
        let value: JSONValue = [
            "url": "ws://127.0.0.1:8080/bridge", "moduleUrl": "http://127.0.0.1:8080/bridge.js",
            "claim": ["session": "s-1", "webview": .string(webview.description), "token": .string(token)],
            "astro": .bool(astro),
        ]
        return value.jsonString
    }

    @Test func theRealClientIsTheTemplateWithItsMarkersReplaced() throws {
        let template = try String(contentsOf: Self.repo.appendingPathComponent("Sources/BridgeServer/Assets/inject.js"), encoding: .utf8)
        let bridge = InjectedClient.classicBridge(try String(contentsOf: Self.repo.appendingPathComponent("js-client/bridge.js"), encoding: .utf8))
        let made = InjectedClient.Template(template: template, classicBridge: bridge)
        for (webview, token, astro) in [(ItemID.webview(1), "t1", true), (.webview(12), "t\"2", false)] {
            let script = made.script(bridgeURL: "ws://127.0.0.1:8080/bridge", moduleURL: "http://127.0.0.1:8080/bridge.js",
                                     session: "s-1", webview: webview, token: token, astro: astro)
            #expect(script == Self.replaced(template, bridge: bridge, config: Self.config(webview, token, astro: astro)))
            #expect(script.contains(#""token":"t\"2""#) == (token == "t\"2"))
            #expect(!script.contains("/*@CONFIG@*/") && !script.contains("/*@BRIDGE_JS@*/"))
        }
    }

    /// Markers inside bridge.js's text stay as they are (the configuration goes where the
    /// template says, once per marker of the template); a template without a configuration
    /// marker gets none.
    @Test func markersOnlyInTheTemplateAreReplaced() {
        let bridge = "const a = '/*@CONFIG@*/ null';"
        let template = "A /*@CONFIG@*/ null B /*@BRIDGE_JS@*/ C /*@CONFIG@*/ null"
        let script = InjectedClient.Template(template: template, classicBridge: bridge)
            .script(bridgeURL: "ws://127.0.0.1:8080/bridge", moduleURL: "http://127.0.0.1:8080/bridge.js", session: "s-1", webview: .webview(3), token: "x")
        #expect(script == Self.replaced(template, bridge: bridge, config: Self.config(.webview(3), "x", astro: true)))
        #expect(InjectedClient.Template(template: "no marker /*@BRIDGE_JS@*/", classicBridge: "B")
            .script(bridgeURL: "u", moduleURL: "m", session: "s", webview: .webview(1), token: "t") == "no marker B")
    }
}
