extension SessionEngine {
    /// The stack in the seed's notation, bottom first: `P1 W1(*P) W2(*C) P2 P3 W3(*P)`.
    /// `(*P)` marks a PWA web view, `(*C)` a classic one; a web view without a connected page
    /// carries a trailing `~`, a native screen is `N1`.
    public var rendering: String {
        Self.render(stack)
    }

    public static func render(_ stack: [StackItem]) -> String {
        var out = ""
        for item in stack {
            if !out.isEmpty { out += " " }
            out += item.id.description
            if case .webview(let w) = item {
                out += w.mode == .pwa ? "(*P)" : "(*C)"
                if !w.connected { out += "~" }
            }
        }
        return out
    }

    /// Ids only: `P1 W1 W2 P2 P3 W3`, the form the contract's examples use.
    public var ids: String {
        stack.map(\.id.description).joined(separator: " ")
    }
}
