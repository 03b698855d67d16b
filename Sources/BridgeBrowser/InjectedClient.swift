import Foundation
import BridgeProtocol

/// Builds the script injected into every document of a browser session's tab: `inject.js` with
/// bridge.js inside it as a classic script, configured for one web view.
public enum InjectedClient {
    /// bridge.js as a classic script body: `export` keywords dropped, `import.meta.url` replaced
    /// by the injected configuration's module url.
    public static func classicBridge(_ bridgeJS: String) -> String {
        var out = ""
        out.reserveCapacity(bridgeJS.utf8.count)
        for line in bridgeJS.split(separator: "\n", omittingEmptySubsequences: false) {
            var l = Substring(line)
            if l.hasPrefix("export ") { l = l.dropFirst("export ".count) }
            out += l.replacingOccurrences(of: "import.meta.url", with: "__bridgedModuleUrl")
            out += "\n"
        }
        return out
    }

    /// The script for one tab: `template` (inject.js) with its markers replaced.
    /// - Parameters:
    ///   - bridgeURL: the daemon's WebSocket endpoint (`ws://HOST:PORT/bridge`).
    ///   - claim: the web view this tab is, with its token.
    /// - `astro`: whether the Astro shim is installed (not in a hotwire-native session's tabs).
    public static func script(template: String, classicBridge: String, bridgeURL: String, moduleURL: String,
                              session: String, webview: ItemID, token: String, astro: Bool = true) -> String {
        Template(template: template, classicBridge: classicBridge)
            .script(bridgeURL: bridgeURL, moduleURL: moduleURL, session: session, webview: webview, token: token, astro: astro)
    }

    static let configMarker = "/*@CONFIG@*/ null"
    static let bridgeMarker = "/*@BRIDGE_JS@*/"

    /// inject.js with bridge.js in it, cut once at its configuration marker: a tab's script is
    /// the pieces joined by its configuration (≈ 2 µs), not the ≈ 40 KB searched and copied
    /// twice (≈ 140 µs on the service thread per tab opened).
    public struct Template: Sendable {
        let pieces: [String]

        public init(template: String, classicBridge: String) {
            pieces = template.components(separatedBy: InjectedClient.configMarker)
                .map { $0.replacingOccurrences(of: InjectedClient.bridgeMarker, with: classicBridge) }
        }

        /// The script for one tab (see `InjectedClient.script`).
        public func script(bridgeURL: String, moduleURL: String, session: String, webview: ItemID, token: String, astro: Bool = true) -> String {
            let config: JSONValue = [
                "url": .string(bridgeURL), "moduleUrl": .string(moduleURL),
                "claim": ["session": .string(session), "webview": .string(webview.description), "token": .string(token)],
                "astro": .bool(astro),
            ]
            return pieces.joined(separator: config.jsonString)
        }
    }

    /// The expression that has a tab's page client, closed with the web view it spoke for,
    /// claim `webview` instead (bridge.js's `reclaim`: the document and its scripts' state stay).
    /// Its value is `true` when the page has a client that took the claim.
    public static func reclaimExpression(session: String, webview: ItemID, token: String) -> String {
        let claim: JSONValue = ["session": .string(session), "webview": .string(webview.description), "token": .string(token)]
        return "(() => { const c = window.__bridgedInjected; "
            + "return !!(c && c.bridge && typeof c.bridge.reclaim === \"function\" && c.bridge.reclaim(\(claim.jsonString))); })()"
    }

    /// A session profile's page script (e.g. `hotwire.js` of hotwire-native sessions,
    /// docs/HOTWIRE.md) from its asset's text `template`: the profile's config written in.
    public static func profileScript(template: String, _ script: ProfilePageScript) -> String {
        template.replacingOccurrences(of: script.marker, with: script.config.jsonString)
    }
}
