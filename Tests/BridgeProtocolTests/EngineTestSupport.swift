import Testing
@testable import BridgeProtocol

// Shared helpers of the engine tests: a clocked harness, named starting states, failure checks
// and the structural invariants every reachable state must satisfy.

/// Short names for the ids and timers the engine tests use (`W1`, `P2`, `N1`, `T3`), as static
/// and instance members so that suites, their static tables and fixtures read them unqualified
/// (and without module-wide globals that other test files could collide with).
protocol EngineIDs {}

extension EngineIDs {
    static var W1: ItemID { ItemID.webview(1) }
    var W1: ItemID { ItemID.webview(1) }
    static var W2: ItemID { ItemID.webview(2) }
    var W2: ItemID { ItemID.webview(2) }
    static var W3: ItemID { ItemID.webview(3) }
    var W3: ItemID { ItemID.webview(3) }
    static var W4: ItemID { ItemID.webview(4) }
    var W4: ItemID { ItemID.webview(4) }
    static var W9: ItemID { ItemID.webview(9) }
    var W9: ItemID { ItemID.webview(9) }
    static var P1: ItemID { ItemID.placeholder(1) }
    var P1: ItemID { ItemID.placeholder(1) }
    static var P2: ItemID { ItemID.placeholder(2) }
    var P2: ItemID { ItemID.placeholder(2) }
    static var P3: ItemID { ItemID.placeholder(3) }
    var P3: ItemID { ItemID.placeholder(3) }
    static var P4: ItemID { ItemID.placeholder(4) }
    var P4: ItemID { ItemID.placeholder(4) }
    static var N1: ItemID { ItemID.native(1) }
    var N1: ItemID { ItemID.native(1) }
    static var N2: ItemID { ItemID.native(2) }
    var N2: ItemID { ItemID.native(2) }
    static var T1: TimerToken { TimerToken(1) }
    var T1: TimerToken { TimerToken(1) }
    static var T2: TimerToken { TimerToken(2) }
    var T2: TimerToken { TimerToken(2) }
    static var T3: TimerToken { TimerToken(3) }
    var T3: TimerToken { TimerToken(3) }
    static var T4: TimerToken { TimerToken(4) }
    var T4: TimerToken { TimerToken(4) }
    static var T5: TimerToken { TimerToken(5) }
    var T5: TimerToken { TimerToken(5) }
}

/// An engine with a clock. Every step advances the clock (10 ms unless told) before the input.
struct EngineHarness {
    var engine: SessionEngine
    /// Microseconds.
    var now: Int64 = 0

    init(_ configuration: EngineConfiguration = EngineConfiguration()) {
        engine = SessionEngine(configuration: configuration)
    }

    @discardableResult
    mutating func step(_ input: SessionInput, afterMs: Int64 = 10) -> [EngineOutput] {
        now += afterMs * 1000
        return engine.outputs(input, at: now)
    }

    @discardableResult
    mutating func step(_ input: SessionInput, afterMicroseconds: Int64) -> [EngineOutput] {
        now += afterMicroseconds
        return engine.outputs(input, at: now)
    }

    var ids: String { engine.ids }
    var rendering: String { engine.rendering }
}

/// Named starting states. Pages are connected and the session is multi-tab unless the name says
/// otherwise; no foreground is up unless the name says so.
enum EngineFixture: String, CaseIterable, Sendable, CustomTestStringConvertible, EngineIDs {
    /// A new engine, no root yet.
    case empty
    /// `W1(*C)`.
    case root
    /// `W1(*C)~`: the root web view waits for its page.
    case rootNoPage
    /// `P1 W1(*P)` with a blank foreground over W1 (timer T1), shown at 20 ms.
    case pwaUp
    /// `P1 W1(*P)`, the foreground of T1 removed by `pwa-rendered`.
    case pwaDone
    /// `P1 W1(*P)`, the foreground of T1 removed by its timer.
    case pwaTimedOut
    /// `W1(*C) W2(*C)`.
    case twoViews
    /// `W1(*C)`: W2 was pushed and popped again.
    case afterPop
    /// `W1(*C) N1`.
    case native
    /// `P1 W1(*P) W2(*C) P2 P3 W3(*P)`, the seed's diagram, every page connected.
    case seed
    /// `P1 W1(*P) W2(*C) P2 W3(*P)`: one back from `seed`, the placeholder foreground up (T4).
    case seedSwapUp
    /// `P1 P2 W1(*P)` at `maxStackDepth` 3.
    case full
    /// `W1(*C)`, then the session closed.
    case closed

    var testDescription: String { rawValue }

    static let fullConfiguration = EngineConfiguration(foregroundTimeoutMs: 1000, maxStackDepth: 3)

    func make() -> EngineHarness {
        var h = EngineHarness(self == .full ? Self.fullConfiguration : EngineConfiguration())
        switch self {
        case .empty:
            break
        case .root:
            h.step(.createRoot(url: "http://app/", token: "t1", connected: true))
        case .rootNoPage:
            h.step(.createRoot(url: "http://app/", token: "t1", connected: false))
        case .pwaUp:
            h = EngineFixture.root.make()
            h.step(.pwaNavigate(from: W1, url: "http://app/a", title: "A"))
        case .pwaDone:
            h = EngineFixture.pwaUp.make()
            h.step(.pwaRendered(from: W1))
        case .pwaTimedOut:
            h = EngineFixture.pwaUp.make()
            h.step(.timerFired(T1), afterMs: 1000)
        case .twoViews:
            h = EngineFixture.root.make()
            h.step(.navigateToUrl(url: "http://app/b", token: "t2", requester: W1, singleTab: false))
            h.step(.pageConnected(W2, url: nil))
        case .afterPop:
            h = EngineFixture.twoViews.make()
            h.step(.back(requester: nil, singleTab: false))
        case .native:
            h = EngineFixture.root.make()
            h.step(.pushNative(url: "tt://settings", requester: W1))
        case .seed:
            h = EngineFixture.root.make()
            h.step(.pwaNavigate(from: W1, url: "http://app/a", title: nil))
            h.step(.pwaRendered(from: W1))
            h.step(.navigateToUrl(url: "http://app/classic", token: "t2", requester: W1, singleTab: false))
            h.step(.pageConnected(W2, url: nil))
            h.step(.navigateToUrl(url: "http://app/b", token: "t3", requester: W2, singleTab: false))
            h.step(.pageConnected(W3, url: nil))
            h.step(.pwaNavigate(from: W3, url: "http://app/c", title: nil))
            h.step(.pwaRendered(from: W3))
            h.step(.pwaNavigate(from: W3, url: "http://app/d", title: nil))
            h.step(.pwaRendered(from: W3))
        case .seedSwapUp:
            h = EngineFixture.seed.make()
            h.step(.back(requester: nil, singleTab: false))
        case .full:
            h.step(.createRoot(url: "http://app/", token: "t1", connected: true))
            h.step(.pwaNavigate(from: W1, url: "http://app/a", title: nil))
            h.step(.pwaRendered(from: W1))
            h.step(.pwaNavigate(from: W1, url: "http://app/b", title: nil))
            h.step(.pwaRendered(from: W1))
        case .closed:
            h = EngineFixture.root.make()
            h.step(.close(reason: "closed"))
        }
        return h
    }
}

/// Which error is expected; messages are free text and are not compared.
enum EngineErrorMatch: Sendable, Equatable, CustomStringConvertible {
    case unknownWebview(ItemID)
    case conflict
    case limitExceeded
    case staleTimer(TimerToken)
    case closed

    func matches(_ error: EngineError) -> Bool {
        switch (self, error) {
        case (.unknownWebview(let a), .unknownWebview(let b)): a == b
        case (.conflict, .conflict): true
        case (.limitExceeded, .limitExceeded): true
        case (.staleTimer(let a), .staleTimer(let b)): a == b
        case (.closed, .closed): true
        default: false
        }
    }

    /// The protocol error code the host will send.
    var code: String {
        switch self {
        case .unknownWebview: "unknown-webview"
        case .conflict, .staleTimer: "conflict"
        case .limitExceeded: "limit-exceeded"
        case .closed: "unknown-session"
        }
    }

    var description: String {
        switch self {
        case .unknownWebview(let id): "unknownWebview(\(id))"
        case .conflict: "conflict"
        case .limitExceeded: "limitExceeded"
        case .staleTimer(let t): "staleTimer(\(t))"
        case .closed: "closed"
        }
    }
}

/// Checks shared by the engine suites.
enum EngineCheck {
    /// Asserts that `input` fails with exactly one `.failure` effect matching `expected` and leaves
    /// the engine equal to its previous value. Returns the error.
    @discardableResult
    static func expectFailure(
        _ h: inout EngineHarness, _ input: SessionInput, _ expected: EngineErrorMatch,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> EngineError? {
        let before = h.engine
        let effects = h.step(input)
        #expect(h.engine == before, "a failed \(input) changed the engine", sourceLocation: sourceLocation)
        guard effects.count == 1, case .failure(let error) = effects[0] else {
            Issue.record("expected exactly one failure for \(input), got \(effects)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(expected.matches(error), "\(input) failed with \(error), expected \(expected)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        return error
    }

    /// The `foregroundRemoved` observations among `effects`.
    static func removals(_ effects: [EngineOutput]) -> [(webview: ItemID, reason: RemovalReason, latencyMs: Int)] {
        effects.compactMap {
            if case .observe(.foregroundRemoved(let w, let r, let l)) = $0 { return (w, r, l) }
            return nil
        }
    }

    /// The foreground in a short form: `W1 blank T1`, or nil.
    static func foreground(_ e: SessionEngine) -> String? {
        e.foreground.map { "\($0.webview) \($0.kind.rawValue) \($0.timer)" }
    }

    /// Structural invariants of any state the engine can reach (contract section 4 and the
    /// foreground rules of section 5). Returns one line per violation.
    static func invariantViolations(_ e: SessionEngine) -> [String] {
        var problems: [String] = []
        let stack = e.stack
        if let top = stack.last, top.isPlaceholder {
            problems.append("the top item \(top.id) is a placeholder")
        }
        var seen = Set<ItemID>()
        for item in stack where !seen.insert(item.id).inserted {
            problems.append("\(item.id) is on the stack twice")
        }
        for (i, item) in stack.enumerated() {
            if item.id.kind != kindOf(item) {
                problems.append("\(item.id) is stored as a \(kindOf(item))")
            }
            guard case .placeholder(let p) = item else { continue }
            // The item directly above is its web view or another placeholder of that web view: this
            // makes every web view's placeholders one contiguous run directly below it.
            guard i + 1 < stack.count else {
                problems.append("placeholder \(p.id) has nothing above it")
                continue
            }
            switch stack[i + 1] {
            case .webview(let w) where w.id == p.of:
                break
            case .placeholder(let q) where q.of == p.of:
                break
            default:
                problems.append("placeholder \(p.id) of \(p.of) sits below \(stack[i + 1].id)")
            }
            if p.of.kind != .webview {
                problems.append("placeholder \(p.id) belongs to \(p.of), not a web view")
            }
        }
        if let fg = e.foreground {
            if e.webView(fg.webview) == nil {
                problems.append("the foreground is over \(fg.webview), which is not a web view on the stack")
            }
            if stack.last?.id != fg.webview {
                problems.append("the foreground is over \(fg.webview), which is not the top item")
            }
            if fg.timeoutMs != e.configuration.foregroundTimeoutMs {
                problems.append("the foreground's timeout is \(fg.timeoutMs) ms")
            }
        }
        if stack.count > e.configuration.maxStackDepth {
            problems.append("the stack holds \(stack.count) items, more than \(e.configuration.maxStackDepth)")
        }
        if e.isClosed {
            if e.foreground != nil { problems.append("a closed session has a foreground") }
            if let w = e.webViews.first(where: \.connected) { problems.append("a closed session still counts a page for \(w.id)") }
        }
        return problems
    }

    private static func kindOf(_ item: StackItem) -> ItemID.Kind {
        switch item {
        case .webview: .webview
        case .placeholder: .placeholder
        case .native: .native
        }
    }
}

/// The engine's answer followed by its effects, as one list: the form the engine suites write
/// their expectations in.
enum EngineOutput: Equatable {
    case reply(SessionReply)
    case failure(EngineError)
    case sendToPage(ItemID, PageEvent)
    case closePage(ItemID, code: Int)
    case scheduleTimer(TimerToken, afterMs: Int)
    case cancelTimer(TimerToken)
    case observe(Observation)

    init(_ effect: SessionEffect) {
        switch effect {
        case .sendToPage(let id, let event): self = .sendToPage(id, event)
        case .closePage(let id, let code): self = .closePage(id, code: code)
        case .scheduleTimer(let token, let ms): self = .scheduleTimer(token, afterMs: ms)
        case .cancelTimer(let token): self = .cancelTimer(token)
        case .observe(let o): self = .observe(o)
        }
    }
}

extension SessionEngine {
    /// `handle` as one list: `.reply` then the effects, or the single `.failure` (a failed input
    /// appends no effect: checked here).
    mutating func outputs(_ input: SessionInput, at now: Int64) -> [EngineOutput] {
        var effects: [SessionEffect] = []
        switch handle(input, at: now, into: &effects) {
        case .success(let reply):
            return [.reply(reply)] + effects.map(EngineOutput.init)
        case .failure(let error):
            #expect(effects.isEmpty, "a failed \(input) appended \(effects)")
            return [.failure(error)]
        }
    }
}
