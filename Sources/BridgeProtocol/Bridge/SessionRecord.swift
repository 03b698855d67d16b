/// What the daemon knows about one connection.
///
/// (The fields a request reads, `role` and the session hint, come first, and a controller's
/// record and a detached page's reason are boxed: a record is 64 bytes, 88 before, and a
/// request's lookup reads one or two cache lines of the table, not two or three.)
struct Client: Equatable {
    var role: Role
    var isLoopback: Bool
    /// Opened by a page of a non-loopback origin (BridgeObserver.swift).
    var foreignOrigin = false
    /// A page's session's slot position in the `SessionTable` when last found (-1: not yet), and
    /// that session's serial (0: none): a hint that spares hashing the session id per request
    /// (`withPageSession`). Not state: not compared.
    var sessionSlot = -1
    var sessionSerial: UInt64 = 0
    /// The `Origin` header of the WebSocket upgrade, when the client sent one (a browser).
    var origin: String?

    /// The id of a page's session (nil when the client is not a page).
    var pageSession: String? {
        if case .page(let sid, _) = role { sid } else { nil }
    }

    static func == (a: Client, b: Client) -> Bool {
        a.isLoopback == b.isLoopback && a.origin == b.origin && a.role == b.role && a.foreignOrigin == b.foreignOrigin
    }

    enum Role: Equatable {
        /// No successful `hello` yet.
        case fresh
        case page(session: String, webview: ItemID)
        /// A page that no longer speaks for its web view (replaced, sent elsewhere, popped,
        /// session closed); its connection is being closed.
        indirect case detached(session: String, webview: ItemID, why: String)
        indirect case controller(ControllerInfo)

        var isDetached: Bool {
            if case .detached = self { true } else { false }
        }
    }
}

struct ControllerInfo: Equatable {
    var name: String
    /// Connection order: the earliest handler of a name wins.
    var number: Int
    var handles: Set<String>
    /// Sessions this controller is subscribed to one by one (a set: adding and removing one
    /// costs the same with 40,000 as with 10).
    var sessions: Set<String> = []
    /// The read-only `observer` role (BridgeObserver.swift).
    var observer = false
}

/// A controller subscribed to a session (or to all), with the events it wants.
struct Subscriber: Equatable {
    var client: ClientID
    var filter: EventFilter
}

/// One session's state: a value, kept in the Bridge's `SessionTable` and reached once per
/// request through `Bridge.withSession`.
struct Session {
    let id: String
    let serial: UInt64
    var engine: SessionEngine
    /// The connected page of each web view.
    var pages: [ItemID: ClientID] = [:]
    /// Controllers subscribed to this session by name, in subscription order.
    var subscribers: [Subscriber] = []
    /// When the last connection left (microseconds); nil while one is there.
    var idleSince: Int64?
    /// With a routing configuration: the session's tree of stacks. Its items' ids come from the
    /// engine's allocator (`engine.itemIDs`), the session's only one.
    var tree: NavigationTree?
    /// Whether the session has a routing tree. (A pattern match: `tree != nil` goes through
    /// `NavigationTree`'s `==` and copies the whole tree into a pair of optionals first.)
    var isRouted: Bool {
        if case .some = tree { true } else { false }
    }
    /// Tokens of web views known to the tree (also those outside the active stack).
    var webTokens: [ItemID: String] = [:]
    /// Tokens of the web views opened in this session, also after they closed (BridgeHistory.swift).
    var pastTokens: [ItemID: String] = [:]
    /// The stack as JSON for `engine.version` (a cache: not part of the session's state).
    var stackCache: [UInt8] = []
    var stackCacheVersion: UInt64 = .max
    /// Each item of the cached stack with the end of its bytes in `stackCache` (`stackJSON`
    /// keeps the placeholders at the bottom when the stack changes).
    var stackCacheItems: [StackCacheItem] = []
    /// A session created with `browser: true`: its browser side (Bridge+Host.swift). (Last, with
    /// `profile`: the fields every message reads come first, in the session's first cache lines.)
    var browser: BrowserState?
    /// The session's profile side (Profiles/Profile.swift); nil: the plain profile. (An
    /// existential: a profile's state larger than three words is kept out of line.)
    var profile: (any ProfileState)?
    /// Whether the session has a browser.
    var isBrowser: Bool { browser != nil }

    init(id: String, serial: UInt64, engine: SessionEngine) {
        self.id = id
        self.serial = serial
        self.engine = engine
    }
}

extension Session: Equatable {
    /// Equal state; the JSON cache is not compared.
    static func == (a: Session, b: Session) -> Bool {
        a.id == b.id && a.serial == b.serial && a.engine == b.engine && a.pages == b.pages
            && a.subscribers == b.subscribers && a.idleSince == b.idleSince && a.tree == b.tree
            && a.webTokens == b.webTokens && a.pastTokens == b.pastTokens && a.browser == b.browser
            && profileStatesEqual(a.profile, b.profile)
    }
}

/// An item of `Session.stackCache`: its id and where its bytes end (after its `}`).
struct StackCacheItem {
    var id: ItemID
    var end: Int
}
