@testable import BridgeProtocol

/// Drives a `Bridge` the way the daemon does and keeps what each client was sent.
struct BridgeHarness {
    var bridge: Bridge<SeededRandom>
    var now: Int64 = 1_000_000
    var nextClient: UInt64 = 1
    var inbox: [ClientID: [JSONValue]] = [:]
    var closed: [ClientID: Int] = [:]
    var timers: [TimerKey: Int64] = [:]
    /// Work handed to the host's browser (browser sessions), in order.
    var hostCalls: [HostWork] = []
    var nextID: Int64 = 1

    /// A Bridge with `router` (a routing configuration, `--config`) or without.
    init(configuration: BridgeConfiguration = BridgeConfiguration(), router: Router? = nil, seed: UInt64 = 42) {
        bridge = Bridge(configuration: configuration, router: router, random: SeededRandom(seed: seed))
    }

    /// A connection; `origin` is the `Origin` header of its upgrade (a browser sends one).
    mutating func connect(loopback: Bool = true, origin: String? = nil) -> ClientID {
        let c = ClientID(nextClient)
        nextClient += 1
        bridge.apply(.connected(c, isLoopback: loopback, origin: origin), at: now)
        inbox[c] = []
        return c
    }

    mutating func advance(ms: Int64) {
        now += ms * 1000
        // Fire due timers in deadline order.
        while let (key, due) = timers.min(by: { $0.value < $1.value }), due <= now {
            timers[key] = nil
            bridge.apply(.timerFired(key), at: due)
            collect()
        }
    }

    mutating func raw(_ c: ClientID, _ text: String) {
        bridge.apply(.frame(c, text: Array(text.utf8)), at: now)
        collect()
    }

    mutating func disconnect(_ c: ClientID) {
        bridge.apply(.left(c), at: now)
        collect()
    }

    /// What the host's browser did.
    mutating func host(_ result: HostResult) {
        bridge.apply(.host(result), at: now)
        collect()
    }

    /// Sends a request and returns its reply (the first frame with that id).
    @discardableResult
    mutating func request(_ c: ClientID, _ method: String, _ params: JSONValue = .object([:])) -> JSONValue {
        let id = nextID
        nextID += 1
        let frame: JSONValue = ["id": .int(id), "method": .string(method), "params": params]
        let before = inbox[c]?.count ?? 0
        raw(c, frame.jsonString)
        let new = inbox[c]![before...]
        return new.first { $0["id"] == .int(id) } ?? .null
    }

    mutating func event(_ c: ClientID, _ name: String, _ params: JSONValue = .object([:])) {
        let frame: JSONValue = ["event": .string(name), "params": params]
        raw(c, frame.jsonString)
    }

    mutating func collect() {
        for effect in bridge.drainEffects() {
            switch effect {
            case .send(let c, let bytes):
                guard closed[c] == nil else { fatalError("sent to \(c) after its close") }
                inbox[c, default: []].append(try! JSONParser.parse(bytes))
            case .close(let c, let code, _):
                closed[c] = code
            case .schedule(let key, let ms):
                timers[key] = now + Int64(ms) * 1000
            case .host(let call):
                hostCalls.append(call)
            case .cancel(let key):
                timers[key] = nil
            }
        }
    }

    /// Takes and returns everything `c` was sent since the last call.
    mutating func take(_ c: ClientID) -> [JSONValue] {
        defer { inbox[c] = [] }
        return inbox[c] ?? []
    }

    /// Events named `name` that `c` has been sent (and keeps them in the inbox).
    func events(_ c: ClientID, _ name: String) -> [JSONValue] {
        (inbox[c] ?? []).filter { $0["event"] == .string(name) }
    }

    static func ids(_ stack: JSONValue?) -> String {
        (stack?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }.joined(separator: " ")
    }
}
