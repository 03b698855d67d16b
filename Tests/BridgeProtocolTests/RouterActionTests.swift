import Testing

@testable import BridgeProtocol

@Suite struct RouterActionTests {
    let router = RouterFixture.router()

    /// A session with a hand-built tree; new ids start at 100.
    func session(_ tree: NavigationTree) -> RouteSession {
        var ids = ItemIDAllocator()
        ids.nextWebview = 100
        ids.nextPlaceholder = 100
        ids.nextNative = 100
        return RouteSession(tree: tree, ids: ids)
    }

    func fresh() throws -> RouteSession { try router.makeSession() }

    @discardableResult
    func perform(_ action: RouterAction, _ s: inout RouteSession) throws -> RouterOutcome {
        let before = s.tree
        let out = try router.apply(action, on: &s)
        // Every outcome's transitions turn the old tree into the new one.
        #expect(try TreeDiff.apply(out.transitions, to: before) == s.tree)
        #expect(out.tree == s.tree)
        #expect(s.tree.validate() == nil)
        return out
    }

    func nav(_ url: String, stack: StackRef? = nil, context: JSONValue? = nil) -> RouterAction {
        .navigate(.url(url), stack: stack, context: context)
    }

    // MARK: Session

    @Test func newSessionHasEveryTabRoot() throws {
        let s = try fresh()
        #expect(s.tree.tabs.map(\.name) == ["home", "search", "account"])
        #expect(s.tree.activeTab == 0)
        #expect(s.tree.tabs[0].items == [
            RouteStackItem(id: "W1", url: "https://shop.example/app/home", route: "home", title: "Home")
        ])
        #expect(RouterFixture.ids(s.tree.tabs[1].items) == ["W2"])
        #expect(s.tree.tabs[2].items[0].kind == .native)
        #expect(s.tree.tabs[2].items[0].screen == "AccountScreen")
        #expect(s.tree.tabs[2].items[0].id == "N1")
        #expect(s.tree.modal.isEmpty)
        #expect(s.tree.activeStackID == .tab("home"))

        let fromPage = try router.makeSession(rootURL: "http://127.0.0.1:8787/app/products/3?x=1")
        #expect(fromPage.tree.tabs[0].items[0].id == "N1")  // the product is native
        #expect(fromPage.tree.tabs[0].items[0].params == ["product_id": "3", "x": "1"])
        #expect(fromPage.tree.tabs[2].items[0].id == "N2")
    }

    @Test func sessionWithoutTabsHasOneMainTab() throws {
        let r = try Router(config: RouterConfig(webBase: "http://127.0.0.1:8787/app"))
        let s = try r.makeSession(rootURL: "http://127.0.0.1:8787/app/index.html")
        #expect(s.tree.tabs.map(\.name) == ["main"])
        #expect(s.tree.tabs[0].items == [RouteStackItem(id: "W1", url: "http://127.0.0.1:8787/app/index.html")])
        #expect(try r.makeSession().tree.tabs[0].items[0].url == "http://127.0.0.1:8787/app/")
    }

    // MARK: navigate / push

    @Test func navigatePushesOnTheRoutesTab() throws {
        var s = try fresh()
        let out = try perform(nav("tt://products/42", context: ["from": "banner"]), &s)
        #expect(out.kind == .push)
        let n = RouteStackItem(
            id: "N2", url: "tt://products/42", screen: "ProductScreen", route: "product",
            params: ["product_id": "42"], title: "Product", context: ["from": "banner"])
        #expect(out.item == n)
        #expect(RouterFixture.ids(s.tree.tabs[0].items) == ["W1", "N2"])
        #expect(out.transitions == [.push(stack: .tab("home"), item: PushedItem(index: 1, item: n))])
    }

    @Test func navigateFromAnotherTabSelectsTheRoutesTab() throws {
        var s = try fresh()
        try perform(.selectTab("search"), &s)
        let out = try perform(nav("tt://products/42"), &s)
        #expect(s.tree.activeTabName == "home")
        #expect(out.transitions == [
            .push(stack: .tab("home"), item: PushedItem(index: 1, item: out.item!)),
            .changeActive(node: "tabs", active: "tab:home"),
        ])
        // A route without a tab goes onto the active stack.
        try perform(.selectTab("search"), &s)
        let reviews = try perform(nav("tt://products/42/reviews"), &s)
        #expect(s.tree.activeTabName == "search")
        #expect(reviews.item?.kind == .webview)
        #expect(RouterFixture.ids(s.tree.tabs[1].items) == ["W2", "W3"])
        // An explicit stack wins over the route's tab.
        let explicit = try perform(nav("tt://products/9", stack: .stack(.tab("account"))), &s)
        #expect(RouterFixture.ids(s.tree.tabs[2].items) == ["N1", explicit.item!.id.description])
        #expect(s.tree.activeTabName == "account")
    }

    @Test func modalRoutePresentsTheModalStack() throws {
        var s = try fresh()
        let out = try perform(nav("tt://cart"), &s)
        #expect(s.tree.activeStackID == .modal)
        #expect(RouterFixture.ids(s.tree.modal) == ["N2"])
        #expect(out.transitions == [
            .push(stack: .modal, item: PushedItem(index: 0, item: out.item!)),
            .changeActive(node: "root", active: "modal"),
        ])
        // Links inside the modal (no tab of their own) stay in it.
        try perform(nav("tt://products/1/reviews"), &s)
        #expect(RouterFixture.ids(s.tree.modal) == ["N2", "W3"])
        #expect(s.tree.activeStack.last?.id == "W3")
    }

    @Test func navigateToATabRouteDismissesTheModalFirst() throws {
        var s = try fresh()
        try perform(nav("tt://cart"), &s)
        try perform(nav("tt://products/1/reviews"), &s)  // modal: N2 W3
        let out = try perform(nav("tt://products/42"), &s)
        #expect(s.tree.modal.isEmpty)
        #expect(out.removed == ["W3", "N2"])
        let cart = RouteStackItem(id: "N2", url: "tt://cart", screen: "CartScreen", route: "cart")
        let reviews = RouteStackItem(
            id: "W3", url: "https://shop.example/app/products/1/reviews", route: "product_reviews",
            params: ["product_id": "1"])
        #expect(out.transitions == [
            .change(stack: .modal, popped: [reviews, cart], pushed: []),  // inactive branch first
            .push(stack: .tab("home"), item: PushedItem(index: 1, item: out.item!)),  // the active one last
            .changeActive(node: "root", active: "tabs"),
        ])
    }

    @Test func navigateToAScreenAlreadyInTheStackPopsBackToIt() throws {
        var s = try fresh()
        try perform(nav("tt://products/42?ref=a"), &s)  // N2
        try perform(nav("tt://products/42/reviews"), &s)  // W3 (active stack: home)
        try perform(nav("tt://products/7"), &s)  // N3
        #expect(RouterFixture.ids(s.tree.tabs[0].items) == ["W1", "N2", "W3", "N3"])
        let out = try perform(nav("tt://products/42?ref=b&x=1", context: ["k": 1]), &s)
        #expect(out.kind == .popTo)
        #expect(out.removed == ["N3", "W3"])
        #expect(RouterFixture.ids(s.tree.tabs[0].items) == ["W1", "N2"])
        #expect(s.tree.tabs[0].items[1].params == ["product_id": "42", "ref": "b", "x": "1"])
        #expect(s.tree.tabs[0].items[1].context == ["k": 1])
        guard case .change(.tab("home"), let popped, let pushed) = out.transitions[0] else {
            Issue.record("\(out.transitions)")
            return
        }
        #expect(RouterFixture.ids(popped) == ["N3", "W3"])
        #expect(pushed.isEmpty)
        #expect(out.transitions[1] == .update(stack: .tab("home"), item: s.tree.tabs[0].items[1]))
        #expect(out.transitions.count == 2)
        // `push` stacks a second copy instead.
        let again = try perform(.push(.url("tt://products/42"), stack: nil, context: nil), &s)
        #expect(again.kind == .push)
        #expect(RouterFixture.ids(s.tree.tabs[0].items) == ["W1", "N2", "N4"])
        // Plain pages (no route) are the same screen when the URL is the same.
        try perform(nav("os://about"), &s)
        try perform(nav("os://contact"), &s)
        let back = try perform(nav("os://about"), &s)
        #expect(back.kind == .popTo)
        #expect(s.tree.activeStack.last?.url == "https://shop.example/app/about")
    }

    @Test func navigateByRouteName() throws {
        var s = try fresh()
        let out = try perform(.navigate(.route("product", params: ["product_id": "5", "ref": "x"]), stack: nil, context: nil), &s)
        #expect(out.item?.params == ["product_id": "5", "ref": "x"])
        #expect(out.item?.url == "tt://products/5?ref=x")
        #expect(throws: RouterError.self) { try router.apply(.navigate(.route("product", params: [:]), stack: nil, context: nil), on: &s) }
    }

    @Test func externalLinksAreNeverStacked() throws {
        var s = try fresh()
        let before = s
        let out = try perform(nav("https://elsewhere.example/x"), &s)
        #expect(out.kind == .external)
        #expect(out.externalURL == "https://elsewhere.example/x")
        #expect(out.transitions.isEmpty)
        #expect(s == before)
        // Policy push: a web view.
        let pushing = RouterFixture.router(external: .push)
        var s2 = try pushing.makeSession()
        let pushed = try pushing.apply(nav("https://elsewhere.example/x"), on: &s2)
        #expect(pushed.item?.url == "https://elsewhere.example/x")
        // Policy deny: an error, nothing changes.
        let denying = RouterFixture.router(external: .deny)
        var s3 = try denying.makeSession()
        let before3 = s3
        #expect(throws: RouterError.self) { try denying.apply(nav("https://elsewhere.example/x"), on: &s3) }
        #expect(s3 == before3)
    }

    @Test func failuresChangeNothing() throws {
        var s = try fresh()
        try perform(nav("tt://cart"), &s)
        let before = s
        for action: RouterAction in [
            nav("tt://nowhere"), nav("ftp://x/y"), .selectTab("nope"), .setParams(["a": "1"], item: "W77"),
            .pop(count: 0, stack: nil), .popToTop(stack: .stack(.tab("nope"))),
            .reset([.url("tt://products/1"), .url("https://elsewhere.example/")], stack: nil),
            .reset([], stack: nil),
        ] {
            #expect(throws: RouterError.self, "\(action)") { try router.apply(action, on: &s) }
            #expect(s == before)
        }
    }

    @Test func stackDepthLimit() throws {
        let small = RouterFixture.router(maxDepth: 2)
        var s = try small.makeSession()
        _ = try small.apply(.push(.url("os://a"), stack: nil, context: nil), on: &s)
        let before = s
        #expect(throws: RouterError(.limitExceeded, "tab:home would hold 3 items; the maximum is 2")) {
            try small.apply(.push(.url("os://b"), stack: nil, context: nil), on: &s)
        }
        #expect(s == before)
        #expect(throws: RouterError.self) {
            try small.apply(.reset([.url("os://a"), .url("os://b"), .url("os://c")], stack: nil), on: &s)
        }
        #expect(s == before)
    }

    // MARK: goBack

    @Test func goBackFollowsTheContractsBackAlgorithm() throws {
        // The contract's example: P1 W1 W2 P2 P3 W3 → … → W1 → W1 (none).
        var s = session(RouterFixture.tree(home: ["P1", "W1", "W2", "P2", "P3", "W3"]))
        s.tree.tabs[0].items[0].of = "W1"
        s.tree.tabs[0].items[3].of = "W3"
        s.tree.tabs[0].items[4].of = "W3"
        var seen: [[String]] = []
        var kinds: [RouterOutcome.Kind] = []
        for _ in 0..<6 {
            let out = try perform(.goBack, &s)
            kinds.append(out.kind)
            seen.append(RouterFixture.ids(s.tree.tabs[0].items))
        }
        #expect(seen == [["P1", "W1", "W2", "P2", "W3"], ["P1", "W1", "W2", "W3"], ["P1", "W1", "W2"], ["P1", "W1"], ["W1"], ["W1"]])
        #expect(kinds == [.swap, .swap, .pop, .pop, .swap, .none])
    }

    @Test func backSwapGivesTheWebViewThePlaceholdersURL() throws {
        var s = session(RouterFixture.tree(home: ["W1", "P1", "W2"]))
        s.tree.tabs[0].items[1].url = "https://shop.example/app/list?page=2"
        let out = try perform(.goBack, &s)
        #expect(out.kind == .swap)
        #expect(out.removed == ["P1"])
        let w2 = s.tree.tabs[0].items[1]
        #expect(w2.url == "https://shop.example/app/list?page=2")
        #expect(out.transitions == [
            .pop(stack: .tab("home"), item: RouterFixture.item("P1", "https://shop.example/app/list?page=2")),
            .update(stack: .tab("home"), item: w2),
        ])
    }

    @Test func goBackClosesTheDrawerFirstThenDismissesTheModal() throws {
        var s = session(RouterFixture.tree(home: ["W1", "N1"], modal: ["N2"], drawer: true))
        let first = try perform(.goBack, &s)
        #expect(first.kind == .drawer)
        #expect(first.transitions == [.drawer(open: false)])
        let second = try perform(.goBack, &s)
        #expect(second.kind == .dismiss)
        #expect(second.removed == ["N2"])
        #expect(second.transitions == [.pop(stack: .modal, item: RouterFixture.item("N2")), .changeActive(node: "root", active: "tabs")])
        let third = try perform(.goBack, &s)
        #expect(third.kind == .pop)
        #expect(third.transitions == [.pop(stack: .tab("home"), item: RouterFixture.item("N1"))])
    }

    @Test(arguments: [BackBehavior.none, .initialTab])
    func goBackOnATabRoot(behavior: BackBehavior) throws {
        let r = RouterFixture.router(back: behavior)
        var s = try r.makeSession()
        _ = try r.apply(.selectTab("search"), on: &s)
        let out = try r.apply(.goBack, on: &s)
        if behavior == .none {
            #expect(out.kind == .none)
            #expect(out.transitions.isEmpty)
            #expect(s.tree.activeTabName == "search")
        } else {
            #expect(out.kind == .selectTab)
            #expect(out.transitions == [.changeActive(node: "tabs", active: "tab:home")])
            #expect(s.tree.activeTabName == "home")
        }
        // On the initial tab's root, nothing either way.
        _ = try r.apply(.selectTab("home"), on: &s)
        #expect(try r.apply(.goBack, on: &s).kind == .none)
    }

    // MARK: pop, popToTop, replace, reset

    @Test func popCountsScreensAndKeepsTheTabRoot() throws {
        var s = session(RouterFixture.tree(home: ["P1", "W1", "N1", "P2", "W2"]))
        let out = try perform(.pop(count: 1, stack: nil), &s)
        #expect(out.removed == ["W2", "P2"])  // a web view goes with its placeholders
        #expect(out.transitions == [.change(stack: .tab("home"), popped: [RouterFixture.item("W2"), RouterFixture.item("P2")], pushed: [])])
        let more = try perform(.pop(count: 5, stack: nil), &s)
        #expect(more.removed == ["N1"])
        #expect(RouterFixture.ids(s.tree.tabs[0].items) == ["P1", "W1"])
        #expect(try perform(.pop(count: 1, stack: nil), &s).kind == .none)
    }

    @Test func popOnTheModalDismissesItWhenEmptied() throws {
        var s = session(RouterFixture.tree(home: ["W1"], modal: ["N1", "W2"]))
        let out = try perform(.pop(count: 3, stack: nil), &s)
        #expect(out.kind == .dismiss)
        #expect(out.removed == ["W2", "N1"])
        #expect(out.transitions == [
            .change(stack: .modal, popped: [RouterFixture.item("W2"), RouterFixture.item("N1")], pushed: []),
            .changeActive(node: "root", active: "tabs"),
        ])
    }

    @Test func popAnInactiveStackLeavesTheSelection() throws {
        var s = session(RouterFixture.tree(home: ["W1"], search: ["W2", "W3"], modal: ["N1"]))
        let out = try perform(.pop(count: 1, stack: .stack(.tab("search"))), &s)
        #expect(out.transitions == [.pop(stack: .tab("search"), item: RouterFixture.item("W3"))])
        #expect(s.tree.activeStackID == .modal)
    }

    @Test func popToTopKeepsTheFirstScreen() throws {
        var s = session(RouterFixture.tree(home: ["P1", "W1", "W2", "P2", "P3", "W3"]))
        let out = try perform(.popToTop(stack: nil), &s)
        #expect(out.removed == ["W3", "P3", "P2", "W2"])
        #expect(RouterFixture.ids(s.tree.tabs[0].items) == ["P1", "W1"])
        #expect(out.transitions == [
            .change(stack: .tab("home"), popped: ["W3", "P3", "P2", "W2"].map { RouterFixture.item($0) }, pushed: [])
        ])
        #expect(try perform(.popToTop(stack: nil), &s).kind == .none)
    }

    @Test func replaceSwapsTheTopScreen() throws {
        var s = session(RouterFixture.tree(home: ["W1", "P1", "W2"]))
        let out = try perform(.replace(.url("tt://products/1"), stack: nil, context: nil), &s)
        #expect(out.kind == .replace)
        #expect(out.removed == ["W2", "P1"])
        #expect(RouterFixture.ids(s.tree.tabs[0].items) == ["W1", "N100"])
        #expect(out.transitions == [
            .change(stack: .tab("home"), popped: [RouterFixture.item("W2"), RouterFixture.item("P1")], pushed: [PushedItem(index: 1, item: out.item!)])
        ])
        // The root can be replaced too.
        var root = session(RouterFixture.tree(home: ["W1"]))
        let r = try perform(.replace(.url("os://landing"), stack: nil, context: nil), &root)
        #expect(RouterFixture.ids(root.tree.tabs[0].items) == [r.item!.id.description])
        // An empty modal stack cannot be replaced in.
        #expect(throws: RouterError.self) { try router.apply(.replace(.url("os://x"), stack: .stack(.modal), context: nil), on: &root) }
    }

    @Test func resetReplacesAStack() throws {
        var s = session(RouterFixture.tree(home: ["W1", "N1"], search: ["W2", "W3"], modal: ["N2"]))
        let out = try perform(.reset([.url("os://search"), .url("tt://products/3")], stack: .stack(.tab("search"))), &s)
        #expect(out.kind == .reset)
        #expect(out.removed == ["N2", "W3", "W2"])
        #expect(RouterFixture.ids(s.tree.tabs[1].items) == ["W100", "N100"])
        #expect(s.tree.activeStackID == .tab("search"))
        #expect(out.transitions.count == 4)
        #expect(out.transitions[0] == .pop(stack: .modal, item: RouterFixture.item("N2")))
        guard case .change(.tab("search"), let popped, let pushed) = out.transitions[1] else {
            Issue.record("\(out.transitions)")
            return
        }
        #expect(RouterFixture.ids(popped) == ["W3", "W2"])
        #expect(pushed.map(\.index) == [0, 1])
        #expect(out.transitions[2] == .changeActive(node: "tabs", active: "tab:search"))
        #expect(out.transitions[3] == .changeActive(node: "root", active: "tabs"))
    }

    @Test func resetHomeRestoresTheStart() throws {
        var s = session(
            RouterFixture.tree(home: ["W1", "N1"], search: ["W2", "W3"], account: ["N2"], modal: ["N3"], active: 1, drawer: true))
        let out = try perform(.resetHome, &s)
        #expect(out.kind == .reset)
        #expect(out.removed == ["N3", "N1", "W3"])
        #expect(s.tree == RouterFixture.tree(home: ["W1"], search: ["W2"], account: ["N2"]))
        // Inactive branches first (search, then the modal), the active one (home) last.
        #expect(out.transitions == [
            .pop(stack: .tab("search"), item: RouterFixture.item("W3")),
            .pop(stack: .modal, item: RouterFixture.item("N3")),
            .pop(stack: .tab("home"), item: RouterFixture.item("N1")),
            .changeActive(node: "tabs", active: "tab:home"),
            .changeActive(node: "root", active: "tabs"),
            .drawer(open: false),
        ])
    }

    // MARK: setParams, drawer, tabs

    @Test func setParamsMergesNewValuesWin() throws {
        var s = try fresh()
        try perform(nav("tt://products/42?color=red&size=M"), &s)
        let out = try perform(.setParams(["color": "blue", "size": nil, "qty": "2"], item: nil), &s)
        #expect(out.item?.params == ["product_id": "42", "color": "blue", "qty": "2"])
        #expect(out.transitions == [.update(stack: .tab("home"), item: out.item!)])
        let other = try perform(.setParams(["q": "shoes"], item: "W2"), &s)
        #expect(other.item?.id == "W2")
        #expect(s.tree.tabs[1].items[0].params == ["q": "shoes"])
        #expect(other.transitions == [.update(stack: .tab("search"), item: s.tree.tabs[1].items[0])])
    }

    @Test func drawerActions() throws {
        var s = try fresh()
        #expect(try perform(.openDrawer, &s).transitions == [.drawer(open: true)])
        #expect(try perform(.openDrawer, &s).kind == .none)
        #expect(try perform(.toggleDrawer, &s).transitions == [.drawer(open: false)])
        #expect(try perform(.closeDrawer, &s).transitions.isEmpty)
        #expect(try perform(.toggleDrawer, &s).transitions == [.drawer(open: true)])
        // Navigating closes it.
        let out = try perform(nav("tt://products/1"), &s)
        #expect(out.transitions.last == .drawer(open: false))
        #expect(!s.tree.drawerOpen)
    }

    @Test func selectTabDismissesTheModal() throws {
        var s = session(RouterFixture.tree(home: ["W1"], modal: ["N1"], drawer: true))
        let out = try perform(.selectTab("account"), &s)
        #expect(out.kind == .selectTab)
        #expect(out.removed == ["N1"])
        #expect(out.transitions == [
            .pop(stack: .modal, item: RouterFixture.item("N1")),
            .changeActive(node: "tabs", active: "tab:account"),
            .changeActive(node: "root", active: "tabs"),
            .drawer(open: false),
        ])
        #expect(out.item?.id == "N90")
    }

    // MARK: JSON

    @Test func outcomeJSON() throws {
        var s = try fresh()
        let out = try perform(nav("tt://products/42"), &s)
        let json = out.toJSON()
        #expect(json["action"] == "push")
        #expect(json["removed"] == [])
        #expect(json["item"]?["id"] == "N2")
        #expect(json["route"]?["screen"] == ["kind": "native", "screen": "ProductScreen"])
        #expect(json["external"] == .null)
        #expect(json["stack"]?.arrayValue?.count == 2)
        #expect(json["tree"]?["active"] == "tab:home")
        #expect(json["tree"]?["modal"] == .null)
        #expect(
            json["transitions"]
                == [
                    [
                        "type": "push", "stack": "tab:home", "index": 1,
                        "item": [
                            "id": "N2", "kind": "native", "url": "tt://products/42", "screen": "ProductScreen", "route": "product",
                            "params": ["product_id": "42"], "title": "Product",
                        ],
                    ]
                ])
    }
}

