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

    /// The script for one tab: `template` (inject.js) with its markers replaced, as one text
    /// (`TabScript.whole`).
    /// - Parameters:
    ///   - bridgeURL: the daemon's WebSocket endpoint (`ws://HOST:PORT/bridge`).
    ///   - claim: the web view this tab is, with its token.
    /// - `astro`: whether the Astro shim is installed (not in a hotwire-native session's tabs).
    public static func script(template: String, classicBridge: String, bridgeURL: String, moduleURL: String,
                              session: String, webview: ItemID, token: String, astro: Bool = true) -> String {
        Template(template: template, classicBridge: classicBridge)
            .script(bridgeURL: bridgeURL, moduleURL: moduleURL, session: session, webview: webview, token: token, astro: astro).whole
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

        /// The script for one tab, in its two parts (`TabScript`): the session's (the client as
        /// a function of its claim, with `hotwire`, the session's `hotwireScript`, after it) and
        /// the tab's (the call with its claim).
        public func script(bridgeURL: String, moduleURL: String, session: String, webview: ItemID, token: String, astro: Bool = true,
                           hotwire: String? = nil) -> TabScript {
            TabScript(prelude: prelude(bridgeURL: bridgeURL, moduleURL: moduleURL, astro: astro, hotwire: hotwire),
                      start: InjectedClient.start(session: session, webview: webview, token: token))
        }

        /// The session's part: defines `window.__bridgedStart(claim)`, which runs inject.js with
        /// the configuration and `claim` (and the Hotwire side after it). Nothing runs until the
        /// tab's part calls it.
        public func prelude(bridgeURL: String, moduleURL: String, astro: Bool = true, hotwire: String? = nil) -> String {
            let config: JSONValue = ["url": .string(bridgeURL), "moduleUrl": .string(moduleURL), "astro": .bool(astro)]
            let configured = "Object.assign(" + config.jsonString + ", { claim: __bridgedClaim })"
            var out = InjectedClient.preludeHead
            out += pieces.joined(separator: configured)
            if let hotwire { out += "\n" + hotwire }
            out += InjectedClient.preludeTail
            return out
        }
    }

    /// The tab's part: takes `window.__bridgedStart` away (no page script ever sees it) and
    /// calls it with the tab's claim.
    public static func start(session: String, webview: ItemID, token: String) -> String {
        let claim: JSONValue = ["session": .string(session), "webview": .string(webview.description), "token": .string(token)]
        return "(function () { var start = window.__bridgedStart; if (typeof start !== \"function\") return; delete window.__bridgedStart; start("
            + claim.jsonString + "); })();"
    }

    static let preludeHead = """
    (function () {
      if (typeof window === "undefined") return;
      Object.defineProperty(window, "__bridgedStart", { configurable: true, enumerable: false, writable: false, value: function (__bridgedClaim) {

    """
    static let preludeTail = """

      } });
    })();
    """

    /// The Hotwire Native side of a tab (`hotwire.js`, docs/HOTWIRE.md) for `profile`. (The
    /// `pathConfigurationUrl` is the daemon's to fetch: no page is told it.)
    public static func hotwireScript(template: String, profile: HotwireProfile) -> String {
        let config: JSONObject = [
            "platform": .string(profile.platform.rawValue),
            "components": .array(profile.components.map(JSONValue.string)),
        ]
        return template.replacingOccurrences(of: "/*@HOTWIRE_CONFIG@*/ null", with: JSONValue.object(config).jsonString)
    }
}

/// What a web view's tab runs before each document's own scripts, in two parts added to the tab
/// in order (`Page.addScriptToEvaluateOnNewDocument` runs them in the order they were added): the
/// session's part, the same in every tab of the session, which a spare tab is given when it is
/// made, off the path of the navigation that takes it; and the tab's own part (its claim), small,
/// added when the tab becomes a web view. A tab given both at once gets `whole`.
public struct TabScript: Sendable, Equatable, ExpressibleByStringLiteral {
    /// The session's part (empty: none).
    public var prelude: String
    /// The tab's part, run after the prelude.
    public var start: String

    public init(prelude: String, start: String) {
        self.prelude = prelude
        self.start = start
    }

    /// One text, no session's part (a test's script).
    public init(stringLiteral value: String) {
        self.init(prelude: "", start: value)
    }

    /// Both parts as one script.
    public var whole: String { prelude.isEmpty ? start : prelude + "\n" + start }
}
