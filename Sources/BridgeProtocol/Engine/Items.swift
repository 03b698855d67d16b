/// The identity of a stack item within one session: `W3`, `P2`, `N1`.
///
/// Ids are generational: each kind counts up from 1 in creation order and a number is never
/// reused within a session, so a message about a popped item can always be told apart from one
/// about a live item.
public struct ItemID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public enum Kind: UInt8, Sendable, CaseIterable {
        case webview, placeholder, native

        /// The kind's name on the wire (`"kind"` of a tree item): `webview`, `placeholder`, `native`.
        public var name: String {
            switch self {
            case .webview: "webview"
            case .placeholder: "placeholder"
            case .native: "native"
            }
        }

        public var letter: Character {
            switch self {
            case .webview: "W"
            case .placeholder: "P"
            case .native: "N"
            }
        }
    }

    /// The number shifted left by two, the kind's raw value in the low two bits: one word, so
    /// that a stack item (which holds one or two ids) fits a 64-byte cache line.
    @usableFromInline let bits: UInt64

    @inlinable public var kind: Kind { Kind(rawValue: UInt8(truncatingIfNeeded: bits & 3))! }
    @inlinable public var number: Int { Int(Int64(bitPattern: bits) >> 2) }

    @inlinable public init(_ kind: Kind, _ number: Int) {
        bits = UInt64(bitPattern: Int64(number)) << 2 | UInt64(kind.rawValue)
    }

    public static func webview(_ n: Int) -> ItemID { ItemID(.webview, n) }
    public static func placeholder(_ n: Int) -> ItemID { ItemID(.placeholder, n) }
    public static func native(_ n: Int) -> ItemID { ItemID(.native, n) }

    /// Parses `W12`, `P3`, `N1`. Returns nil for anything else (no sign, no leading zeros).
    public init?(parsing text: String) {
        var utf8 = text.utf8.makeIterator()
        guard let first = utf8.next() else { return nil }
        let kind: Kind
        switch first {
        case UInt8(ascii: "W"): kind = .webview
        case UInt8(ascii: "P"): kind = .placeholder
        case UInt8(ascii: "N"): kind = .native
        default: return nil
        }
        var value = 0
        var digits = 0
        while let byte = utf8.next() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            if digits == 0 && byte == UInt8(ascii: "0") { return nil }
            digits += 1
            guard digits <= 15 else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard digits > 0 else { return nil }
        self.init(kind, value)
    }

    public var description: String { "\(kind.letter)\(number)" }

    public static func < (lhs: ItemID, rhs: ItemID) -> Bool {
        (lhs.kind.rawValue, lhs.number) < (rhs.kind.rawValue, rhs.number)
    }
    /// A session's pages are found by web view (`Session.pages`; see `NumberHash`).
    @inlinable public func _rawHashValue(seed: Int) -> Int {
        NumberHash.mix(bits, seed: seed)
    }
}

/// The one source of item ids of a session: the next number of each kind. The engine owns it
/// (`SessionEngine.itemIDs`) and the router draws from the same value (`Router.apply(_:on:ids:)`),
/// so an id drawn by either is never drawn again by the other; numbers only grow.
public struct ItemIDAllocator: Hashable, Sendable {
    public var nextWebview = 1
    public var nextPlaceholder = 1
    public var nextNative = 1

    public init() {}

    /// Draws the next id of `kind`.
    @inline(__always)
    public mutating func next(_ kind: ItemID.Kind) -> ItemID {
        switch kind {
        case .webview:
            defer { nextWebview += 1 }
            return ItemID(.webview, nextWebview)
        case .placeholder:
            defer { nextPlaceholder += 1 }
            return ItemID(.placeholder, nextPlaceholder)
        case .native:
            defer { nextNative += 1 }
            return ItemID(.native, nextNative)
        }
    }

    /// The id `next(kind)` would draw, without drawing it.
    public func peek(_ kind: ItemID.Kind) -> ItemID {
        switch kind {
        case .webview: ItemID(.webview, nextWebview)
        case .placeholder: ItemID(.placeholder, nextPlaceholder)
        case .native: ItemID(.native, nextNative)
        }
    }
}

/// How a web view is driven: `classic` until its page sends its first `pwa-navigate`.
public enum PageMode: String, Sendable, Equatable {
    case pwa, classic
}

/// A web view on the stack. `connected` says whether a page currently speaks for it.
///
/// (The one-byte fields come last: a web view is 59 bytes and a stack item 64, one cache line;
/// in declaration order they padded it to 88.)
public struct WebView: Equatable, Sendable {
    public let id: ItemID
    public var url: String
    public var title: String?
    /// The secret a page presents to claim this web view.
    public let token: String
    public var mode: PageMode
    public var connected: Bool
    /// How this web view's most recent foreground ended; `timeout` until a `pwa-rendered` has
    /// been reported late, so that a late `pwa-rendered` is flagged once.
    public var lastRemoval: RemovalReason?

    public init(id: ItemID, mode: PageMode, url: String, title: String? = nil, connected: Bool, token: String) {
        self.id = id
        self.mode = mode
        self.url = url
        self.title = title
        self.connected = connected
        self.token = token
        self.lastRemoval = nil
    }
}

/// The snapshot of one PWA state, standing for one step of its web view's history.
public struct Placeholder: Equatable, Sendable {
    public let id: ItemID
    /// The web view whose history step this stands for.
    public let of: ItemID
    public let url: String
    public let title: String?

    public init(id: ItemID, of: ItemID, url: String, title: String? = nil) {
        self.id = id
        self.of = of
        self.url = url
        self.title = title
    }
}

/// A screen the native side draws itself (e.g. a `tt://` route).
public struct NativeScreen: Equatable, Sendable {
    public let id: ItemID
    public let url: String
    /// The native screen's name, when its session's profile names one (e.g. a path
    /// configuration's `view_controller`).
    public let screen: String?

    public init(id: ItemID, url: String, screen: String? = nil) {
        self.id = id
        self.url = url
        self.screen = screen
    }
}

public enum StackItem: Equatable, Sendable {
    case webview(WebView)
    case placeholder(Placeholder)
    case native(NativeScreen)

    public var id: ItemID {
        switch self {
        case .webview(let w): w.id
        case .placeholder(let p): p.id
        case .native(let n): n.id
        }
    }

    public var url: String {
        switch self {
        case .webview(let w): w.url
        case .placeholder(let p): p.url
        case .native(let n): n.url
        }
    }

    public var webview: WebView? {
        if case .webview(let w) = self { return w }
        return nil
    }

    public var isWebView: Bool { id.kind == .webview }
    public var isPlaceholder: Bool { id.kind == .placeholder }
}

/// What the blank screen over a web view shows.
public enum ForegroundKind: String, Sendable, Equatable {
    /// After `pwa-navigate`: nothing yet, the new state is being rendered.
    case blank
    /// After a back-swap: the image of the placeholder that was discarded.
    case placeholder
}

/// Why a foreground went away. Each shown foreground is removed exactly once, for one reason.
public enum RemovalReason: String, Sendable, Equatable {
    case rendered, timeout, superseded, closed
}

/// A timer the engine asked its host to run; tokens are never reused within a session, so a
/// timer that fires after its foreground is gone is recognised as stale.
public struct TimerToken: Hashable, Sendable, CustomStringConvertible {
    public let raw: UInt64
    public init(_ raw: UInt64) { self.raw = raw }
    public var description: String { "T\(raw)" }
}

/// The blank screen shown over a web view while its PWA renders a new state.
public struct Foreground: Equatable, Sendable {
    public let webview: ItemID
    public let kind: ForegroundKind
    /// Clock reading (microseconds) when it was shown.
    public let shownAt: Int64
    public let timeoutMs: Int
    public let timer: TimerToken
}
