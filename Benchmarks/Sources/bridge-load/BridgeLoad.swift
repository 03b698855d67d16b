import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// What to run, from the command line (parsed by `BridgeLoad`). Every workload stops by itself
/// (durations, and a hard deadline for everything).
struct Options {
    enum Workload: String, CaseIterable, ExpressibleByArgument {
        case navigation, echo, scale, timers
    }

    var workload: Workload = .navigation
    var host = "127.0.0.1"
    var port = 8787
    var path = "/bridge"
    var connections = 100
    var duration = 5.0
    var warmup = 1.0
    var pipeline = 1
    var rate: Double?
    var depth = 4
    var daemonPID: Int32?
    var hold = 1.0
    var spread = 2.0
    var timeoutMs = 5000
    var connectConcurrency = 256
    var deadline = 180.0
    var json = false
    var label = ""

    /// `ws://A.B.C.D:PORT/path` → (host, port, path).
    static func parseURL(_ url: String) -> (String, Int, String)? {
        guard url.hasPrefix("ws://") else { return nil }
        let rest = url.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        let path = slash == rest.endIndex ? "/" : String(rest[slash...])
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
        let host = String(parts[0])
        var addr = in_addr()
        guard inet_pton(AF_INET, host, &addr) == 1 else { return nil }
        return (host, port, path)
    }
}

/// bridge-load: the load generator of `make bench` (see docs/PERFORMANCE.md).
///
/// It speaks WebSocket itself on non-blocking sockets and one epoll loop rather than through
/// libwebsockets' client API: a client built on lws spends about as much CPU per message as the
/// lws server it drives, so from one core it could not saturate the raw lws echo server it is
/// compared with. libwebsockets still provides the handshake's SHA-1 and base64.
@main
struct BridgeLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bridge-load",
        abstract: "Drives a bridged daemon (or a peer speaking the same frames) over WebSocket and prints what it measured.",
        discussion: """
            One thread, raw non-blocking sockets and epoll. Workloads:

            navigation: pages loop pwa-navigate -> reply -> pwa-rendered -> reply, going --depth steps deep and then back as many steps (back -> reply + back event -> pwa-rendered -> reply); navigations/s, replies/s, messages/s, latency.

            echo: pages loop ping -> reply, the cheapest request of the protocol (against a raw echo server the echoed request is the reply).

            scale: --connections pages connect and say hello; time to connect them all, then the daemon's RSS per connection (needs --daemon-pid), then one ping each.

            timers: one controller subscribed to foreground.removed; --connections pages each send one pwa-navigate (spread over --spread s) and never pwa-rendered; lateness of every fallback = latencyMs - --timeout-ms.
            """)

    @Argument(help: "navigation, echo, scale or timers.")
    var workload: Options.Workload

    @Option(help: ArgumentHelp("Where to connect.", valueName: "ws://HOST:PORT/PATH"))
    var url = "ws://127.0.0.1:8787/bridge"

    @Option(help: "Pages (1...100000).")
    var connections = 100

    @Option(help: "Measured seconds.")
    var duration = 5.0

    @Option(help: "Unmeasured seconds before.")
    var warmup = 1.0

    @Option(help: "Requests outstanding per connection (1...1024).")
    var pipeline = 1

    @Option(help: "Total requests/s, open-loop schedule; latency counts from the scheduled send time (default: as fast as replies come).")
    var rate: Double?

    @Option(help: "navigation: steps forward before going back (1...10000).")
    var depth = 4

    @Option(name: .customLong("daemon-pid"), help: "Read the daemon's CPU time and RSS from /proc/PID.")
    var daemonPID: Int?

    @Option(help: "scale: seconds to settle before reading RSS.")
    var hold = 1.0

    @Option(help: "timers: seconds over which the navigations start.")
    var spread = 2.0

    @Option(name: .customLong("timeout-ms"), help: "timers: the daemon's --foreground-timeout-ms (1...600000).")
    var timeoutMs = 5000

    @Option(name: .customLong("connect-concurrency"), help: "Handshakes in flight at once (1...100000).")
    var connectConcurrency = 256

    @Option(help: "Give up after this many seconds whatever happens.")
    var deadline = 180.0

    @Option(help: "Copied into the JSON result.")
    var label = ""

    @Flag(help: "Print one JSON object on stdout (the summary goes to stderr).")
    var json = false

    func validate() throws {
        func check(_ ok: Bool, _ message: @autoclosure () -> String) throws {
            if !ok { throw ValidationError(message()) }
        }
        func seconds(_ name: String, _ v: Double, min: Double = 0) throws {
            try check(v.isFinite && v >= min && v <= 86_400, "\(name) must be a number of seconds >= \(min) (got \(v))")
        }
        try check(Options.parseURL(url) != nil, "--url must look like ws://127.0.0.1:8787/bridge (an IPv4 address; got '\(url)')")
        try check((1...100_000).contains(connections), "--connections must be an integer in 1...100000 (got \(connections))")
        try seconds("--duration", duration, min: 0.1)
        try seconds("--warmup", warmup)
        try check((1...1024).contains(pipeline), "--pipeline must be an integer in 1...1024 (got \(pipeline))")
        if let rate { try check(rate.isFinite && rate > 0, "--rate must be a positive number (got \(rate))") }
        try check((1...10_000).contains(depth), "--depth must be an integer in 1...10000 (got \(depth))")
        if let daemonPID { try check((1...Int(Int32.max)).contains(daemonPID), "--daemon-pid must be a process id (got \(daemonPID))") }
        try seconds("--hold", hold)
        try seconds("--spread", spread)
        try check((1...600_000).contains(timeoutMs), "--timeout-ms must be an integer in 1...600000 (got \(timeoutMs))")
        try check((1...100_000).contains(connectConcurrency), "--connect-concurrency must be an integer in 1...100000 (got \(connectConcurrency))")
        try seconds("--deadline", deadline, min: 1)
        if workload == .timers {
            try check(spread * 1000 < Double(timeoutMs),
                      "--spread (\(spread) s) must be shorter than --timeout-ms (\(timeoutMs) ms), or the foregrounds are never all pending at once")
        }
    }

    var options: Options {
        var o = Options()
        o.workload = workload
        (o.host, o.port, o.path) = Options.parseURL(url)!
        o.connections = connections
        o.duration = duration
        o.warmup = warmup
        o.pipeline = pipeline
        o.rate = rate
        o.depth = depth
        o.daemonPID = daemonPID.map { Int32($0) }
        o.hold = hold
        o.spread = spread
        o.timeoutMs = timeoutMs
        o.connectConcurrency = connectConcurrency
        o.deadline = deadline
        o.json = json
        o.label = label
        return o
    }

    func run() throws {
        let options = self.options
        // Each connection is one descriptor: raise the soft limit as far as the hard limit allows.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        if Int(limit.rlim_cur) < options.connections + 64 {
            fatal("--connections \(options.connections) needs more file descriptors than the limit allows (\(limit.rlim_cur)); raise ulimit -n")
        }
        signal(SIGPIPE, SIG_IGN)

        let result: JSONOut
        switch options.workload {
        case .navigation, .echo:
            let d = ThroughputDriver(options: options)
            d.loop = Loop(options: options, handler: d)
            result = d.execute()
        case .scale:
            let d = ScaleDriver(options: options)
            d.loop = Loop(options: options, handler: d)
            result = d.execute()
        case .timers:
            let d = TimersDriver(options: options)
            d.loop = Loop(options: options, handler: d)
            result = d.execute()
        }

        let line = result.text + "\n"
        var out = Array(line.utf8)
        _ = out.withUnsafeMutableBytes { write(options.json ? 1 : 2, $0.baseAddress, $0.count) }
    }
}
