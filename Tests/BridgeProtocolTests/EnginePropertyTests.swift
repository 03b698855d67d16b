import PropertyBased
import Testing
@testable import BridgeProtocol

/// Random input sequences (valid and invalid, times increasing) against the engine's
/// invariants. A sequence is generated as abstract operations that are turned into concrete
/// inputs against the state reached so far, so most inputs name real ids (and many name ids
/// that are covered, popped, never created or of the wrong kind).
@Suite struct EnginePropertyTests: EngineIDs {
    /// One abstract operation: `kind` picks the input, `pick` its target, `flag` its options,
    /// `dtMs` how long after the previous input it arrives.
    struct Op: Sendable, CustomStringConvertible {
        let kind: Int
        let pick: Int
        let flag: Int
        let dtMs: Int
        var description: String { "(\(kind),\(pick),\(flag),\(dtMs))" }
    }

    static let opGen = zip(Gen.int(in: 0...99), Gen.int(in: 0...99), Gen.int(in: 0...3), Gen.int(in: 0...1500))
        .map { Op(kind: $0, pick: $1, flag: $2, dtMs: $3) }
    static let sequenceGen = opGen.array(of: 0...200)
    static let depthGen = Gen.int(in: 0...5).map { [2, 3, 4, 6, 10, 256][$0] }

    /// Turns abstract operations into concrete inputs, remembering every id and timer it saw.
    struct Driver {
        var engine: SessionEngine
        var now: Int64 = 0
        var knownIDs: [ItemID] = []
        var knownSet: Set<ItemID> = []
        var timers: [TimerToken] = []
        var counter = 0

        init(_ configuration: EngineConfiguration) { engine = SessionEngine(configuration: configuration) }

        mutating func learn(_ effects: [EngineOutput]) {
            for item in engine.stack where knownSet.insert(item.id).inserted { knownIDs.append(item.id) }
            for case .scheduleTimer(let t, _) in effects { timers.append(t) }
        }

        func webview(_ pick: Int) -> ItemID {
            let webviews = knownIDs.filter { $0.kind == .webview }
            switch pick {
            case ..<55:
                return engine.top?.id ?? .webview(1)
            case ..<75:
                return webviews.isEmpty ? .webview(1) : webviews[pick % webviews.count]
            case ..<85:
                return engine.webViews.last?.id ?? .webview(1)
            case ..<92:
                return .webview(webviews.count + 1 + pick % 3)
            default:
                let others = knownIDs.filter { $0.kind != .webview }
                return others.isEmpty ? .placeholder(1) : others[pick % others.count]
            }
        }

        func timer(_ pick: Int) -> TimerToken {
            switch pick {
            case ..<60: return engine.foreground?.timer ?? timers.last ?? TimerToken(1)
            case ..<85: return timers.isEmpty ? TimerToken(1) : timers[pick % timers.count]
            default: return TimerToken(UInt64(timers.count + 1 + pick))
            }
        }

        mutating func input(for op: Op) -> SessionInput {
            counter += 1
            let url = "http://app/\(counter)"
            let requester: ItemID? = op.flag == 0 ? nil : webview(op.pick)
            let singleTab = op.flag >= 2
            switch op.kind {
            case ..<20: return .pwaNavigate(from: webview(op.pick), url: op.flag == 1 ? nil : url, title: op.flag == 3 ? "T\(counter)" : nil)
            case ..<40: return .pwaRendered(from: webview(op.pick))
            case ..<52: return .timerFired(timer(op.pick))
            case ..<62: return .back(requester: requester, singleTab: singleTab)
            case ..<70: return .navigateToUrl(url: url, token: "k\(counter)", requester: requester, singleTab: singleTab)
            case ..<74: return .pushNative(url: "tt://\(counter)", requester: requester)
            case ..<77: return .popToRoot(singleTab: singleTab)
            case ..<84: return .pageConnected(webview(op.pick), url: op.flag == 1 ? url : nil)
            case ..<90: return .pageDisconnected(webview(op.pick))
            case ..<95: return .pwaNavigated(from: webview(op.pick), url: url)
            case ..<99: return .createRoot(url: url, token: "k\(counter)", connected: op.flag != 0)
            default: return op.flag == 0 ? .close(reason: "closed") : .pwaRendered(from: webview(op.pick))
            }
        }
    }

    /// What the checks remember across steps.
    struct Observer {
        var everOnStack: Set<ItemID> = []
        var highest: [ItemID.Kind: Int] = [:]
        var scheduled: Set<TimerToken> = []
        var outstanding: Set<TimerToken> = []
        var shown = 0
        var removed = 0

        /// Checks one step; returns the violations.
        mutating func check(before: SessionEngine, input: SessionInput, effects: [EngineOutput], after: SessionEngine) -> [String] {
            var problems = EngineCheck.invariantViolations(after)
            let failures = effects.filter { if case .failure = $0 { true } else { false } }
            let replies = effects.filter { if case .reply = $0 { true } else { false } }
            if !failures.isEmpty {
                if effects.count != 1 { problems.append("a failure came with other effects: \(effects)") }
                if after != before { problems.append("a failed input changed the engine") }
                return problems
            }
            if replies.count != 1 { problems.append("\(replies.count) replies") }
            if case .reply? = effects.first {} else { problems.append("the first effect is not the reply") }

            // Ids: new ones were never seen before and count up per kind.
            let beforeIDs = Set(before.stack.map(\.id))
            for item in after.stack where !beforeIDs.contains(item.id) {
                if everOnStack.contains(item.id) { problems.append("\(item.id) was reused") }
                if item.id.number <= highest[item.id.kind, default: 0] { problems.append("\(item.id) is not newer than every earlier id") }
            }
            for item in after.stack {
                everOnStack.insert(item.id)
                highest[item.id.kind] = max(highest[item.id.kind, default: 0], item.id.number)
            }

            // Foregrounds: shown and removed alternate, each removal is of the one that was up,
            // for a reason that fits the input; timers are scheduled once and end once.
            var up = before.foreground?.webview
            for effect in effects {
                switch effect {
                case .observe(.foregroundShown(let w, _, _)):
                    if up != nil { problems.append("a foreground was shown over \(w) while one was up") }
                    up = w
                    shown += 1
                case .observe(.foregroundRemoved(let w, let reason, let latency)):
                    if up != w { problems.append("removed a foreground over \(w), but the one up was over \(String(describing: up))") }
                    if !Self.fits(reason, input, effects) { problems.append("removal reason \(reason) does not fit \(input)") }
                    if latency < 0 { problems.append("negative latency") }
                    up = nil
                    removed += 1
                case .scheduleTimer(let t, let ms):
                    if !scheduled.insert(t).inserted { problems.append("timer \(t) scheduled twice") }
                    if ms != after.configuration.foregroundTimeoutMs { problems.append("timer of \(ms) ms") }
                    outstanding.insert(t)
                case .cancelTimer(let t):
                    if outstanding.remove(t) == nil { problems.append("cancelled \(t), which is not running") }
                case .reply(.timerHandled):
                    guard case .timerFired(let t) = input else { problems.append("timerHandled for \(input)"); break }
                    if outstanding.remove(t) == nil { problems.append("handled \(t), which is not running") }
                default:
                    break
                }
            }
            if up != after.foreground?.webview { problems.append("the foreground effects do not add up to the state") }
            if shown - removed != (after.foreground == nil ? 0 : 1) { problems.append("shown \(shown), removed \(removed)") }
            let live: Set<TimerToken> = after.foreground.map { [$0.timer] } ?? []
            if outstanding != live { problems.append("running timers \(outstanding), foreground timer \(live)") }

            // The stack: changes are told once; popped web views are told closed; the version moves.
            let idsChanged = before.stack.map(\.id) != after.stack.map(\.id)
            let stackChanges = effects.filter { $0 == .observe(.stackChanged) }.count
            if stackChanges != (idsChanged ? 1 : 0) { problems.append("\(stackChanges) stackChanged for a list that changed: \(idsChanged)") }
            if before.stack != after.stack && before.version == after.version { problems.append("the stack changed, the version did not") }
            let afterIDs = Set(after.stack.map(\.id))
            let gone = before.webViews.map(\.id).filter { !afterIDs.contains($0) }
            let closedObserved = effects.compactMap { if case .observe(.webviewClosed(let w)) = $0 { w } else { nil } }
            if Set(gone) != Set(closedObserved) || gone.count != closedObserved.count {
                problems.append("web views gone \(gone), webviewClosed \(closedObserved)")
            }
            let opened = effects.compactMap { if case .observe(.webviewOpen(let w, _, _)) = $0 { w } else { nil } }
            let newWebViews = after.webViews.map(\.id).filter { !beforeIDs.contains($0) && $0 != .webview(1) }
            if opened != newWebViews { problems.append("new web views \(newWebViews), webviewOpen \(opened)") }

            // Pages: only connected pages are told closed / load and closed, each once; afterwards
            // the engine no longer counts them.
            var closedPages: [ItemID] = []
            for (n, effect) in effects.enumerated() {
                switch effect {
                case .sendToPage(let w, .closed), .sendToPage(let w, .load):
                    if before.webView(w)?.connected != true { problems.append("told \(w), which had no page") }
                    if effects.count <= n + 1 || effects[n + 1] != .closePage(w, code: 1000) {
                        problems.append("\(w) was told to leave but is not closed right after")
                    }
                case .closePage(let w, _):
                    closedPages.append(w)
                    if after.webView(w)?.connected == true { problems.append("closed \(w)'s page but still count it") }
                default:
                    break
                }
            }
            if Set(closedPages).count != closedPages.count { problems.append("a page was closed twice: \(closedPages)") }
            let loads = effects.filter {
                switch $0 {
                case .sendToPage(_, .load), .sendToPage(_, .closed(_, .some)): true
                default: false
                }
            }
            if loads.count > 1 { problems.append("\(loads.count) pages were sent to load") }
            return problems
        }

        static func fits(_ reason: RemovalReason, _ input: SessionInput, _ effects: [EngineOutput]) -> Bool {
            switch (reason, input) {
            case (.rendered, .pwaRendered), (.timeout, .timerFired): true
            case (.superseded, .pwaNavigate), (.superseded, .navigateToUrl), (.superseded, .pushNative): true
            case (.superseded, .back): effects.first == .reply(.back(action: .swap, removed: effects.swapRemoved))
            case (.closed, .back): effects.first.map { if case .reply(.back(.pop, _)) = $0 { true } else { false } } ?? false
            case (.closed, .popToRoot), (.closed, .pageDisconnected), (.closed, .close): true
            default: false
            }
        }
    }

    struct Run {
        var steps: [(input: SessionInput, at: Int64, effects: [EngineOutput], state: SessionEngine)] = []
        var problems: [String] = []
    }

    /// Drives one sequence, checking every step; stops at the first violation.
    static func run(_ ops: [Op], depth: Int) -> Run {
        var driver = Driver(EngineConfiguration(foregroundTimeoutMs: 1000, maxStackDepth: depth))
        var observer = Observer()
        var run = Run()
        let all = [Op(kind: 95, pick: 0, flag: 1, dtMs: 0)] + ops  // always begins with a root
        for op in all {
            let input = driver.input(for: op)
            driver.now += Int64(op.dtMs) * 1000 + Int64(op.pick) + 1
            let before = driver.engine
            let effects = driver.engine.outputs(input, at: driver.now)
            driver.learn(effects)
            run.steps.append((input, driver.now, effects, driver.engine))
            let problems = observer.check(before: before, input: input, effects: effects, after: driver.engine)
            if !problems.isEmpty {
                run.problems = problems
                break
            }
        }
        return run
    }

    static func describe(_ run: Run) -> String {
        var out = run.problems.joined(separator: "\n")
        out += "\nafter these inputs (time in µs):\n"
        for s in run.steps.suffix(30) {
            out += "  @\(s.at) \(s.input) -> \(s.state.rendering) fg \(EngineCheck.foreground(s.state) ?? "-")\n"
        }
        if let last = run.steps.last { out += "effects of the last: \(last.effects)" }
        return out
    }

    @Test func invariantsHoldOnRandomSequences() async {
        await propertyCheck(count: 200, input: Self.depthGen, Self.sequenceGen) { depth, ops in
            await Task.yield()  // see sequencesCoverTheInterestingCases
            let run = Self.run(ops, depth: depth)
            #expect(run.problems.isEmpty, "\(Self.describe(run))")
        }
    }

    @Test func replayGivesIdenticalStatesAndEffects() async {
        await propertyCheck(count: 200, input: Self.depthGen, Self.sequenceGen) { depth, ops in
            await Task.yield()  // see sequencesCoverTheInterestingCases
            let run = Self.run(ops, depth: depth)
            var engine = SessionEngine(configuration: EngineConfiguration(foregroundTimeoutMs: 1000, maxStackDepth: depth))
            for (n, step) in run.steps.enumerated() {
                let effects = engine.outputs(step.input, at: step.at)
                if effects != step.effects || engine != step.state {
                    Issue.record("replay differs at step \(n) (\(step.input)): \(effects) vs \(step.effects)")
                    return
                }
            }
        }
    }

    /// The generator reaches what the invariants are about; otherwise the properties say little.
    @Test func sequencesCoverTheInterestingCases() async {
        var rng = Xoshiro(seed: (1, 2, 3, 4))
        var reasons = Set<RemovalReason>()
        var errors = Set<String>()
        var actions = Set<BackAction>()
        var loads = 0, lates = 0, maxDepth = 0, closes = 0
        // Yields between cases, as every long CPU-bound test here does: the tests share the
        // cooperative pool, as many threads as cores (2 on CI), and a test that holds a thread for
        // seconds stalls every other test's tasks, actors and queues meanwhile.
        for n in 0..<200 {
            await Task.yield()
            let ops = Self.sequenceGen.run(using: &rng)
            let run = Self.run(ops, depth: n % 2 == 0 ? 4 : 256)
            #expect(run.problems.isEmpty, "\(Self.describe(run))")
            for step in run.steps {
                maxDepth = max(maxDepth, step.state.stack.count)
                for effect in step.effects {
                    switch effect {
                    case .observe(.foregroundRemoved(_, let r, _)): reasons.insert(r)
                    case .failure(let e): errors.insert("\(e)".split(separator: ":")[0] + (e == .closed ? "/closed" : ""))
                    case .reply(.back(let a, _)): actions.insert(a)
                    case .sendToPage(_, .load), .sendToPage(_, .closed(_, .some)): loads += 1
                    case .observe(.pwaRendered(_, _, true)): lates += 1
                    case .reply(.closed): closes += 1
                    default: break
                    }
                }
                if case .failure(.staleTimer) = step.effects.first { errors.insert("stale") }
                if case .failure(.unknownWebview) = step.effects.first { errors.insert("unknown") }
                if case .failure(.limitExceeded) = step.effects.first { errors.insert("limit") }
            }
        }
        #expect(reasons == [.rendered, .timeout, .superseded, .closed])
        #expect(actions == [.swap, .pop, .none])
        #expect(errors.isSuperset(of: ["stale", "unknown", "limit", "conflict", "unknown-session/closed"]), "\(errors)")
        #expect(loads > 0 && lates > 0 && closes > 0)
        #expect(maxDepth >= 10)
    }
}

private extension Array where Element == EngineOutput {
    /// The ids a swap reply removed, for matching the reply.
    var swapRemoved: [ItemID] {
        if case .reply(.back(.swap, let removed))? = first { return removed }
        return []
    }
}
