@testable import BridgeServer
import Testing
@Suite struct ZZBench {
    @Test func measure() throws {
        let service = ServiceThread()
        #expect(service.waitStarted())
        defer { service.stop() }
        let r = service.sync { t -> String in
            let t0 = t.monotonicMicroseconds
            var hs: [TimerHandle] = []
            for i in 0..<10_000 { hs.append(t.schedule(afterMicroseconds: 1_000_000 + Int64(i)) {}) }
            let t1 = t.monotonicMicroseconds
            for h in hs { t.cancel(h) }
            let t2 = t.monotonicMicroseconds
            return "schedule \(Double(t1 - t0) / 10_000) us, cancel \(Double(t2 - t1) / 10_000) us"
        }
        print("BENCH", r ?? "-")
        let lat = Recorder<Int64>()
        service.remote.enqueue { (t: Transport) in
            var n = 0
            func next() {
                let d = Int64(1000 + (n * 7919) % 5000)
                var h: TimerHandle?
                h = t.schedule(afterMicroseconds: d) {
                    lat.append(t.monotonicMicroseconds - h!.deadlineMicroseconds)
                    n += 1
                    if n < 500 { next() }
                }
            }
            next()
        }
        #expect(lat.wait(forCount: 500, seconds: 60))
        let s = lat.all.sorted()
        print("BENCH lateness p50 \(s[250]) p90 \(s[450]) p99 \(s[495]) max \(s[499]) us")
    }
}
