import Testing
@testable import BridgeProtocol

/// One id type and one allocator per session: the engine and the router draw from the same
/// value, ids become text only when JSON is written and are parsed only where a client sends one.
@Suite struct ItemIDTests {
    // MARK: The allocator

    @Test func theAllocatorCountsEachKindOnItsOwn() {
        var ids = ItemIDAllocator()
        #expect(ids.peek(.webview) == .webview(1))
        #expect(ids.next(.webview) == .webview(1))
        #expect(ids.next(.placeholder) == .placeholder(1))
        #expect(ids.next(.webview) == .webview(2))
        #expect(ids.next(.native) == .native(1))
        #expect(ids.next(.placeholder) == .placeholder(2))
        #expect(ids.peek(.webview) == .webview(3) && ids.peek(.placeholder) == .placeholder(3) && ids.peek(.native) == .native(2))
    }

    @Test func engineAndRouterOnOneAllocatorNeverDrawTheSameID() throws {
        let router = RouterFixture.router(nativeProduct: true)
        var engine = SessionEngine()
        // As the daemon does: the tree on a copy of the engine's allocator, the engine's root
        // (the tree's W1), then the copy becomes the engine's allocator.
        var draft = engine.itemIDs
        var tree = try router.makeTree(ids: &draft)
        #expect(RouterFixture.ids(tree.tabs.flatMap(\.items)) == ["W1", "W2", "N1"])
        _ = engine.handle(.createRoot(url: tree.activeStack[0].url, token: "t", connected: false), at: 0)
        #expect(engine.stack.map(\.id) == [tree.activeStack[0].id])
        engine.itemIDs = draft
        var drawn: [ItemID] = tree.tabs.flatMap(\.items).map(\.id)
        _ = engine.handle(.pwaNavigate(from: .webview(1), url: nil, title: nil), at: 0)
        drawn.append(engine.stack[0].id)  // the placeholder under W1
        _ = engine.handle(.navigateToUrl(url: "https://shop.example/app/a", token: "t", requester: nil, singleTab: true), at: 0)
        drawn.append(engine.stack.last!.id)
        _ = try router.apply(.push(.url("tt://products/1"), stack: nil, context: nil), on: &tree, ids: &engine.itemIDs)
        drawn.append(tree.activeStack.last!.id)
        _ = engine.handle(.pushNative(url: "tt://x", requester: nil), at: 0)
        drawn.append(engine.stack.last!.id)
        _ = try router.apply(.push(.url("os://search"), stack: nil, context: nil), on: &tree, ids: &engine.itemIDs)
        drawn.append(tree.activeStack.last!.id)
        #expect(drawn.map(\.description) == ["W1", "W2", "N1", "P1", "W3", "N2", "N3", "W4"])
        #expect(engine.itemIDs.peek(.webview) == .webview(5) && engine.itemIDs.peek(.native) == .native(4))
    }

    // MARK: Mixed router and engine pushes on one session of the daemon

    /// Every id of the session's tree, all stacks.
    static func treeIDs(_ tree: JSONValue?) -> [String] {
        var ids: [String] = []
        for tab in tree?["tabs"]?.arrayValue ?? [] {
            ids += (tab["stack"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        }
        ids += (tree?["modal"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        return ids
    }

    @Test func idsAreUniqueAndIncreasingAcrossRouterAndEnginePushes() {
        var h = BridgeHarness(router: RouterFixture.router(nativeProduct: false))
        let ctl = h.controller(handles: ["webview.open"], subscribeAll: true)
        let page = h.newPage(url: BridgeRouterTests.home)
        let sid = JSONValue.string(page.session)
        var last: [Character: Int] = [:]
        var seen: Set<String> = []
        var order: [String] = []
        func record(_ h: inout BridgeHarness, _ step: String) {
            let tree = h.request(ctl, "router.get", ["session": sid])["result"]?["tree"]
            for text in Self.treeIDs(tree) where !seen.contains(text) {
                guard let id = ItemID(parsing: text) else {
                    Issue.record("\(step): \(text) is no item id")
                    continue
                }
                #expect(id.number > last[id.kind.letter, default: 0], "\(step): \(text) after \(last)")
                last[id.kind.letter] = id.number
                seen.insert(text)
                order.append(text)
            }
        }
        record(&h, "created")
        h.event(page.client, "pwa-navigate", ["url": "https://shop.example/app/home#2"])  // engine: P1
        record(&h, "pwa-navigate")
        let a = h.request(ctl, "navigation.navigateToUrl", ["session": sid, "url": "https://shop.example/app/a"])  // engine
        #expect(a["result"]?["webview"] == "W3", "\(a)")
        record(&h, "navigateToUrl a")
        let b = h.request(ctl, "deeplink.open", ["session": sid, "url": "https://shop.example/app/b"])  // router
        #expect(b["result"]?["item"]?["id"] == "W4", "\(b)")
        record(&h, "deeplink b")
        let d = h.request(ctl, "router.perform", ["session": sid, "action": ["type": "push", "url": "tt://cart"]])  // router: native
        #expect(d["result"]?["action"] == "push", "\(d)")
        record(&h, "push cart")
        let e = h.request(ctl, "navigation.navigateToUrl", ["session": sid, "url": "https://shop.example/app/e"])  // engine
        #expect(e["error"] == nil, "\(e)")
        record(&h, "navigateToUrl e")
        _ = h.request(ctl, "router.perform", ["session": sid, "action": ["type": "push", "url": "https://shop.example/app/f"]])
        record(&h, "push f")
        #expect(order == ["W1", "W2", "N1", "P1", "W3", "W4", "N2", "W5", "W6"], "\(order)")
    }

    // MARK: The edge: formatted when written, parsed where a client sends one

    @Test func formattedIDsParseBackToThemselves() {
        for kind in ItemID.Kind.allCases {
            for n in [1, 9, 10, 99, 1_000, 123_456_789_012_345] {
                let id = ItemID(kind, n)
                #expect(ItemID(parsing: id.description) == id)
                var w = JSONWriter(capacity: 32)
                w.appendQuotedID(id)
                #expect(String(decoding: w.bytes, as: UTF8.self) == "\"\(id.description)\"")
            }
        }
        #expect(ItemID.webview(3).description == "W3" && ItemID.placeholder(2).description == "P2" && ItemID.native(1).description == "N1")
    }

    static let malformed = ["W", "W0x1", "X3", "W-1", "W+1", "W0", "W01", "w3", " W3", "W3 ", "", "W1234567890123456",
                            "W99999999999999999999999999"]

    @Test func malformedIDsDoNotParse() {
        for text in Self.malformed { #expect(ItemID(parsing: text) == nil, "\(text)") }
    }

    @Test func aClaimOfAMalformedIDGetsTheUnknownWebViewError() {
        var h = BridgeHarness()
        let page = h.newPage()
        for text in Self.malformed + ["W99", "P1", "N1"] {
            let (_, r) = h.claim(page.session, text, page.token)
            #expect(r["error"]?["code"] == "unknown-webview", "\(text): \(r)")
            #expect(r["error"]?["message"] == .string("session \(page.session) has no web view \"\(text)\" on its stack"), "\(text)")
        }
    }

    @Test func setParamsOnAMalformedItemGetsTheUnknownItemError() {
        var (h, ctl, page) = BridgeRouterTests.routed()
        let sid = JSONValue.string(page.session)
        let before = h.bridge
        for text in Self.malformed + ["W99"] {
            let r = h.request(ctl, "router.perform", ["session": sid, "action": ["type": "setParams", "params": ["a": "1"], "item": .string(text)]])
            #expect(r["error"]?["code"] == "invalid-params", "\(text): \(r)")
            #expect(r["error"]?["message"] == .string("no item '\(text)' in the navigation tree"), "\(text): \(r)")
        }
        #expect(h.bridge == before)
        let ok = h.request(ctl, "router.perform", ["session": sid, "action": ["type": "setParams", "params": ["a": "1"], "item": "W1"]])
        #expect(ok["result"]?["item"]?["params"]?["a"] == "1", "\(ok)")
    }
}
