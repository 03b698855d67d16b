import PropertyBased
import Testing

@testable import BridgeProtocol

@Suite struct TreeDiffTests {
    typealias T = RouterFixture

    func item(_ id: String) -> RouteStackItem { T.item(id) }

    /// Checks the expected list and that applying it to `old` gives `new`.
    func check(_ old: NavigationTree, _ new: NavigationTree, _ expected: [Transition], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let got = TreeDiff.diff(old, new)
        #expect(got == expected, sourceLocation: sourceLocation)
        #expect(try TreeDiff.apply(got, to: old) == new, sourceLocation: sourceLocation)
    }

    @Test func identicalTreesHaveNoTransitions() throws {
        let t = T.tree(home: ["W1", "N1"], modal: ["N2"])
        try check(t, t, [])
    }

    @Test func singlePushAndSinglePop() throws {
        try check(T.tree(home: ["W1"]), T.tree(home: ["W1", "N1"]), [.push(stack: .tab("home"), item: PushedItem(index: 1, item: item("N1")))])
        try check(T.tree(home: ["W1", "N1"]), T.tree(home: ["W1"]), [.pop(stack: .tab("home"), item: item("N1"))])
    }

    @Test func twoOperationsOnOneStackAreAChange() throws {
        // pops top first, pushes bottom first
        try check(
            T.tree(home: ["W1", "W2", "W3"]), T.tree(home: ["W1", "N1", "N2"]),
            [.change(stack: .tab("home"), popped: [item("W3"), item("W2")], pushed: [PushedItem(index: 1, item: item("N1")), PushedItem(index: 2, item: item("N2"))])])
        try check(
            T.tree(home: ["W1", "W2", "W3"]), T.tree(home: ["W1"]),
            [.change(stack: .tab("home"), popped: [item("W3"), item("W2")], pushed: [])])
        try check(
            T.tree(home: ["W1"]), T.tree(home: ["W1", "W2", "N1"]),
            [.change(stack: .tab("home"), popped: [], pushed: [PushedItem(index: 1, item: item("W2")), PushedItem(index: 2, item: item("N1"))])])
    }

    @Test func aPlaceholderIsPushedBelowItsWebView() throws {
        // What the engine's pwa-navigate does: W1 → P1 W1.
        try check(T.tree(home: ["W1"]), T.tree(home: ["P1", "W1"]), [.push(stack: .tab("home"), item: PushedItem(index: 0, item: item("P1")))])
    }

    @Test func aMovedItemIsPoppedAndPushedAgain() throws {
        try check(
            T.tree(home: ["W1", "W2", "W3"]), T.tree(home: ["W1", "W3", "W2"]),
            [.change(stack: .tab("home"), popped: [item("W2")], pushed: [PushedItem(index: 2, item: item("W2"))])])
    }

    @Test func changedItemsAreUpdatedAfterTheirStacksPopsAndPushes() throws {
        var new = T.tree(home: ["W1", "W3"])
        new.tabs[0].items[0].params = ["a": "1"]
        try check(
            T.tree(home: ["W1", "W2"]), new,
            [
                .change(stack: .tab("home"), popped: [item("W2")], pushed: [PushedItem(index: 1, item: item("W3"))]),
                .update(stack: .tab("home"), item: new.tabs[0].items[0]),
            ])
    }

    @Test func inactiveBranchesFirstActiveLast() throws {
        // Active: search (new tree). Changes in home, search, account, modal (dismissed).
        let old = T.tree(home: ["W1", "W2"], search: ["W3"], account: ["N1"], modal: ["N2", "N3"], active: 0)
        let new = T.tree(home: ["W1"], search: ["W3", "W4", "N4"], account: ["N1", "N5"], modal: [], active: 1, drawer: true)
        try check(
            old, new,
            [
                .pop(stack: .tab("home"), item: item("W2")),
                .push(stack: .tab("account"), item: PushedItem(index: 1, item: item("N5"))),
                .change(stack: .modal, popped: [item("N3"), item("N2")], pushed: []),
                .change(stack: .tab("search"), popped: [], pushed: [PushedItem(index: 1, item: item("W4")), PushedItem(index: 2, item: item("N4"))]),
                .changeActive(node: "tabs", active: "tab:search"),
                .changeActive(node: "root", active: "tabs"),
                .drawer(open: true),
            ])
    }

    @Test func presentingAModalMakesItTheActiveBranch() throws {
        let old = T.tree(home: ["W1", "W2"], search: ["W3"], active: 1)
        let new = T.tree(home: ["W1"], search: ["W3", "W4"], modal: ["N1"], active: 0)
        try check(
            old, new,
            [
                .pop(stack: .tab("home"), item: item("W2")),
                .push(stack: .tab("search"), item: PushedItem(index: 1, item: item("W4"))),
                .push(stack: .modal, item: PushedItem(index: 0, item: item("N1"))),
                .changeActive(node: "tabs", active: "tab:home"),
                .changeActive(node: "root", active: "modal"),
            ])
    }

    @Test func anItemMovingBetweenStacks() throws {
        try check(
            T.tree(home: ["W1", "N1"], modal: []), T.tree(home: ["W1"], modal: ["N1"]),
            [
                .pop(stack: .tab("home"), item: item("N1")),
                .push(stack: .modal, item: PushedItem(index: 0, item: item("N1"))),
                .changeActive(node: "root", active: "modal"),
            ])
    }

    @Test func applyRejectsTransitionsThatDoNotFit() {
        let t = T.tree(home: ["W1"])
        let bad: [Transition] = [
            .pop(stack: .tab("home"), item: item("W9")),
            .push(stack: .tab("home"), item: PushedItem(index: 5, item: item("W9"))),
            .push(stack: .tab("nope"), item: PushedItem(index: 0, item: item("W9"))),
            .update(stack: .tab("home"), item: item("W9")),
            .changeActive(node: "tabs", active: "tab:nope"),
            .changeActive(node: "root", active: "modal"),
            .changeActive(node: "leaf", active: "x"),
        ]
        for transition in bad {
            #expect(throws: RouterError.self, "\(transition)") { try TreeDiff.apply([transition], to: t) }
        }
    }

    @Test func transitionJSON() {
        #expect(
            Transition.change(stack: .modal, popped: [item("N1")], pushed: [PushedItem(index: 0, item: item("W2"))]).toJSON()
                == [
                    "type": "change", "stack": "modal",
                    "popped": [["id": "N1", "kind": "native", "url": "https://shop.example/app/N1"]],
                    "pushed": [["index": 0, "item": ["id": "W2", "kind": "webview", "url": "https://shop.example/app/W2"]]],
                ])
        #expect(Transition.changeActive(node: "tabs", active: "tab:home").toJSON() == ["type": "changeActive", "node": "tabs", "active": "tab:home"])
        #expect(Transition.drawer(open: true).toJSON() == ["type": "drawer", "open": true])
        #expect(Transition.pop(stack: .tab("a"), item: item("P1")).toJSON()["stack"] == "tab:a")
    }

    // MARK: Properties

    static let pool: [String] = (1...8).map { "W\($0)" } + (1...4).map { "P\($0)" } + (1...4).map { "N\($0)" }

    /// Builds a tree from numbers: each number places one pool item (once) into a tab or the
    /// modal, with or without a parameter; the count picks the active tab and the drawer.
    static func tree(_ xs: [Int]) -> NavigationTree {
        var t = NavigationTree(tabs: [TabStack(name: "a", items: []), TabStack(name: "b", items: []), TabStack(name: "c", items: [])])
        var used: Set<String> = []
        for x in xs {
            let id = pool[x % pool.count]
            guard used.insert(id).inserted else { continue }
            var it = T.item(id)
            if (x / 64) % 2 == 1 { it.params = ["v": "1"] }
            switch (x / pool.count) % 4 {
            case 3: t.modal.append(it)
            case let k: t.tabs[k].items.append(it)
            }
        }
        t.activeTab = xs.count % 3
        t.drawerOpen = xs.count % 2 == 0
        return t
    }

    static let treeInput = Gen.int(in: 0...255).array(of: 0...20)

    @Test func applyingTheDiffGivesTheNewTree() async {
        await propertyCheck(count: 500, input: Self.treeInput, Self.treeInput) { (a: [Int], b: [Int]) async throws in
            let old = Self.tree(a)
            let new = Self.tree(b)
            let transitions = TreeDiff.diff(old, new)
            #expect(try TreeDiff.apply(transitions, to: old) == new)
            Self.checkOrder(transitions, new)
        }
    }

    /// Stack transitions: one pop/push/change per stack, then its updates; stacks other than the
    /// new active one first; then changeActive (tabs before root), then drawer.
    static func checkOrder(_ transitions: [Transition], _ new: NavigationTree) {
        var stacksSeen: [StackID] = []
        var phase = 0  // 0 stacks, 1 tabs, 2 root, 3 drawer
        var lastStructural: StackID?
        for t in transitions {
            switch t {
            case .push(let s, _), .pop(let s, _), .change(let s, _, _):
                #expect(phase == 0)
                #expect(!stacksSeen.contains(s), "one structural transition per stack")
                stacksSeen.append(s)
                lastStructural = s
            case .update(let s, _):
                #expect(phase == 0)
                if lastStructural != s {
                    #expect(!stacksSeen.contains(s), "updates follow their stack's pops and pushes")
                    stacksSeen.append(s)
                    lastStructural = s
                }
            case .changeActive(let node, _):
                let p = node == "tabs" ? 1 : 2
                #expect(phase < p)
                phase = p
            case .drawer:
                #expect(phase < 3)
                phase = 3
            }
        }
        if let i = stacksSeen.firstIndex(of: new.activeStackID) {
            #expect(i == stacksSeen.count - 1, "the active stack comes last")
        }
    }
}
