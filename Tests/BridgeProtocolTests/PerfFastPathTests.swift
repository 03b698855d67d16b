import Testing
@testable import BridgeProtocol

/// The hot-path shortcuts taken for performance (docs/PERFORMANCE.md) must give exactly what
/// the general code gives.
@Suite struct PerfFastPathTests {
    @Test(arguments: [
        ("http://127.0.0.1:8787/app/#/products/1", false),
        ("", false),
        ("bridge", false),
        ("bridge_", true),
        ("x?bridge_session=s-1", true),
        ("http://h/a?b=bridge_x#frag", true),
        ("http://h/bridge-x?q=bridgE_", false),
        ("http://h/ünïcødé/bridge_token", true),
        ("http://h/ünïcødé/bridg", false),
    ])
    func claimScanAgreesWithContains(_ url: String, _ expected: Bool) {
        #expect(PageURL.mayCarryClaim(url) == expected)
        #expect(PageURL.mayCarryClaim(url) == url.contains("bridge_"))
    }

    @Test func stripClaimKeepsEverythingElse() {
        #expect(PageURL.mayCarryClaim(String(Substring("xx?bridge_token=1").dropFirst(2))))
        #expect(PageURL.stripClaim("http://h/?a=1&bridge_token=t&b=2#f") == "http://h/?a=1&b=2#f")
        #expect(PageURL.stripClaim("http://h/?a=bridge_1") == "http://h/?a=bridge_1")
        #expect(PageURL.stripClaim("http://h/#bridge_") == "http://h/#bridge_")
    }
}
