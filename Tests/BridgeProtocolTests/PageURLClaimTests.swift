import Testing
@testable import BridgeProtocol

/// Every spelling of a claim a page client or a user could produce is stripped from stored
/// urls (issue 25, item 7); everything else in the url stays as it was.
@Suite struct PageURLClaimTests {
    @Test(arguments: [
        // Letter case
        ("http://h/a?BRIDGE_TOKEN=t&x=1", "http://h/a?x=1"),
        ("http://h/a?Bridge_Session=s&Bridge_Webview=W1&bridge_TOKEN=t", "http://h/a"),
        // Percent-encoded names, in part or whole, any hex case
        ("http://h/a?bridge%5Ftoken=t", "http://h/a"),
        ("http://h/a?bridge%5ftoken=t&y=2", "http://h/a?y=2"),
        ("http://h/a?%62ridge_token=t", "http://h/a"),
        ("http://h/a?%62%72%69%64%67%65%5f%73%65%73%73%69%6f%6e=s", "http://h/a"),
        ("http://h/a?%42RIDGE%5FWEBVIEW=W2#top", "http://h/a#top"),
        // A name without a value
        ("http://h/a?bridge_token&z=3", "http://h/a?z=3"),
        // In the fragment: the whole fragment, or a hash route's query
        ("http://h/d#bridge_token=t", "http://h/d"),
        ("http://h/d#a=1&BRIDGE_TOKEN=t", "http://h/d#a=1"),
        ("http://h/e#/route?y=2&bridge_token=t", "http://h/e#/route?y=2"),
        ("http://h/e#/route?bridge%5Fsession=s", "http://h/e#/route"),
        // Query and fragment both
        ("http://h/f?bridge_token=t&k=v#/r?bridge_webview=W1&m=n", "http://h/f?k=v#/r?m=n"),
    ])
    func everySpellingIsStripped(_ url: String, _ expected: String) {
        #expect(PageURL.stripClaim(url) == expected)
        #expect(PageURL.stripClaim(expected) == expected)
    }

    @Test(arguments: [
        "http://h/a?x=1#frag",
        "http://h/a%20b?q=%41#%2F",
        "http://h/a?bridge=ws%3A%2F%2Fh%3A1",
        "http://h/a?bridge_tokens=t",
        "http://h/a?xbridge_token=t",
        "http://h/a?bridge%5Ftoke=t",
        "http://h/a?q=bridge_token",
        "http://h/#bridge_token",
        "http://h/#/route?x=bridge_token",
        "http://h/a?",
        "http://h/a?&&",
        "http://h/a#",
        "http://h/a?%zz=1&%=2",
        "http://h/ünï/bridge_token?é=ü",
    ])
    func urlsWithoutAClaimAreUnchanged(_ url: String) {
        #expect(PageURL.stripClaim(url) == url)
    }

    @Test func withClaimReplacesAnyExistingSpelling() {
        let url = PageURL.withClaim("http://h/a?BRIDGE_TOKEN=old&x=1#bridge_token=old2", session: "s-1",
                                    webview: .webview(2), token: "new")
        #expect(url == "http://h/a?x=1&bridge_session=s-1&bridge_webview=W2&bridge_token=new")
    }
}
