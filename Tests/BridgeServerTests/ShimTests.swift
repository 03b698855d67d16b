import CWebsockets
import Testing

@Suite struct ShimTests {
    @Test func lwsPreIsTheHeaderValue() {
        // 4 + 10 + 2 padded to the word size: 16 on every 64-bit target.
        #expect(bridged_lws_pre() == 16)
    }

    @Test func timerNodeIsFoundFromItsSul() {
        let node = UnsafeMutablePointer<bridged_timer_t>.allocate(capacity: 1)
        defer { node.deallocate() }
        node.initialize(to: bridged_timer_t())
        node.pointee.serial = 42
        let sul = UnsafeMutableRawPointer(node).assumingMemoryBound(to: lws_sorted_usec_list_t.self)
        let back = bridged_timer_from_sul(sul)
        #expect(back == node)
        #expect(back?.pointee.serial == 42)
    }

    @Test func textFragmentFlags() {
        let text = Int32(LWS_WRITE_TEXT.rawValue)
        let cont = Int32(LWS_WRITE_CONTINUATION.rawValue)
        let noFin = Int32(LWS_WRITE_NO_FIN.rawValue)
        #expect(bridged_ws_text_flags(1, 1) == text)
        #expect(bridged_ws_text_flags(1, 0) == text | noFin)
        #expect(bridged_ws_text_flags(0, 0) == cont | noFin)
        #expect(bridged_ws_text_flags(0, 1) == cont)
    }

    @Test func monotonicClockIsCLOCK_MONOTONIC() {
        // Timers and `monotonicMicroseconds` use lws_now_usecs: check it is the monotonic clock
        // (not wall time since 1970), comparing the two readings' magnitudes.
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let mono = Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
        let lws = Int64(lws_now_usecs())
        #expect(abs(lws - mono) < 60_000_000)
    }
}
