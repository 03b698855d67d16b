import BridgeProtocol
import CoreMetrics
import Prometheus

private typealias Counter = CoreMetrics.Counter
private typealias Gauge = CoreMetrics.Gauge

/// What the transport counts for `/metrics`: close frames it sent, by code, and connections
/// closed because their reader was too slow. Bumped on the service thread.
public struct TransportCounters: Sendable {
    /// Close frames sent, by close code.
    public internal(set) var closes: [UInt16: Int] = [:]
    /// Connections closed with 1008 because their send queue grew past `maxSendQueueBytes`.
    public internal(set) var sendQueueOverflows = 0

    /// Nothing counted yet (what a transport starts with).
    public init() {}

    mutating func noteClose(_ code: UInt16) { closes[code, default: 0] &+= 1 }
}

/// The daemon's metrics, through swift-metrics handlers made by swift-prometheus' factory on a
/// registry of their own (no global bootstrap: every daemon in a process has its own).
///
/// The hot path never touches this: the protocol state machine and the transport keep plain
/// integer counters, and `update` hands the differences since the last scrape to the
/// swift-metrics counters when `/metrics` is read (and every second for the render latencies).
/// Only the service thread uses it.
final class DaemonMetrics {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory

    private let connections: Gauge
    private let sessions: Gauge
    private let sendQueueOverflows: Counter
    private let lateRenders: Counter
    private var renderLatency = LatencyHistogram(name: "bridged_render_latency_seconds", boundsMs: DaemonMetrics.latencyBucketsMs)
    private var navigations: [Counter] = []
    private var backs: [Counter] = []
    private var removals: [Counter] = []
    /// Made on first use: only the method × code pairs that happened appear.
    private var requests: [Counter?]
    private var errors: [Counter?]
    private var frameErrors: [Counter?]
    private var closes: [UInt16: Counter] = [:]

    /// The totals already handed over.
    private var seen = BridgeStats()
    private var seenTransport = TransportCounters()
    private var latencies: [Int] = []

    /// Render-latency histogram buckets (ms): from one frame to past the default fallback.
    static let latencyBucketsMs = [5, 10, 16, 25, 50, 100, 250, 500, 1000, 2500, 5000]

    init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        self.factory = factory
        connections = Gauge(label: "bridged_connections", factory: factory)
        sessions = Gauge(label: "bridged_sessions", factory: factory)
        sendQueueOverflows = Counter(label: "bridged_send_queue_overflows_total", factory: factory)
        lateRenders = Counter(label: "bridged_late_renders_total", factory: factory)
        navigations = ["pwa", "classic"].map {
            Counter(label: "bridged_navigations_total", dimensions: [("kind", $0)], factory: factory)
        }
        backs = BridgeStats.backActions.map {
            Counter(label: "bridged_backs_total", dimensions: [("action", $0.rawValue)], factory: factory)
        }
        removals = BridgeStats.removalReasons.map {
            Counter(label: "bridged_foreground_removals_total", dimensions: [("reason", $0.rawValue)], factory: factory)
        }
        requests = [Counter?](repeating: nil, count: BridgeStats.methods.count * BridgeStats.codes.count)
        errors = requests
        frameErrors = [Counter?](repeating: nil, count: BridgeStats.codes.count)
        // Zero-valued series for the usual outcomes, so that rates exist from the start.
        for counter in navigations + backs + removals { counter.increment(by: 0) }
        sendQueueOverflows.increment(by: 0)
        lateRenders.increment(by: 0)
    }

    /// Hands the render latencies recorded since the last call to the histogram.
    func takeLatencies(from stats: inout BridgeStats) {
        stats.takeRenderLatencies(into: &latencies)
        for ms in latencies { renderLatency.record(ms) }
    }

    /// Brings every metric up to date with the counters of the bridge and the transport.
    func update(stats: inout BridgeStats, transport: TransportCounters, connectionCount: Int, sessionCount: Int) {
        takeLatencies(from: &stats)
        connections.record(connectionCount)
        sessions.record(sessionCount)

        let codes = BridgeStats.codes.count
        for i in 0..<stats.requests.count {
            let delta = stats.requests[i] - seen.requests[i]
            guard delta > 0 else { continue }
            let method = BridgeStats.methods[i / codes], code = BridgeStats.codes[i % codes]
            counter(&requests[i], "bridged_requests_total", [("method", method), ("code", code)]).increment(by: delta)
            if i % codes != 0 {
                counter(&errors[i], "bridged_errors_total", [("method", method), ("code", code)]).increment(by: delta)
            }
        }
        for i in 0..<codes {
            let delta = stats.frameErrors[i] - seen.frameErrors[i]
            guard delta > 0 else { continue }
            counter(&frameErrors[i], "bridged_errors_total", [("method", "-"), ("code", BridgeStats.codes[i])]).increment(by: delta)
        }
        navigations[0].increment(by: stats.pwaNavigations - seen.pwaNavigations)
        navigations[1].increment(by: stats.classicNavigations - seen.classicNavigations)
        for i in 0..<backs.count { backs[i].increment(by: stats.backs[i] - seen.backs[i]) }
        for i in 0..<removals.count { removals[i].increment(by: stats.foregroundRemovals[i] - seen.foregroundRemovals[i]) }
        lateRenders.increment(by: stats.lateRenders - seen.lateRenders)
        sendQueueOverflows.increment(by: transport.sendQueueOverflows - seenTransport.sendQueueOverflows)
        for (code, total) in transport.closes {
            let delta = total - (seenTransport.closes[code] ?? 0)
            guard delta > 0 else { continue }
            let c = closes[code] ?? Counter(label: "bridged_closes_total", dimensions: [("code", String(code))], factory: factory)
            closes[code] = c
            c.increment(by: delta)
        }
        seen = stats
        seenTransport = transport
    }

    private func counter(_ slot: inout Counter?, _ label: String, _ dimensions: [(String, String)]) -> Counter {
        if let c = slot { return c }
        let c = Counter(label: label, dimensions: dimensions, factory: factory)
        slot = c
        return c
    }

    /// The Prometheus text exposition of every metric.
    func render() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(8192)
        registry.emit(into: &out)
        renderLatency.emit(into: &out)
        return out
    }
}

/// A Prometheus histogram of whole milliseconds, written out in seconds: the render latencies.
///
/// (Not swift-prometheus' `Histogram`, whose `record` takes a lock and compares every bucket's
/// `Duration` for each value: ≈ 300 instructions per navigation reply, where this is a few
/// comparisons of integers. The text is the same as that histogram's.)
struct LatencyHistogram {
    let name: String
    /// Upper bounds of the buckets, ascending.
    let boundsMs: [Int]
    /// Values per bucket (not cumulative); the last one counts values above every bound.
    private(set) var counts: [Int]
    private(set) var sumMs = 0
    private(set) var count = 0

    init(name: String, boundsMs: [Int]) {
        self.name = name
        self.boundsMs = boundsMs
        counts = [Int](repeating: 0, count: boundsMs.count + 1)
    }

    mutating func record(_ ms: Int) {
        var i = 0
        while i < boundsMs.count && ms > boundsMs[i] { i += 1 }
        counts[i] += 1
        sumMs += ms
        count += 1
    }

    /// `# TYPE`, a cumulative `_bucket` line per bound and `+Inf`, `_sum` (seconds) and `_count`.
    func emit(into out: inout [UInt8]) {
        var text = "# TYPE \(name) histogram\n"
        var cumulative = 0
        for (i, bound) in boundsMs.enumerated() {
            cumulative += counts[i]
            text += "\(name)_bucket{le=\"\(Self.seconds(bound))\"} \(cumulative)\n"
        }
        text += "\(name)_bucket{le=\"+Inf\"} \(count)\n"
        text += "\(name)_sum \(Self.seconds(sumMs))\n"
        text += "\(name)_count \(count)\n"
        out.append(contentsOf: text.utf8)
    }

    /// Milliseconds as seconds, the way swift-prometheus writes a `Duration`: `0.005`, `0.25`,
    /// `1.0`, `2.5` (no trailing zeros after the first decimal).
    static func seconds(_ ms: Int) -> String {
        let whole = ms / 1000
        var fraction = String(ms % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.count > 1 && fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(whole).\(fraction)"
    }
}
