#if canImport(Glibc)
import Glibc
#endif

/// What to run, from the command line. Every workload stops by itself (durations, and a hard
/// deadline for everything).
struct Options {
    enum Workload: String, CaseIterable {
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

    static let usage = """
        usage: bridge-load WORKLOAD [options]

        Drives a bridged daemon (or a peer speaking the same frames) over WebSocket from one
        thread, on raw non-blocking sockets and epoll, and prints what it measured.

        Workloads:
          navigation  pages loop pwa-navigate -> reply -> pwa-rendered -> reply, going --depth
                      steps deep and then back as many steps (back -> reply + back event ->
                      pwa-rendered -> reply); navigations/s, replies/s, messages/s, latency
          echo        pages loop ping -> reply: the cheapest request of the protocol (against a
                      raw echo server the echoed request is the reply)
          scale       --connections pages connect and say hello; time to connect them all, then
                      the daemon's RSS per connection (needs --daemon-pid), then one ping each
          timers      one controller subscribed to foreground.removed; --connections pages each
                      send one pwa-navigate (spread over --spread s) and never pwa-rendered;
                      lateness of every fallback = latencyMs - --timeout-ms

        Options:
          --url ws://HOST:PORT/PATH     where to connect (default ws://127.0.0.1:8787/bridge)
          --connections N               pages (default 100)
          --duration S                  measured seconds (default 5)
          --warmup S                    unmeasured seconds before (default 1)
          --pipeline P                  requests outstanding per connection (default 1)
          --rate R                      total requests/s, open-loop schedule; latency counts
                                        from the scheduled send time (default: as fast as replies come)
          --depth D                     navigation: steps forward before going back (default 4)
          --daemon-pid PID              read the daemon's CPU time and RSS from /proc/PID
          --hold S                      scale: seconds to settle before reading RSS (default 1)
          --spread S                    timers: seconds over which the navigations start (default 2)
          --timeout-ms MS               timers: the daemon's --foreground-timeout-ms (default 5000)
          --connect-concurrency C       handshakes in flight at once (default 256)
          --deadline S                  give up after S seconds whatever happens (default 180)
          --label NAME                  copied into the JSON result
          --json                        print one JSON object on stdout (the summary goes to stderr)
        """

    static func parse(_ args: [String]) throws(UsageError) -> Options {
        var o = Options()
        guard let first = args.first else { throw UsageError("missing WORKLOAD") }
        if first == "--help" || first == "-h" { throw UsageError("") }
        guard let w = Workload(rawValue: first) else {
            throw UsageError("unknown workload '\(first)' (navigation, echo, scale, timers)")
        }
        o.workload = w
        var i = 1
        func value(_ name: String) throws(UsageError) -> String {
            guard i + 1 < args.count else { throw UsageError("\(name) needs a value") }
            i += 1
            return args[i]
        }
        func int(_ name: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
            let s = try value(name)
            guard let v = Int(s), range.contains(v) else {
                throw UsageError("\(name) must be an integer in \(range.lowerBound)...\(range.upperBound) (got '\(s)')")
            }
            return v
        }
        func seconds(_ name: String, min: Double = 0) throws(UsageError) -> Double {
            let s = try value(name)
            guard let v = Double(s), v.isFinite, v >= min, v <= 86_400 else {
                throw UsageError("\(name) must be a number of seconds >= \(min) (got '\(s)')")
            }
            return v
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "--url":
                let url = try value(a)
                guard let (h, p, path) = Options.parseURL(url) else {
                    throw UsageError("--url must look like ws://127.0.0.1:8787/bridge (an IPv4 address; got '\(url)')")
                }
                (o.host, o.port, o.path) = (h, p, path)
            case "--connections": o.connections = try int(a, 1...100_000)
            case "--duration": o.duration = try seconds(a, min: 0.1)
            case "--warmup": o.warmup = try seconds(a)
            case "--pipeline": o.pipeline = try int(a, 1...1024)
            case "--rate":
                let s = try value(a)
                guard let r = Double(s), r.isFinite, r > 0 else { throw UsageError("--rate must be a positive number (got '\(s)')") }
                o.rate = r
            case "--depth": o.depth = try int(a, 1...10_000)
            case "--daemon-pid": o.daemonPID = Int32(try int(a, 1...Int(Int32.max)))
            case "--hold": o.hold = try seconds(a)
            case "--spread": o.spread = try seconds(a)
            case "--timeout-ms": o.timeoutMs = try int(a, 1...600_000)
            case "--connect-concurrency": o.connectConcurrency = try int(a, 1...100_000)
            case "--deadline": o.deadline = try seconds(a, min: 1)
            case "--label": o.label = try value(a)
            case "--json": o.json = true
            case "--help", "-h": throw UsageError("")
            default: throw UsageError("unknown option '\(a)'")
            }
            i += 1
        }
        if o.workload == .timers && o.spread * 1000 >= Double(o.timeoutMs) {
            throw UsageError("--spread (\(o.spread) s) must be shorter than --timeout-ms (\(o.timeoutMs) ms), or the foregrounds are never all pending at once")
        }
        return o
    }

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

struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
