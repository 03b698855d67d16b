#if canImport(Glibc)
import Glibc
#endif

// bridge-load: the load generator of `make bench` (see Options.usage and docs/PERFORMANCE.md).
//
// It speaks WebSocket itself on non-blocking sockets and one epoll loop rather than through
// libwebsockets' client API: a client built on lws spends about as much CPU per message as the
// lws server it drives, so from one core it could not saturate the raw lws echo server it is
// compared with. libwebsockets still provides the handshake's SHA-1 and base64.

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    let text = error.message.isEmpty ? Options.usage + "\n" : "bridge-load: \(error.message) (see bridge-load --help)\n"
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { write(error.message.isEmpty ? 1 : 2, $0.baseAddress, $0.count) }
    exit(error.message.isEmpty ? 0 : 64)
}

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

func makeLoop(_ driver: Driver) {
    driver.loop = Loop(options: options, handler: driver)
}

let result: JSONOut
switch options.workload {
case .navigation, .echo:
    let d = ThroughputDriver(options: options)
    makeLoop(d)
    result = d.execute()
case .scale:
    let d = ScaleDriver(options: options)
    makeLoop(d)
    result = d.execute()
case .timers:
    let d = TimersDriver(options: options)
    makeLoop(d)
    result = d.execute()
}

let line = result.text + "\n"
var out = Array(line.utf8)
_ = out.withUnsafeMutableBytes { write(options.json ? 1 : 2, $0.baseAddress, $0.count) }
