import BridgeProtocol

/// `GET /metrics`: the daemon's metrics in the Prometheus text format (docs/METRICS.md).
extension Daemon {
    /// The scrape: every metric brought up to date, then written out; 404 with `--no-metrics`.
    func metricsResponse() -> HTTPResponse? {
        guard let metrics else { return nil }
        metrics.update(stats: &bridge.stats, transport: transport.counters,
                       connectionCount: transport.connectionCount, sessionCount: bridge.sessionCount)
        return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: metrics.render(),
                            headers: [("Cache-Control", "no-store")])
    }

    /// Once a second (with the idle sweep): the render latencies move to the histogram, so that
    /// the state machine keeps only a second's worth.
    func metricsTick() {
        metrics?.takeLatencies(from: &bridge.stats)
    }
}
