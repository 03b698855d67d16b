import PropertyBased
import Testing

@testable import BridgeProtocol

/// Random action sequences over the fixture app: never a crash; a failing action changes
/// nothing; a successful one keeps the tree's invariants and its transitions turn the old
/// tree into the new one.
@Suite struct RouterPropertyTests {
    static let urls = [
        "tt://products/1", "tt://products/2?is_modal=1", "tt://cart", "tt://settings", "tt://account", "os://about",
        "os://home", "https://shop.example/app/products/3", "https://elsewhere.example/x", "tt://nowhere",
        "tt://products/1/reviews", "os://search?q=a",
    ]
    static let stacks: [StackRef?] = [nil, .active, .stack(.modal), .stack(.tab("home")), .stack(.tab("search")), .stack(.tab("nope"))]

    /// Decodes one number into a step: a router action or (-1) the engine's pwa-navigate.
    static func step(_ x: Int) -> RouterAction? {
        let url = RouteTarget.url(urls[(x / 16) % urls.count])
        let stack = stacks[(x / 7) % stacks.count]
        switch x % 16 {
        case 0, 1: return .navigate(url, stack: stack, context: x % 3 == 0 ? ["n": .int(Int64(x))] : nil)
        case 2: return .push(url, stack: stack, context: nil)
        case 3: return .replace(url, stack: stack, context: nil)
        case 4, 5: return .goBack
        case 6: return .pop(count: 1 + (x / 16) % 3, stack: stack)
        case 7: return .popToTop(stack: stack)
        case 8: return .reset([url, .url(urls[(x / 5) % urls.count])], stack: stack)
        case 9: return .resetHome
        case 10: return [.openDrawer, .closeDrawer, .toggleDrawer][(x / 16) % 3]
        case 11: return .selectTab(["home", "search", "account", "nope"][(x / 16) % 4])
        case 12: return .setParams(["k": (x / 16) % 2 == 0 ? "v" : nil], item: (x / 32) % 2 == 0 ? nil : "W1")
        case 13: return .navigate(.route(["product", "cart", "help", "nope"][(x / 16) % 4], params: ["product_id": "9"]), stack: nil, context: nil)
        default: return nil  // pwa-navigate
        }
    }

    /// What the engine's pwa-navigate does to the active stack: a placeholder below the top web view.
    static func pwaNavigate(_ s: inout RouteSession) {
        let id = s.tree.activeStackID
        var items = s.tree[id]!
        guard let top = items.last, top.kind == .webview else { return }
        let p = RouteStackItem(id: s.ids.next(.placeholder), url: top.url, of: top.id)
        items.insert(p, at: items.count - 1)
        s.tree[id] = items
    }

    @Test func randomActionSequencesKeepInvariants() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...9999).array(of: 0...40), Gen.bool) { (xs: [Int], flag: Bool) async throws in
            await Task.yield()  // see EnginePropertyTests.sequencesCoverTheInterestingCases
            let router = RouterFixture.router(nativeProduct: flag, external: flag ? .open : .push, back: flag ? .none : .initialTab, maxDepth: 5)
            var s = try router.makeSession()
            var seenIDs: Set<ItemID> = Set(s.tree.stackIDs.flatMap { s.tree[$0]!.map(\.id) })
            for x in xs {
                guard let action = Self.step(x) else {
                    Self.pwaNavigate(&s)
                    continue
                }
                let before = s
                do {
                    let out = try router.apply(action, on: &s)
                    #expect(s.tree.validate() == nil, "\(action)")
                    #expect(try TreeDiff.apply(out.transitions, to: before.tree) == s.tree, "\(action)")
                    #expect(out.transitions == TreeDiff.diff(before.tree, s.tree))
                    // Removed ids are gone; new ids were never used before (ids are not reused).
                    let now = Set(s.tree.stackIDs.flatMap { s.tree[$0]!.map(\.id) })
                    for id in out.removed { #expect(!now.contains(id), "\(action) removed \(id)") }
                    let before = Set(before.tree.stackIDs.flatMap { before.tree[$0]!.map(\.id) })
                    for id in now.subtracting(before) { #expect(!seenIDs.contains(id), "\(id) reused") }
                    seenIDs.formUnion(now)
                    if out.kind == .external { #expect(out.transitions.isEmpty) }
                } catch {
                    #expect(s == before, "failed \(action) changed the session")
                }
            }
        }
    }
}
