#if canImport(Glibc)
import Glibc
#endif

/// Request kinds, as kept in each connection's in-flight queue.
enum Kind {
    static let hello: UInt8 = 0
    static let navigate: UInt8 = 1
    static let rendered: UInt8 = 2
    static let back: UInt8 = 3
    static let ping: UInt8 = 4
    static let subscribe: UInt8 = 5
    static let count = 6
}

/// What every workload shares: opening pages with a bounded number of handshakes in flight,
/// `hello`, writing requests, matching replies to requests, and the failures seen.
class Driver: ConnectionHandler {
    let options: Options
    var loop: Loop!
    let started = monotonicNanos()
    var deadline: UInt64

    /// Pages are opened in index order, `connectConcurrency` at a time.
    var pages: [Connection] = []
    private var connectNext = 0
    private var connecting = 0
    var readyCount = 0
    var failedCount = 0
    var errorReplies = 0
    var firstError: String?
    var orderViolations = 0
    var connectStarted: UInt64 = 0
    var allReadyAt: UInt64 = 0

    private var message: [UInt8] = []
    static let idPrefix = Array(#"{"id":"#.utf8)
    static let helloPage = Array(#","method":"hello","params":{"protocol":1,"role":"page","url":"http://127.0.0.1:8787/app/"}}"#.utf8)
    static let helloController = Array(#","method":"hello","params":{"protocol":1,"role":"controller"}}"#.utf8)
    static let rendered = Array(#","method":"pwa-rendered","params":{}}"#.utf8)
    static let back = Array(#","method":"back","params":{}}"#.utf8)
    static let ping = Array(#","method":"ping","params":{}}"#.utf8)
    static let subscribeRemoved = Array(#","method":"session.subscribe","params":{"events":["foreground.removed"]}}"#.utf8)
    static func navigate(_ step: Int) -> [UInt8] {
        Array(#","method":"pwa-navigate","params":{"url":"http://127.0.0.1:8787/app/#/products/\#(step)"}}"#.utf8)
    }

    init(options: Options) {
        self.options = options
        deadline = started + UInt64(options.deadline * 1e9)
        message.reserveCapacity(512)
    }

    var timedOut: Bool { monotonicNanos() >= deadline }

    // MARK: Pages

    func addPages(_ n: Int) {
        for _ in 0..<n { pages.append(loop.makeConnection()) }
    }

    /// Starts handshakes until `connectConcurrency` are in flight.
    func pumpConnects() {
        if connectStarted == 0 { connectStarted = monotonicNanos() }
        while connecting < options.connectConcurrency && connectNext < pages.count {
            let c = pages[connectNext]
            connectNext += 1
            connecting += 1
            loop.connect(c)
        }
    }

    var allPagesSettled: Bool { readyCount + failedCount == pages.count }

    override func opened(_ c: Connection) {
        send(c, Kind.hello, c.index == controllerIndex ? Driver.helloController : Driver.helloPage)
    }

    override func failed(_ c: Connection, _ why: String) {
        if c.index == controllerIndex {
            controllerFailed = true
            return
        }
        if c.ready {
            readyCount -= 1
        } else {
            connecting -= 1
            pumpConnects()
        }
        failedCount += 1
        c.ready = false
    }

    var controllerFailed = false

    /// The connection that is a controller, if any (-1: none).
    var controllerIndex = -1

    /// Called for every reply; the base class matches it to its request and counts errors.
    /// Returns the request it answers, or nil for an unmatched reply.
    func matchReply(_ c: Connection, id: Int64, status: Incoming.Status, _ payload: UnsafeRawBufferPointer) -> PendingQueue.Entry? {
        guard let head = c.outstanding.pop() else {
            orderViolations += 1
            return nil
        }
        if head.id != id { orderViolations += 1 }
        if status == .error {
            errorReplies += 1
            if firstError == nil { firstError = payload.text }
        }
        if head.kind == Kind.hello && c.index != controllerIndex {
            c.ready = status != .error
            connecting -= 1
            if c.ready { readyCount += 1 } else { failedCount += 1; loop.abort(c) }
            if allPagesSettled && allReadyAt == 0 { allReadyAt = monotonicNanos() }
            pumpConnects()
        }
        return head
    }

    // MARK: Writing requests

    /// Sends request `kind` with body `tail` (everything after the id); `stamp` is its start time.
    @inline(__always)
    func send(_ c: Connection, _ kind: UInt8, _ tail: [UInt8], stamp: UInt64 = 0) {
        let id = c.nextID
        c.nextID += 1
        message.removeAll(keepingCapacity: true)
        message.append(contentsOf: Driver.idPrefix)
        appendDecimal(id)
        message.append(contentsOf: tail)
        loop.sendText(c, message)
        c.outstanding.push(.init(id: id, sentAt: stamp == 0 ? monotonicNanos() : stamp, kind: kind))
    }

    private func appendDecimal(_ v: Int64) {
        var n = UInt64(v)
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var k = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[k] = UInt8(n % 10) + 0x30
                n /= 10
                k += 1
            } while n > 0
            for j in stride(from: k - 1, through: 0, by: -1) { message.append(d[j]) }
        }
    }

    // MARK: Running

    /// Polls until `done()` or the deadline; `tick` runs after every poll. Returns false on the deadline.
    func run(until done: () -> Bool, tick: () -> Void = {}, wait: () -> Int64 = { 50_000_000 }) -> Bool {
        while !done() {
            if timedOut { return false }
            loop.poll(timeoutNanos: wait())
            tick()
        }
        loop.flush()
        return true
    }

    /// Closes every connection with a closing handshake (so the peer closes first and no
    /// TIME_WAIT piles up on the load side), resetting the ones that do not answer within 3 s.
    func closeAll() {
        for c in loop.connections { loop.closeGracefully(c) }
        let until = monotonicNanos() + 3_000_000_000
        while loop.openCount > 0 && monotonicNanos() < until {
            loop.poll(timeoutNanos: 20_000_000)
        }
        for c in loop.connections { loop.abort(c) }
    }

    /// The common part of every result.
    func baseJSON() -> JSONOut {
        var j = JSONOut()
        j.str("workload", options.workload.rawValue)
        if !options.label.isEmpty { j.str("label", options.label) }
        j.int("connections", options.connections)
        j.int("pipeline", options.pipeline)
        j.int("connectFailures", loop.connectFailures)
        j.int("failedConnections", failedCount)
        j.int("errorReplies", errorReplies)
        j.int("orderViolations", orderViolations)
        if let e = firstError { j.str("firstError", String(e.prefix(300))) }
        if let f = loop.firstFailure { j.str("firstFailure", String(f.prefix(300))) }
        return j
    }
}

/// Samples this process's and the daemon's CPU time over an interval.
struct CPUWindow {
    let pid: Int32?
    var startWall: UInt64 = 0
    var startOwn = 0.0
    var startDaemon: Double?
    var startMachine: Double?

    init(pid: Int32?) { self.pid = pid }

    mutating func start() {
        startWall = monotonicNanos()
        startOwn = ownCPUSeconds()
        startDaemon = pid.flatMap(ProcFS.cpuSeconds)
        startMachine = ProcFS.machineBusySeconds()
    }

    /// Busy cores since `start`: this process, the daemon, and everything else on the machine.
    func end() -> (own: Double, daemon: Double?, other: Double?) {
        let wall = Double(monotonicNanos() - startWall) / 1e9
        let own = (ownCPUSeconds() - startOwn) / wall
        var daemon: Double?
        if let pid, let s = startDaemon, let e = ProcFS.cpuSeconds(pid) { daemon = (e - s) / wall }
        var other: Double?
        if let s = startMachine, let e = ProcFS.machineBusySeconds() {
            other = max(0, (e - s) / wall - own - (daemon ?? 0))
        }
        return (own, daemon, other)
    }
}
