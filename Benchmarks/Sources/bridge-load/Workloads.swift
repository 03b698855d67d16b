#if canImport(Glibc)
import Glibc
#endif

/// `navigation` and `echo`: every page loops requests as fast as replies come back (or on the
/// `--rate` schedule), `--pipeline` requests in flight each.
final class ThroughputDriver: Driver {
    enum Phase { case connecting, warmup, measuring, done }
    var phase = Phase.connecting
    var histogram = Histogram()
    var repliesByKind = [Int](repeating: 0, count: Kind.count)
    var replies = 0
    var events = 0
    var backEvents = 0
    var measureStart: UInt64 = 0
    var measureEnd: UInt64 = 0
    var warmupEnd: UInt64 = 0
    var framesInStart = 0
    var framesOutStart = 0
    var cpu: CPUWindow
    var cpuResult: (own: Double, daemon: Double?, other: Double?) = (0, nil, nil)
    let navigateTails: [[UInt8]]
    let cycle: Int

    // --rate: request n is due at tokenStart + n / rate.
    var tokenStart: UInt64 = 0
    var tokensTaken: UInt64 = 0
    let nanosPerToken: Double
    var waitQueue: [Connection] = []
    var waitHead = 0

    override init(options: Options) {
        cpu = CPUWindow(pid: options.daemonPID)
        navigateTails = (0..<options.depth).map { Driver.navigate($0 + 1) }
        cycle = 4 * options.depth
        nanosPerToken = options.rate.map { 1e9 / $0 } ?? 0
        super.init(options: options)
    }

    func execute() -> JSONOut {
        addPages(options.connections)
        pumpConnects()
        guard run(until: { allPagesSettled }) else { fatal("timed out connecting \(options.connections) pages (\(readyCount) ready)") }
        if readyCount == 0 { fatal("no page connected: \(loop.firstFailure ?? firstError ?? "?")") }
        let now = monotonicNanos()
        tokenStart = now
        warmupEnd = now + UInt64(options.warmup * 1e9)
        measureEnd = warmupEnd + UInt64(options.duration * 1e9)
        phase = options.warmup > 0 ? .warmup : .measuring
        if phase == .measuring { startMeasuring(now) }
        for c in pages where c.ready { fill(c, now) }
        let finished = run(until: { phase == .done }, tick: tick, wait: waitNanos)
        if !finished { fatal("deadline reached before the run ended") }
        closeAll()
        return report()
    }

    private func startMeasuring(_ now: UInt64) {
        histogram.reset()
        repliesByKind = [Int](repeating: 0, count: Kind.count)
        replies = 0
        events = 0
        backEvents = 0
        errorReplies = 0
        framesInStart = loop.framesIn
        framesOutStart = loop.framesOut
        measureStart = now
        cpu.start()
    }

    private func tick() {
        let now = monotonicNanos()
        if phase == .warmup && now >= warmupEnd {
            phase = .measuring
            startMeasuring(now)
        }
        if phase == .measuring && now >= measureEnd {
            cpuResult = cpu.end()
            measureEnd = now
            phase = .done
            return
        }
        if options.rate != nil {
            while waitHead < waitQueue.count {
                let c = waitQueue[waitHead]
                guard dueTime() <= now else { break }
                waitHead += 1
                c.waiting = false
                fill(c, now)
            }
            if waitHead > 4096 && waitHead * 2 > waitQueue.count {
                waitQueue.removeFirst(waitHead)
                waitHead = 0
            }
        }
    }

    private func waitNanos() -> Int64 {
        let now = monotonicNanos()
        var until = phase == .warmup ? warmupEnd : measureEnd
        if options.rate != nil && waitHead < waitQueue.count { until = min(until, dueTime()) }
        return until > now ? Int64(until - now) : 0
    }

    @inline(__always) private func dueTime() -> UInt64 {
        tokenStart + UInt64(Double(tokensTaken) * nanosPerToken)
    }

    /// Sends this page's next requests until `--pipeline` are in flight.
    private func fill(_ c: Connection, _ now: UInt64) {
        guard phase == .warmup || phase == .measuring, c.ready else { return }
        while c.outstanding.count < options.pipeline {
            var stamp = now
            if options.rate != nil {
                let due = dueTime()
                if due > now {
                    if !c.waiting {
                        c.waiting = true
                        waitQueue.append(c)
                    }
                    return
                }
                tokensTaken += 1
                stamp = due
            }
            sendNext(c, stamp)
        }
    }

    private func sendNext(_ c: Connection, _ stamp: UInt64) {
        if options.workload == .echo {
            send(c, Kind.ping, Driver.ping, stamp: stamp)
            return
        }
        let pos = c.step % cycle
        c.step += 1
        let depth = options.depth
        if pos & 1 == 1 {
            send(c, Kind.rendered, Driver.rendered, stamp: stamp)
        } else if pos < 2 * depth {
            send(c, Kind.navigate, navigateTails[pos / 2], stamp: stamp)
        } else {
            send(c, Kind.back, Driver.back, stamp: stamp)
        }
    }

    override func text(_ c: Connection, _ payload: UnsafeRawBufferPointer) {
        switch Scanner.classify(payload) {
        case .reply(let id, let status):
            guard let request = matchReply(c, id: id, status: status, payload) else { return }
            if request.kind == Kind.hello { return }
            let now = monotonicNanos()
            if phase == .measuring {
                histogram.record(now &- request.sentAt)
                replies += 1
                repliesByKind[Int(request.kind)] += 1
            }
            fill(c, now)
        case .event(let name):
            if phase == .measuring {
                events += 1
                if payload.equals(name, "back") { backEvents += 1 }
            }
        case .unattributed:
            errorReplies += 1
            if firstError == nil { firstError = payload.text }
        case .other:
            if firstError == nil { firstError = "unrecognised frame: " + payload.text }
            errorReplies += 1
        }
    }

    private func report() -> JSONOut {
        let seconds = Double(measureEnd - measureStart) / 1e9
        var j = baseJSON()
        j.int("readyConnections", readyCount)
        j.num("seconds", seconds)
        if let r = options.rate { j.num("targetRate", r) }
        if options.workload == .navigation { j.int("depth", options.depth) }
        j.num("repliesPerSecond", Double(replies) / seconds, digits: 0)
        j.num("navigationsPerSecond", Double(repliesByKind[Int(Kind.navigate)]) / seconds, digits: 0)
        j.num("backsPerSecond", Double(repliesByKind[Int(Kind.back)]) / seconds, digits: 0)
        let framesIn = loop.framesIn - framesInStart
        let framesOut = loop.framesOut - framesOutStart
        j.num("messagesPerSecond", Double(framesIn + framesOut) / seconds, digits: 0)
        j.int("replies", replies)
        j.int("events", events)
        j.int("backEvents", backEvents)
        j.int("framesIn", framesIn)
        j.int("framesOut", framesOut)
        j.object("latencyMs", latencyJSON(histogram))
        j.num("loadCpu", cpuResult.own)
        if let d = cpuResult.daemon { j.num("daemonCpu", d) }
        if let o = cpuResult.other { j.num("otherCpu", o, digits: 2) }
        return j
    }
}

/// `scale`: connect `--connections` pages, then read the daemon's memory, then one ping each.
final class ScaleDriver: Driver {
    var pingHistogram = Histogram()
    var pingReplies = 0
    var sweeping = false

    func execute() -> JSONOut {
        let pid = options.daemonPID
        let rssBefore = pid.flatMap { ProcFS.statusKiB($0, "VmRSS") }
        let anonBefore = pid.flatMap { ProcFS.statusKiB($0, "RssAnon") }
        addPages(options.connections)
        pumpConnects()
        guard run(until: { allPagesSettled }) else { fatal("timed out connecting (\(readyCount) of \(options.connections) ready)") }
        let connectSeconds = Double(allReadyAt - connectStarted) / 1e9
        let holdUntil = monotonicNanos() + UInt64(options.hold * 1e9)
        _ = run(until: { monotonicNanos() >= holdUntil }, wait: {
            let now = monotonicNanos()
            return now < holdUntil ? Int64(holdUntil - now) : 0
        })
        let rssAfter = pid.flatMap { ProcFS.statusKiB($0, "VmRSS") }
        let anonAfter = pid.flatMap { ProcFS.statusKiB($0, "RssAnon") }
        let stillOpen = readyCount

        sweeping = true
        let sweepStart = monotonicNanos()
        var sent = 0
        for c in pages where c.ready {
            send(c, Kind.ping, Driver.ping)
            sent += 1
        }
        let swept = run(until: { pingReplies + failedCount >= sent || readyCount == 0 })
        let sweepSeconds = Double(monotonicNanos() - sweepStart) / 1e9
        closeAll()

        var j = baseJSON()
        j.int("readyConnections", stillOpen)
        j.num("connectSeconds", connectSeconds)
        j.num("connectsPerSecond", Double(options.connections) / max(connectSeconds, 1e-9), digits: 0)
        if let rssBefore, let rssAfter {
            j.int("rssBeforeKiB", rssBefore)
            j.int("rssAfterKiB", rssAfter)
            j.num("rssPerConnectionKiB", Double(rssAfter - rssBefore) / Double(max(stillOpen, 1)), digits: 2)
        }
        if let anonBefore, let anonAfter {
            j.num("anonPerConnectionKiB", Double(anonAfter - anonBefore) / Double(max(stillOpen, 1)), digits: 2)
        }
        j.bool("pingSweepComplete", swept && pingReplies == sent)
        j.num("pingSweepSeconds", sweepSeconds)
        j.object("pingLatencyMs", latencyJSON(pingHistogram))
        return j
    }

    override func text(_ c: Connection, _ payload: UnsafeRawBufferPointer) {
        switch Scanner.classify(payload) {
        case .reply(let id, let status):
            guard let request = matchReply(c, id: id, status: status, payload) else { return }
            if request.kind == Kind.ping {
                pingHistogram.record(monotonicNanos() &- request.sentAt)
                pingReplies += 1
            }
        case .event:
            break
        case .unattributed, .other:
            errorReplies += 1
            if firstError == nil { firstError = payload.text }
        }
    }
}

/// `timers`: a controller watches `foreground.removed`; every page starts one foreground (spread
/// over `--spread` seconds) and never renders, so every fallback timer fires.
final class TimersDriver: Driver {
    var controller: Connection!
    var controllerReady = false
    var pageBySession: [String: Int] = [:]
    var navigationsSent = 0
    var navigationsAnswered = 0
    var removed = 0
    var removedByReason: [String: Int] = [:]
    var pending = 0
    var pendingPeak = 0
    var daemonLateness: [Double] = []
    var observedLateness: [Double] = []
    var navigateTail = Driver.navigate(1)

    func execute() -> JSONOut {
        controller = loop.makeConnection()
        controllerIndex = controller.index
        loop.connect(controller)
        guard run(until: { controllerReady || controllerFailed }), controllerReady else {
            fatal("the controller could not subscribe: \(firstError ?? loop.firstFailure ?? "timed out")")
        }
        addPages(options.connections)
        pumpConnects()
        guard run(until: { allPagesSettled }) else { fatal("timed out connecting (\(readyCount) of \(options.connections) ready)") }
        let connectSeconds = Double(allReadyAt - connectStarted) / 1e9
        let ready = pages.filter(\.ready)

        let t0 = monotonicNanos()
        let step = options.spread * 1e9 / Double(max(ready.count, 1))
        var next = 0
        func due(_ i: Int) -> UInt64 { t0 + UInt64(Double(i) * step) }
        let launch = {
            let now = monotonicNanos()
            while next < ready.count && due(next) <= now {
                let c = ready[next]
                c.navigatedAt = now
                self.send(c, Kind.navigate, self.navigateTail, stamp: now)
                self.navigationsSent += 1
                next += 1
            }
        }
        let limit = t0 + UInt64((options.spread + Double(options.timeoutMs) / 1000 + 10) * 1e9)
        let done = run(until: { (next == ready.count && removed >= ready.count) || monotonicNanos() >= limit || controllerFailed },
                       tick: launch,
                       wait: {
                           let now = monotonicNanos()
                           if next < ready.count { return due(next) > now ? Int64(due(next) - now) : 0 }
                           return 50_000_000
                       })
        closeAll()

        var j = baseJSON()
        j.int("readyConnections", ready.count)
        j.num("connectSeconds", connectSeconds)
        j.int("timeoutMs", options.timeoutMs)
        j.num("spreadSeconds", options.spread)
        j.int("navigations", navigationsSent)
        j.int("navigationsAnswered", navigationsAnswered)
        j.int("removed", removed)
        j.int("timedOut", removedByReason["timeout"] ?? 0)
        j.int("pendingPeak", pendingPeak)
        j.bool("complete", done && removed == ready.count)
        let qs = [0.5, 0.99, 1.0]
        let d = quantiles(daemonLateness, qs)
        var dj = JSONOut()
        dj.num("p50", d[0]); dj.num("p99", d[1]); dj.num("max", d[2])
        j.object("daemonLatenessMs", dj)
        let o = quantiles(observedLateness, qs)
        var oj = JSONOut()
        oj.num("p50", o[0]); oj.num("p99", o[1]); oj.num("max", o[2])
        j.object("observedLatenessMs", oj)
        return j
    }

    override func text(_ c: Connection, _ payload: UnsafeRawBufferPointer) {
        switch Scanner.classify(payload) {
        case .reply(let id, let status):
            guard let request = matchReply(c, id: id, status: status, payload) else { return }
            if c.index == controllerIndex {
                if request.kind == Kind.hello {
                    if status == .error { controllerFailed = true } else { send(c, Kind.subscribe, Driver.subscribeRemoved) }
                } else if request.kind == Kind.subscribe {
                    if status == .error { controllerFailed = true } else { controllerReady = true }
                }
                return
            }
            if request.kind == Kind.hello, status != .error, let sid = payload.stringField(#""session":""#) {
                pageBySession[sid] = c.index
            } else if request.kind == Kind.navigate, status != .error {
                navigationsAnswered += 1
                pending += 1
                pendingPeak = max(pendingPeak, pending)
            }
        case .event(let name):
            guard c.index == controllerIndex, payload.equals(name, "foreground.removed") else { return }
            let now = monotonicNanos()
            removed += 1
            pending -= 1
            let reason = payload.stringField(#""reason":""#) ?? "?"
            removedByReason[reason, default: 0] += 1
            guard reason == "timeout", let latency = payload.intField(#""latencyMs":"#) else { return }
            daemonLateness.append(Double(latency - Int64(options.timeoutMs)))
            if let sid = payload.stringField(#""session":""#), let page = pageBySession[sid] {
                let sentAt = loop.connections[page].navigatedAt
                observedLateness.append(Double(now - sentAt) / 1e6 - Double(options.timeoutMs))
            }
        case .unattributed, .other:
            errorReplies += 1
            if firstError == nil { firstError = payload.text }
        }
    }
}
