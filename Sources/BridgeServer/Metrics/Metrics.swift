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
    private let renderLatency: CoreMetrics.Timer
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

    /// Render-latency histogram buckets (seconds): from one frame to past the default fallback.
    static let latencyBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(16), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .milliseconds(1000),
        .milliseconds(2500), .milliseconds(5000),
    ]

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["bridged_render_latency_seconds"] = Self.latencyBuckets
        self.factory = factory
        connections = Gauge(label: "bridged_connections", factory: factory)
        sessions = Gauge(label: "bridged_sessions", factory: factory)
        sendQueueOverflows = Counter(label: "bridged_send_queue_overflows_total", factory: factory)
        lateRenders = Counter(label: "bridged_late_renders_total", factory: factory)
        renderLatency = CoreMetrics.Timer(label: "bridged_render_latency_seconds", factory: factory)
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
        for ms in latencies { renderLatency.recordMilliseconds(ms) }
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
        return out
    }
}
