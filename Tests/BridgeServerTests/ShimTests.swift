import CWebsockets
import Testing

@Suite struct ShimTests {
    @Test func lwsPreIsTheHeaderValue() {
        // 4 + 10 + 2 padded to the word size: 16 on every 64-bit target.
        #expect(bridged_lws_pre() == 16)
    }
}
