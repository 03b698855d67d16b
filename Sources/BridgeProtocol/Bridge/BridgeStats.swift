/// Counters of what the protocol state machine did, for the daemon's `/metrics`.
///
/// Plain integers in fixed arrays, bumped on the Bridge's thread as things happen: a request
/// costs two increments (its method, matched once when the frame arrived, is its row);
/// observations one increment.
/// Nothing is formatted here: the host reads the totals when it is scraped (see
/// `Daemon+Metrics.swift`) and hands the differences to its metrics library.
public struct BridgeStats: Sendable {
    /// The methods counted by name: every `BridgeMethod` (`methods[m.index] == m.name`), then
    /// `other` for names that are no method.
    public static let methods: [String] = BridgeMethod.names + ["other"]
    /// Index of `ok` and then of every error code, in `codes` order.
    public static let codes: [String] = ["ok"] + ErrorCode.allCases.map(\.rawValue)
    static let otherMethod = BridgeMethod.names.count
    static let codeIndex: [ErrorCode: Int] = {
        var d: [ErrorCode: Int] = [:]
        for (i, c) in ErrorCode.allCases.enumerated() { d[c] = i + 1 }
        return d
    }()

    /// `requests[method * codes.count + code]`: requests answered, by method and outcome.
    public private(set) var requests = [Int](repeating: 0, count: methods.count * codeCount)
    /// Error frames without a request to blame (malformed frames, failed events), by code.
    public private(set) var frameErrors = [Int](repeating: 0, count: codes.count)
    /// Navigations: `pwa` (a successful `pwa-navigate`), `classic` (a new web view).
    public private(set) var pwaNavigations = 0
    public private(set) var classicNavigations = 0
    /// Backs by action (`swap`, `pop`, `none`), in `BackAction` order.
    public private(set) var backs = [0, 0, 0]
    /// Foreground removals by reason, in `RemovalReason` order (`rendered`, `timeout`,
    /// `superseded`, `closed`).
    public private(set) var foregroundRemovals = [0, 0, 0, 0]
    /// `pwa-rendered` that came after the foreground's fallback timer.
    public private(set) var lateRenders = 0
    /// How long foregrounds removed by `pwa-rendered` were up (ms), since the host last took
    /// them (`takeRenderLatencies`).
    public private(set) var renderLatenciesMs: [Int] = []

    public static let backActions: [BackAction] = [.swap, .pop, .none]
    public static let removalReasons: [RemovalReason] = [.rendered, .timeout, .superseded, .closed]

    /// Off (`--no-metrics`): nothing is counted.
    public var enabled = true

    /// The request being handled (its method's index); -1 between requests.
    var current = -1
    var currentCode = 0

    public init() {}

    /// A request of `method` (nil: a name that is no method) begins.
    @inline(__always)
    mutating func beginRequest(_ method: BridgeMethod?) {
        guard enabled else { return }
        current = Self.index(of: method)
        currentCode = 0
    }

    /// The row of `method` in `methods`.
    @inline(__always)
    static func index(of method: BridgeMethod?) -> Int {
        if let method { return method.index }
        return otherMethod
    }

    static let codeCount = 16  // codes.count (ok and every error code), checked by BridgeStatsTests

    mutating func endRequest() {
        if current >= 0 { requests[current &* Self.codeCount &+ currentCode] &+= 1 }
        current = -1
    }

    mutating func error(_ code: ErrorCode) {
        guard enabled else { return }
        let c = Self.codeIndex[code] ?? 0
        if current >= 0, currentCode == 0 { currentCode = c } else { frameErrors[c] &+= 1 }
    }

    mutating func back(_ action: BackAction) {
        guard enabled else { return }
        switch action {
        case .swap: backs[0] &+= 1
        case .pop: backs[1] &+= 1
        case .none: backs[2] &+= 1
        }
    }

    mutating func observe(_ observation: Observation) {
        guard enabled else { return }
        switch observation {
        case .foregroundShown(_, let kind, _):
            if kind == .blank { pwaNavigations &+= 1 }
        case .webviewOpen:
            classicNavigations &+= 1
        case .foregroundRemoved(_, let reason, let latencyMs):
            switch reason {
            case .rendered:
                foregroundRemovals[0] &+= 1
                if renderLatenciesMs.count < Self.maxPendingLatencies { renderLatenciesMs.append(latencyMs) }
            case .timeout: foregroundRemovals[1] &+= 1
            case .superseded: foregroundRemovals[2] &+= 1
            case .closed: foregroundRemovals[3] &+= 1
            }
        case .pwaRendered(_, _, let late):
            if late { lateRenders &+= 1 }
        default:
            break
        }
    }

    /// Latencies kept between two `takeRenderLatencies` (the host takes them every second).
    public static let maxPendingLatencies = 1 << 16

    /// The render latencies recorded since the last call.
    public mutating func takeRenderLatencies(into out: inout [Int]) {
        out.removeAll(keepingCapacity: true)
        swap(&out, &renderLatenciesMs)
    }
}
