// The difference between two navigation trees as the ordered transitions a UI applies.

/// An item pushed at a position of a stack (the position it has in the new tree).
public struct PushedItem: Sendable, Equatable {
    public var index: Int
    public var item: RouteStackItem

    public init(index: Int, item: RouteStackItem) {
        self.index = index
        self.item = item
    }

    public func toJSON() -> JSONValue { ["index": .int(Int64(index)), "item": item.toJSON()] }
}

/// One step of a navigation-tree change.
///
/// A stack is a chain (each item the child of the one below it), so pops in post-order are
/// top first and pushes in pre-order are bottom first.
public enum Transition: Sendable, Equatable {
    /// One item put into a stack at `index` (usually the top; a placeholder goes below its
    /// web view).
    case push(stack: StackID, item: PushedItem)
    /// One item removed from a stack.
    case pop(stack: StackID, item: RouteStackItem)
    /// At least two pops/pushes at one stack, to apply as one (e.g. `replace`, `popToTop` over
    /// two screens). `popped` top first, then `pushed` bottom first.
    case change(stack: StackID, popped: [RouteStackItem], pushed: [PushedItem])
    /// An item that stays but changed in place (params, url after a back-swap, title).
    case update(stack: StackID, item: RouteStackItem)
    /// A new active child: `node` `"tabs"` (the selected tab, `active` = `tab:<name>`) or
    /// `"root"` (`active` = `"modal"` when a modal is presented, `"tabs"` when none is).
    case changeActive(node: String, active: String)
    /// The drawer opened or closed.
    case drawer(open: Bool)

    public func toJSON() -> JSONValue {
        switch self {
        case .push(let stack, let pushed):
            return ["type": "push", "stack": .string(stack.description), "index": .int(Int64(pushed.index)), "item": pushed.item.toJSON()]
        case .pop(let stack, let item):
            return ["type": "pop", "stack": .string(stack.description), "item": item.toJSON()]
        case .change(let stack, let popped, let pushed):
            return [
                "type": "change", "stack": .string(stack.description), "popped": .array(popped.map { $0.toJSON() }),
                "pushed": .array(pushed.map { $0.toJSON() }),
            ]
        case .update(let stack, let item):
            return ["type": "update", "stack": .string(stack.description), "item": item.toJSON()]
        case .changeActive(let node, let active):
            return ["type": "changeActive", "node": .string(node), "active": .string(active)]
        case .drawer(let open):
            return ["type": "drawer", "open": .bool(open)]
        }
    }
}

public enum TreeDiff {
    /// The ordered transitions that turn `old` into `new`.
    ///
    /// Order: stack by stack, the inactive ones first (tabs in order, then the modal stack) and
    /// the new tree's active stack last; in each stack its pops (top first) and pushes (bottom
    /// first) — one `pop` or `push`, or one `change` when there are two or more — then the
    /// `update`s of items that stayed (bottom first). Then `changeActive` for the tabs, then
    /// for the root, then `drawer`.
    ///
    /// Items are identified by id. The items a stack keeps are the longest run of common ids in
    /// the same order; the others are popped and pushed (so a moved item is popped and pushed
    /// again). Both trees must have the same tabs.
    public static func diff(_ old: NavigationTree, _ new: NavigationTree) -> [Transition] {
        var order = new.stackIDs
        let active = new.activeStackID
        order.removeAll { $0 == active }
        order.append(active)

        var out: [Transition] = []
        for stack in order {
            out += diffStack(stack, old[stack] ?? [], new[stack] ?? [])
        }
        if old.tabs.indices.contains(old.activeTab), old.activeTabName != new.activeTabName {
            out.append(.changeActive(node: "tabs", active: StackID.tab(new.activeTabName).description))
        }
        if old.modal.isEmpty != new.modal.isEmpty {
            out.append(.changeActive(node: "root", active: new.modal.isEmpty ? "tabs" : "modal"))
        }
        if old.drawerOpen != new.drawerOpen {
            out.append(.drawer(open: new.drawerOpen))
        }
        return out
    }

    static func diffStack(_ stack: StackID, _ old: [RouteStackItem], _ new: [RouteStackItem]) -> [Transition] {
        var newIndex: [ItemID: Int] = [:]
        for (i, item) in new.enumerated() { newIndex[item.id] = i }
        // Old items also in the new stack, in old order, as their new positions; the kept ones
        // are a longest increasing subsequence of those positions.
        let common = old.compactMap { newIndex[$0.id] }
        let kept = Set(longestIncreasingSubsequence(common).map { new[$0].id })
        let popped = old.reversed().filter { !kept.contains($0.id) }
        let pushed = new.enumerated().filter { !kept.contains($0.element.id) }.map { PushedItem(index: $0.offset, item: $0.element) }

        var out: [Transition] = []
        switch (popped.count, pushed.count) {
        case (0, 0): break
        case (1, 0): out.append(.pop(stack: stack, item: popped[0]))
        case (0, 1): out.append(.push(stack: stack, item: pushed[0]))
        default: out.append(.change(stack: stack, popped: popped, pushed: pushed))
        }
        var oldByID: [ItemID: RouteStackItem] = [:]
        for item in old { oldByID[item.id] = item }
        for item in new where kept.contains(item.id) && oldByID[item.id] != item {
            out.append(.update(stack: stack, item: item))
        }
        return out
    }

    /// Indices (into `values`' values, i.e. the values themselves) of one longest strictly
    /// increasing subsequence. O(n log n).
    static func longestIncreasingSubsequence(_ values: [Int]) -> [Int] {
        guard !values.isEmpty else { return [] }
        var tails: [Int] = []  // positions in `values` of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (i, v) in values.enumerated() {
            var lo = 0
            var hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if values[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var out: [Int] = []
        var k = tails.last!
        while k >= 0 {
            out.append(values[k])
            k = previous[k]
        }
        return out.reversed()
    }

    /// Applies transitions in order (what a UI does). Errors name the transition that does not
    /// fit the tree (an unknown stack, tab or item, an index out of range); the input tree is
    /// not changed.
    public static func apply(_ transitions: [Transition], to tree: NavigationTree) throws(RouterError) -> NavigationTree {
        var t = tree
        for (n, transition) in transitions.enumerated() {
            func fail(_ why: String) -> RouterError { .invalidParams("transition \(n) (\(transition.toJSON().jsonString)): \(why)") }
            func items(_ stack: StackID) throws(RouterError) -> [RouteStackItem] {
                guard let items = t[stack] else { throw fail("no stack \(stack)") }
                return items
            }
            func remove(_ item: RouteStackItem, from list: inout [RouteStackItem]) throws(RouterError) {
                guard let i = list.firstIndex(where: { $0.id == item.id }) else { throw fail("no item \(item.id) in the stack") }
                list.remove(at: i)
            }
            func insert(_ pushed: PushedItem, into list: inout [RouteStackItem]) throws(RouterError) {
                guard pushed.index >= 0, pushed.index <= list.count else { throw fail("index \(pushed.index) out of range") }
                list.insert(pushed.item, at: pushed.index)
            }
            switch transition {
            case .push(let stack, let pushed):
                var list = try items(stack)
                try insert(pushed, into: &list)
                t[stack] = list
            case .pop(let stack, let item):
                var list = try items(stack)
                try remove(item, from: &list)
                t[stack] = list
            case .change(let stack, let popped, let pushed):
                var list = try items(stack)
                for item in popped { try remove(item, from: &list) }
                for p in pushed.sorted(by: { $0.index < $1.index }) { try insert(p, into: &list) }
                t[stack] = list
            case .update(let stack, let item):
                var list = try items(stack)
                guard let i = list.firstIndex(where: { $0.id == item.id }) else { throw fail("no item \(item.id) in the stack") }
                list[i] = item
                t[stack] = list
            case .changeActive(let node, let active):
                switch node {
                case "tabs":
                    guard case .tab(let name)? = StackID(active), let i = t.tabIndex(name) else { throw fail("no tab \(active)") }
                    t.activeTab = i
                case "root":
                    // Derived from the modal stack; check that it agrees.
                    guard active == (t.modal.isEmpty ? "tabs" : "modal") else { throw fail("the root's active child is not \(active)") }
                default:
                    throw fail("no node \(node)")
                }
            case .drawer(let open):
                t.drawerOpen = open
            }
        }
        return t
    }
}
