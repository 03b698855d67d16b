// engine-bench: transitions per second and allocations per transition of the stacking engine.
//
//     swift run -c release --package-path Benchmarks engine-bench [--inputs N] [--runs N] [--seed N]
//     swift run -c release --package-path Benchmarks engine-bench --bookkeeping   # session.create/close at 10k and 40k
//
// A seeded pseudo-random workload of realistic sessions (pwa-navigate / pwa-rendered loops,
// backs, navigateToUrl with the new page connecting, native screens, timers that fire, stale
// timers, reloads, covered pages that are refused, popToRoot, close) is generated once by
// driving an engine, recorded as `(input, time)` pairs, and then replayed on fresh engines.
// Only the replay is timed; it calls `handle(_:at:into:)` with one reused effects buffer, as
// a host does. Output is Markdown for docs/PERFORMANCE.md.

import BridgeProtocol
import MallocInterposerSwift

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Counting allocations
//
// Every Swift heap allocation (array and string buffers, boxes, class instances) ends in the
// runtime's `swift_slowAlloc`, which calls `malloc`. ordo-one's malloc-interposer replaces
// `malloc`/`free` for the whole process and counts calls and requested bytes while counting is
// on. On Linux it must be preloaded: when the probe in main sees no allocations, the benchmark
// runs itself again once with `LD_PRELOAD` naming the interposer's library, which SwiftPM builds
// next to the executable. If counting still sees nothing, the allocation columns show n/a.

nonisolated(unsafe) var probeSink: [Int] = []

var allocationCalls: Int { MallocInterposerSwift.getStatistics().mallocCount }
var allocationBytes: Int { MallocInterposerSwift.getStatistics().mallocBytesCount }

/// True when the interposer counts this process's allocations (checked with one real allocation).
@MainActor func interposerCounts(seed: UInt64) -> Bool {
    MallocInterposerSwift.initialize()
    MallocInterposerSwift.hook()
    let before = allocationCalls
    probeSink = [Int](repeating: 7, count: 1000 + Int(seed % 2))  // escapes: a real heap allocation
    return allocationCalls > before
}

/// Runs this executable again with the interposer preloaded (returns only when that is impossible).
func reexecWithInterposer() {
    let marker = "ENGINE_BENCH_PRELOADED"
    guard getenv(marker) == nil else { return }
    var path = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &path, path.count - 1)
    guard n > 0 else { return }
    let executable = String(decoding: path[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let directory = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    let library = directory + "/libMallocInterposerSwift.so"
    guard access(library, R_OK) == 0 else { return }
    setenv(marker, "1", 1)
    setenv("LD_PRELOAD", library, 1)
    var argv: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) }
    argv.append(nil)
    execv(executable, argv)
}

// MARK: - Options

struct Options {
    var inputs = 1_000_000
    var bookkeeping = false
    var runs = 11
    var seed: UInt64 = 42

    init(_ arguments: [String]) {
        var i = 1
        func value() -> String {
            i += 1
            guard i < arguments.count else { fail("\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--inputs": inputs = parsed(Int(value()), "--inputs takes a positive integer")
            case "--runs": runs = parsed(Int(value()), "--runs takes a positive integer")
            case "--seed": seed = parsed(UInt64(value()), "--seed takes an unsigned integer")
            case "--bookkeeping": bookkeeping = true
            case "-h", "--help":
                print("usage: engine-bench [--inputs N (default 1000000)] [--runs N (default 11)] [--seed N (default 42)]")
                print("       engine-bench --bookkeeping   (session.create and session.close by one controller at 10,000 and 40,000 sessions)")
                exit(0)
            default: fail("unknown argument \(arguments[i]) (try --help)")
            }
            i += 1
        }
        if inputs < 1000 || runs < 1 { fail("--inputs must be at least 1000 and --runs at least 1") }
    }
}

func parsed<T>(_ value: T?, _ message: String) -> T {
    guard let value else { fail(message) }
    return value
}

func fail(_ message: String) -> Never {
    let line = "engine-bench: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(2)
}

// MARK: - Workload


struct Step {
    let input: SessionInput
    let at: Int64
}

/// One session's recorded inputs; it ends with `close`.
typealias Session = [Step]

let configuration = EngineConfiguration(foregroundTimeoutMs: 1000, maxStackDepth: 256)

/// Drives an engine with a realistic mix and records what it fed it.
struct WorkloadGenerator {
    var rng: SeededRandom
    var engine = SessionEngine(configuration: configuration)
    var now: Int64 = 0
    var steps: [Step] = []
    var scratch: [SessionEffect] = []
    var counter = 0
    var lastTimer: TimerToken?

    init(seed: UInt64) { rng = SeededRandom(seed: seed) }

    mutating func roll(_ n: UInt64) -> Int { Int(rng.next() % n) }

    @discardableResult
    mutating func feed(_ input: SessionInput, afterMs ms: Int) -> Result<SessionReply, EngineError> {
        now += Int64(ms) * 1000 + Int64(roll(1000))
        steps.append(Step(input: input, at: now))
        scratch.removeAll(keepingCapacity: true)
        let result = engine.handle(input, at: now, into: &scratch)
        for case .scheduleTimer(let t, _) in scratch { lastTimer = t }
        return result
    }

    mutating func url() -> String {
        counter += 1
        return "http://127.0.0.1:8787/app/catalog/item-\(counter)?ref=list"
    }

    /// After a foreground went up: the page renders in time, mostly; else the timer fires, and
    /// sometimes the late pwa-rendered follows.
    mutating func settle(_ webview: ItemID) {
        guard let fg = engine.foreground else { return }
        if roll(100) < 92 {
            feed(.pwaRendered(from: webview), afterMs: 20 + roll(250))
        } else {
            feed(.timerFired(fg.timer), afterMs: 1000 + roll(5))
            if roll(2) == 0 { feed(.pwaRendered(from: webview), afterMs: 10 + roll(500)) }
        }
    }

    mutating func session(length: Int) -> Session {
        steps = []
        steps.reserveCapacity(length * 2 + 8)
        engine = SessionEngine(configuration: configuration)
        lastTimer = nil
        let singleTab = roll(2) == 0
        feed(.createRoot(url: url(), token: "tok-\(counter)-a8f3e1c09b7d", connected: true), afterMs: 0)
        while steps.count < length {
            let top = engine.stack.last!
            let w = top.webview
            // A web view on top without a page: its page connects (claims it) first.
            if let w, !w.connected {
                feed(.pageConnected(w.id, url: nil), afterMs: 30 + roll(100))
                continue
            }
            let r = roll(1000)
            switch r {
            case ..<350:  // a PWA navigation
                if let w {
                    feed(.pwaNavigate(from: w.id, url: url(), title: roll(4) == 0 ? "Item \(counter)" : nil), afterMs: 500 + roll(3000))
                    settle(w.id)
                } else {
                    feed(.back(requester: nil, singleTab: singleTab), afterMs: 800 + roll(2000))
                }
            case ..<600:  // back, from the page's header button or from the app
                let requester = w != nil && roll(2) == 0 ? w?.id : nil
                let result = feed(.back(requester: requester, singleTab: singleTab), afterMs: 500 + roll(3000))
                if case .success(.back(.swap, _)) = result, let w { settle(w.id) }
            case ..<670:  // a classic navigation: the new page connects
                let requester = w != nil && roll(4) != 0 ? w?.id : nil
                feed(.navigateToUrl(url: url(), token: "tok-\(counter)-5c2e9d1f7a64", requester: requester, singleTab: singleTab), afterMs: 500 + roll(3000))
            case ..<700:
                feed(.pushNative(url: "tt://screen/\(roll(20))", requester: w?.id), afterMs: 500 + roll(3000))
            case ..<720:  // a reload
                if let w {
                    feed(.pageDisconnected(w.id), afterMs: 1000 + roll(5000))
                    feed(.pageConnected(w.id, url: w.url), afterMs: 100 + roll(300))
                }
            case ..<770:
                if let w { feed(.pwaNavigated(from: w.id, url: url()), afterMs: 200 + roll(2000)) }
            case ..<920:  // real PWAs send pwa-rendered after every render
                if let w { feed(.pwaRendered(from: w.id), afterMs: 50 + roll(500)) }
            case ..<940:  // a timer that fired as its foreground went away
                if let t = lastTimer, engine.foreground?.timer != t { feed(.timerFired(t), afterMs: 1 + roll(3)) }
            case ..<955:  // a covered page tries to navigate: conflict
                if let covered = engine.webViews.dropLast().last {
                    feed(.pwaNavigate(from: covered.id, url: url(), title: nil), afterMs: 100 + roll(1000))
                }
            case ..<965:
                feed(.popToRoot(singleTab: singleTab), afterMs: 500 + roll(3000))
            default:  // a page that the app closed long ago speaks
                feed(.pwaRendered(from: .webview(engine.webViews.count + 50)), afterMs: 100 + roll(1000))
            }
        }
        feed(.close(reason: "idle"), afterMs: 300_000)
        return steps
    }

    static func make(inputs: Int, seed: UInt64) -> [Session] {
        var g = WorkloadGenerator(seed: seed)
        var sessions: [Session] = []
        var total = 0
        while total < inputs {
            let s = g.session(length: 50 + g.roll(400))
            total += s.count
            sessions.append(s)
        }
        return sessions
    }
}

// MARK: - Replay

/// Replays every session on a fresh engine; returns the number of outputs, each answer and each
/// effect (so the work cannot be optimised away).
@inline(never)
func replay(_ sessions: [Session], into effects: inout [SessionEffect]) -> Int {
    var produced = 0
    for session in sessions {
        var engine = SessionEngine(configuration: configuration)
        for i in session.indices {
            effects.removeAll(keepingCapacity: true)
            engine.handle(session[i].input, at: session[i].at, into: &effects)
            produced &+= effects.count + 1
        }
    }
    return produced
}

/// The same with the convenience form that returns a new array per input.
@inline(never)
func replayReturning(_ sessions: [Session]) -> Int {
    var produced = 0
    for session in sessions {
        var engine = SessionEngine(configuration: configuration)
        for i in session.indices {
            produced &+= engine.handle(session[i].input, at: session[i].at).effects.count + 1
        }
    }
    return produced
}

func kindName(_ input: SessionInput) -> String {
    switch input {
    case .createRoot: "createRoot"
    case .pageConnected: "pageConnected"
    case .pageDisconnected: "pageDisconnected"
    case .pwaNavigate: "pwaNavigate"
    case .pwaRendered: "pwaRendered"
    case .pwaNavigated: "pwaNavigated"
    case .navigateToUrl: "navigateToUrl"
    case .pushNative: "pushNative"
    case .back: "back"
    case .popToRoot: "popToRoot"
    case .timerFired: "timerFired"
    case .close: "close"
    case .adopt: "adopt"
    }
}

func outcomeName(_ result: Result<SessionReply, EngineError>) -> String {
    switch result {
    case .failure(let e): "failure(\(e.code))"
    case .success(.back(let action, _)): action.rawValue
    case .success(.pwaRendered(let removed, _)): removed ? "removed" : "nothing up"
    default: "ok"
    }
}

func fixed(_ value: Double, _ decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = "\(rounded)"
    if let dot = text.firstIndex(of: ".") {
        let have = text.distance(from: dot, to: text.endIndex) - 1
        if have < decimals { text += String(repeating: "0", count: decimals - have) }
        if decimals == 0 { text.removeSubrange(dot...) }
    }
    return text
}

func seconds(_ d: Duration) -> Double {
    let (s, atto) = d.components
    return Double(s) + Double(atto) / 1e18
}

func cpuModel() -> String {
    guard let f = fopen("/proc/cpuinfo", "r") else { return "unknown CPU" }
    defer { fclose(f) }
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, Int32(line.count), f) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("model name") {
            return text.split(separator: ":", maxSplits: 1).last.map { $0.trimmingPrefix(" ").filter { $0 != "\n" } } ?? text
        }
    }
    return "unknown CPU"
}

// MARK: - Main

func isDebugBuild() -> Bool {
    var debug = false
    assert({ debug = true; return true }())
    return debug
}

let options = Options(CommandLine.arguments)
if options.bookkeeping {
    bookkeepingBenchmark()
    exit(0)
}

// Counting must see the Swift runtime's allocations, or the numbers below would be zero.
let counting: Bool = {
    if interposerCounts(seed: options.seed) { return true }
    reexecWithInterposer()
    return false
}()
if !counting {
    let note = "engine-bench: cannot count allocations here (libMallocInterposerSwift.so not preloaded?); allocation columns show n/a\n"
    _ = note.withCString { write(2, $0, strlen($0)) }
}
func perTransition(_ value: Int, _ count: Int, _ decimals: Int) -> String {
    counting ? fixed(Double(value) / Double(count), decimals) : "n/a"
}

let sessions = WorkloadGenerator.make(inputs: options.inputs, seed: options.seed)
let transitions = sessions.reduce(0) { $0 + $1.count }

// Mix and per-input allocations, measured in an untimed pass.
struct KindStats {
    var count = 0
    var calls = 0
    var bytes = 0
}
var perKind: [String: KindStats] = [:]
var perOutcome: [String: Int] = [:]
do {
    var effects: [SessionEffect] = []
    effects.reserveCapacity(64)
    for session in sessions {
        var engine = SessionEngine(configuration: configuration)
        for step in session {
            effects.removeAll(keepingCapacity: true)
            let calls = allocationCalls, bytes = allocationBytes
            let result = engine.handle(step.input, at: step.at, into: &effects)
            let dc = allocationCalls - calls, db = allocationBytes - bytes
            let key = kindName(step.input) + " → " + outcomeName(result)
            perKind[key, default: KindStats()].count += 1
            perKind[key, default: KindStats()].calls += dc
            perKind[key, default: KindStats()].bytes += db
        }
    }
}

// Whole-replay allocations (engines, stacks and effects included), untimed.
var buffer: [SessionEffect] = []
buffer.reserveCapacity(64)
let expectedEffects = replay(sessions, into: &buffer)
let callsBefore = allocationCalls, bytesBefore = allocationBytes
let checkEffects = replay(sessions, into: &buffer)
let replayCalls = allocationCalls - callsBefore, replayBytes = allocationBytes - bytesBefore
guard checkEffects == expectedEffects else { fail("two replays of the same inputs differ (\(checkEffects) vs \(expectedEffects) effects)") }

// Timed runs.
let clock = ContinuousClock()
var best = Duration.seconds(1_000_000)
var worst = Duration.zero
for _ in 0..<options.runs {
    let start = clock.now
    let produced = replay(sessions, into: &buffer)
    let elapsed = clock.now - start
    guard produced == expectedEffects else { fail("replay produced \(produced) effects, expected \(expectedEffects)") }
    best = min(best, elapsed)
    worst = max(worst, elapsed)
}
var bestReturning = Duration.seconds(1_000_000)
for _ in 0..<options.runs {
    let start = clock.now
    let produced = replayReturning(sessions)
    let elapsed = clock.now - start
    guard produced == expectedEffects else { fail("replay produced \(produced) effects, expected \(expectedEffects)") }
    bestReturning = min(bestReturning, elapsed)
}

let perSecond = Double(transitions) / seconds(best)
let perSecondWorst = Double(transitions) / seconds(worst)
let perSecondReturning = Double(transitions) / seconds(bestReturning)
let target = 5_000_000.0

let build = isDebugBuild() ? "DEBUG (numbers are meaningless; use -c release)" : "release"

print("## Stacking engine (engine-bench)")
print("")
print("Command: `swift run -c release --package-path Benchmarks engine-bench --inputs \(options.inputs) --runs \(options.runs) --seed \(options.seed)`")
print("(\(build) build, \(cpuModel()), one thread).")
print("")
print("Workload: \(transitions) inputs in \(sessions.count) sessions (seed \(options.seed)), \(expectedEffects) effects,")
print("generated once and replayed on fresh engines with `handle(_:at:into:)` and one reused effects buffer.")
print("")
print("| measure | value |")
print("| --- | --- |")
print("| transitions/s, best of \(options.runs) | **\(fixed(perSecond / 1e6, 2)) M** (\(fixed(1e9 / perSecond, 0)) ns each) — target ≥ 5 M: \(perSecond >= target ? "met" : "NOT met") |")
print("| transitions/s, worst of \(options.runs) | \(fixed(perSecondWorst / 1e6, 2)) M |")
print("| transitions/s with `handle(_:at:)` (a new effects array per input) | \(fixed(perSecondReturning / 1e6, 2)) M |")
print("| allocations per transition | \(perTransition(replayCalls, transitions, 3)) |")
print("| bytes allocated per transition | \(perTransition(replayBytes, transitions, 1)) |")
print("| effects per transition | \(fixed(Double(expectedEffects) / Double(transitions), 2)) |")
print("")
print("Allocations: every Swift heap allocation goes through `swift_slowAlloc` → `malloc`, which")
print("ordo-one's malloc-interposer (preloaded) counts (calls and requested bytes). Counted over one whole")
print("untimed replay: each session's new engine, stack growth and error messages included. Timed runs")
print("count too (a few stores each); the interposer is the same in every run.")
print("")
print("| input → outcome | share | allocations per input | bytes per input |")
print("| --- | ---: | ---: | ---: |")
for (key, s) in perKind.sorted(by: { $0.value.count > $1.value.count }) {
    let share = Double(s.count) / Double(transitions) * 100
    print("| \(key) | \(fixed(share, 1)) % | \(perTransition(s.calls, s.count, 2)) | \(perTransition(s.bytes, s.count, 0)) |")
}

// MARK: - Session bookkeeping

/// One controller creates sessions up to `held`, then the time of 1,000 more `session.create`
/// and of 1,000 `session.close` is measured (the protocol's whole request path, JSON included),
/// as wall time and as the thread's CPU time (what other processes on a loaded machine do not
/// inflate). Constant-time bookkeeping gives the same cost per call at 10,000 and 40,000
/// sessions.
func bookkeepingBenchmark() {
    let clock = ContinuousClock()
    func cpuNanoseconds() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }
    print("| sessions held | session.create (wall) | session.create (CPU) | session.close (wall) | session.close (CPU) |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for held in [10_000, 40_000] {
        var config = BridgeConfiguration()
        config.maxSessions = held + 2_000
        var bridge = Bridge(configuration: config, random: SeededRandom(seed: 1))
        let ctl = ClientID(1)
        bridge.apply(.connected(ctl, isLoopback: true), at: 0)
        var id = 0
        func send(_ text: String) -> [BridgeEffect] {
            id += 1
            bridge.apply(.frame(ctl, text: Array(text.utf8)), at: 0)
            return bridge.drainEffects()
        }
        _ = send(#"{"id":0,"method":"hello","params":{"protocol":1,"role":"controller"}}"#)
        for _ in 0..<held { _ = send(#"{"id":1,"method":"session.create","params":{}}"#) }
        var created: [String] = []
        let createCPU0 = cpuNanoseconds()
        let createTime = clock.measure {
            for _ in 0..<1_000 {
                for case .send(_, let bytes) in send(#"{"id":2,"method":"session.create","params":{}}"#) {
                    let key = Array(#""session":""#.utf8)
                    if let i = stride(from: 0, through: bytes.count - key.count, by: 1).first(where: { bytes[$0..<($0 + key.count)].elementsEqual(key) }) {
                        created.append(String(decoding: bytes[(i + key.count)...].prefix(18), as: UTF8.self))
                        break
                    }
                }
            }
        }
        let createCPU = cpuNanoseconds() - createCPU0
        let closeCPU0 = cpuNanoseconds()
        let closeTime = clock.measure {
            for sid in created { _ = send(#"{"id":3,"method":"session.close","params":{"session":"\#(sid)"}}"#) }
        }
        let closeCPU = cpuNanoseconds() - closeCPU0
        guard created.count == 1_000, bridge.sessionCount == held else { fail("bookkeeping: \(created.count) sessions created, \(bridge.sessionCount) held") }
        func us(_ d: Duration) -> String {
            let c = d.components
            return fixed((Double(c.seconds) * 1e6 + Double(c.attoseconds) / 1e12) / 1_000, 1) + " µs"
        }
        func us(_ ns: Int64) -> String { fixed(Double(ns) / 1e3 / 1_000, 1) + " µs" }
        print("| \(held) | \(us(createTime)) | \(us(createCPU)) | \(us(closeTime)) | \(us(closeCPU)) |")
    }
}
