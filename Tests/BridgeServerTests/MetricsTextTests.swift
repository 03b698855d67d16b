@testable import BridgeServer
import Testing

/// The render-latency histogram the daemon writes itself (Metrics.swift): the same text that
/// swift-prometheus' `DurationHistogram` wrote for it, at the bucket bounds.
@Suite struct MetricsTextTests {
    @Test func secondsAreWrittenAsSwiftPrometheusWritesDurations() {
        #expect(LatencyHistogram.seconds(0) == "0.0")
        #expect(LatencyHistogram.seconds(5) == "0.005")
        #expect(LatencyHistogram.seconds(10) == "0.01")
        #expect(LatencyHistogram.seconds(16) == "0.016")
        #expect(LatencyHistogram.seconds(250) == "0.25")
        #expect(LatencyHistogram.seconds(1000) == "1.0")
        #expect(LatencyHistogram.seconds(2500) == "2.5")
        #expect(LatencyHistogram.seconds(61_234) == "61.234")
    }

    @Test func bucketsAreCumulativeAndBoundsInclusive() {
        var h = LatencyHistogram(name: "x_seconds", boundsMs: [5, 10, 16])
        for ms in [0, 5, 6, 10, 16, 17, 4000] { h.record(ms) }
        var out: [UInt8] = []
        h.emit(into: &out)
        #expect(String(decoding: out, as: UTF8.self) == """
            # TYPE x_seconds histogram
            x_seconds_bucket{le="0.005"} 2
            x_seconds_bucket{le="0.01"} 4
            x_seconds_bucket{le="0.016"} 5
            x_seconds_bucket{le="+Inf"} 7
            x_seconds_sum 4.054
            x_seconds_count 7

            """)
    }

    @Test func anEmptyHistogramHasEveryBucket() {
        let h = LatencyHistogram(name: "bridged_render_latency_seconds", boundsMs: DaemonMetrics.latencyBucketsMs)
        var out: [UInt8] = []
        h.emit(into: &out)
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 1 + DaemonMetrics.latencyBucketsMs.count + 3)
        #expect(lines.contains(#"bridged_render_latency_seconds_bucket{le="5.0"} 0"#))
        #expect(lines.contains("bridged_render_latency_seconds_sum 0.0"))
    }
}
