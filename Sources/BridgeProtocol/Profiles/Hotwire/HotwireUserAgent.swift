// The user agent a hotwire-native session's tabs get (docs/HOTWIRE.md, "What the page sees").

public enum HotwireUserAgent {
    /// The Hotwire Native part: `Hotwire Native iOS; Turbo Native iOS; bridge-components: [a b]`
    /// (iOS), or the Android form with a `;` after `]`. Both name "Hotwire Native" and "Turbo
    /// Native", which servers test for.
    public static func substring(platform: HotwirePlatform, components: [String]) -> String {
        let list = "bridge-components: [" + components.joined(separator: " ") + "]"
        switch platform {
        case .ios: return "Hotwire Native iOS; Turbo Native iOS; " + list
        case .android: return "Hotwire Native Android; Turbo Native Android; " + list + ";"
        }
    }

    /// The whole user agent from the browser's own: iOS appends the Hotwire part (WebKit's
    /// `applicationNameForUserAgent`), Android prepends it to the WebView's default.
    public static func build(base: String, platform: HotwirePlatform, components: [String]) -> String {
        let part = substring(platform: platform, components: components)
        switch platform {
        case .ios: return base.isEmpty ? part : base + " " + part
        case .android: return base.isEmpty ? part : part + " " + base
        }
    }

    /// A component name as the user agent and `nativeBridge.register` carry it: non-empty,
    /// at most 64 bytes, letters, digits, `-` and `_` (the list is space-separated).
    public static func isValidComponentName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 64 else { return false }
        return name.unicodeScalars.allSatisfy { s in
            (s >= "a" && s <= "z") || (s >= "A" && s <= "Z") || (s >= "0" && s <= "9") || s == "-" || s == "_"
        }
    }
}
