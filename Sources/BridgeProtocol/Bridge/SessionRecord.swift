/// What the daemon knows about one connection.
struct Client {
    var isLoopback: Bool
    var role: Role

    enum Role {
        /// No successful `hello` yet.
        case fresh
        case page(session: String, webview: ItemID)
        /// A page that no longer speaks for its web view (replaced, sent elsewhere, popped,
        /// session closed); its connection is being closed.
        case detached(session: String, webview: ItemID, why: String)
        case controller(ControllerInfo)
    }
}

struct ControllerInfo {
    var name: String
    /// Connection order: the earliest handler of a name wins.
    var number: Int
    var handles: Set<String>
    /// Sessions this controller is subscribed to one by one.
    var sessions: [String] = []
    /// The read-only `observer` role (BridgeObserver.swift).
    var observer = false
}

/// One session's state. A class: it is reached through `sessions[sid]` many times per request,
/// and a struct would be copied whole (every array and dictionary in it retained and released)
/// on each read.
final class SessionRecord {
    let id: String
    let serial: UInt64

    /// The mutable state, behind a pointer: a class's stored properties are reached through a
    /// dynamic exclusivity check on every use, several per request here. One thread only (the
    /// Bridge's).
    struct State {
        var engine: SessionEngine
        var pages: [ItemID: ClientID] = [:]
        var subscribers: [(client: ClientID, filter: EventFilter)] = []
        var idleSince: Int64?
        var stackCache: [UInt8] = []
        var stackCacheVersion: UInt64 = .max
        var route: RouteSession?
        var webTokens: [ItemID: String] = [:]
        var pastTokens: [ItemID: String] = [:]
    }
    private let state: UnsafeMutablePointer<State>

    var engine: SessionEngine { get { state.pointee.engine } _modify { yield &state.pointee.engine } }
    /// The connected page of each web view.
    var pages: [ItemID: ClientID] { get { state.pointee.pages } _modify { yield &state.pointee.pages } }
    /// Controllers subscribed to this session by name, in subscription order.
    var subscribers: [(client: ClientID, filter: EventFilter)] {
        get { state.pointee.subscribers }
        _modify { yield &state.pointee.subscribers }
    }
    /// When the last connection left (microseconds); nil while one is there.
    var idleSince: Int64? { get { state.pointee.idleSince } _modify { yield &state.pointee.idleSince } }
    var stackCache: [UInt8] { get { state.pointee.stackCache } _modify { yield &state.pointee.stackCache } }
    var stackCacheVersion: UInt64 {
        get { state.pointee.stackCacheVersion }
        _modify { yield &state.pointee.stackCacheVersion }
    }
    /// With a routing configuration: the session's tree of stacks.
    var route: RouteSession? { get { state.pointee.route } _modify { yield &state.pointee.route } }
    /// Tokens of web views known to the tree (also those outside the active stack).
    var webTokens: [ItemID: String] { get { state.pointee.webTokens } _modify { yield &state.pointee.webTokens } }
    /// Tokens of the web views opened in this session, also after they closed (BridgeHistory.swift).
    var pastTokens: [ItemID: String] { get { state.pointee.pastTokens } _modify { yield &state.pointee.pastTokens } }

    init(id: String, serial: UInt64, engine: SessionEngine) {
        self.id = id
        self.serial = serial
        state = .allocate(capacity: 1)
        state.initialize(to: State(engine: engine))
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }
}
