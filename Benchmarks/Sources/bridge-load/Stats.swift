#if canImport(Glibc)
import Glibc
#endif

@inline(__always) func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// A log-linear latency histogram in nanoseconds: exact below 128 ns, then 64 buckets per
/// power of two (every reported value is within 1.6 % of the true one). Recording is an index
/// computation and an increment.
struct Histogram {
    private static let linear = 128
    private static let perOctave = 64
    private(set) var counts: [UInt64]
    private(set) var total: UInt64 = 0
    private(set) var maxValue: UInt64 = 0
    private(set) var sum: Double = 0

    init() { counts = [UInt64](repeating: 0, count: Histogram.index(.max) + 1) }

    @inline(__always) static func index(_ v: UInt64) -> Int {
        if v < UInt64(linear) { return Int(v) }
        let msb = 63 - v.leadingZeroBitCount  // >= 7
        let e = msb - 6                       // >= 1
        let m = Int(v >> UInt64(e))           // 64..<128
        return linear + (e - 1) * perOctave + (m - perOctave)
    }

    /// The middle of bucket `i`.
    static func value(_ i: Int) -> Double {
        if i < linear { return Double(i) }
        let e = (i - linear) / perOctave + 1
        let m = (i - linear) % perOctave + perOctave
        let lo = Double(m) * Double(UInt64(1) << UInt64(e))
        return lo + Double(UInt64(1) << UInt64(e)) / 2
    }

    @inline(__always) mutating func record(_ v: UInt64) {
        counts[Histogram.index(v)] &+= 1
        total &+= 1
        sum += Double(v)
        if v > maxValue { maxValue = v }
    }

    mutating func reset() { self = Histogram() }

    /// The value at quantile `q` (0...1), in nanoseconds; 0 when empty.
    func quantile(_ q: Double) -> Double {
        guard total > 0 else { return 0 }
        let rank = max(1, UInt64((q * Double(total)).rounded(.up)))
        var seen: UInt64 = 0
        for (i, c) in counts.enumerated() where c > 0 {
            seen += c
            if seen >= rank { return min(Histogram.value(i), Double(maxValue)) }
        }
        return Double(maxValue)
    }

    var mean: Double { total == 0 ? 0 : sum / Double(total) }
}

/// Exact quantiles of a small sample (timer lateness): sorts a copy.
func quantiles(_ values: [Double], _ qs: [Double]) -> [Double] {
    guard !values.isEmpty else { return qs.map { _ in 0 } }
    let s = values.sorted()
    return qs.map { q in s[min(s.count - 1, max(0, Int((q * Double(s.count)).rounded(.up)) - 1))] }
}

/// CPU seconds (user + system) of this process.
func ownCPUSeconds() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6
        + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
}

/// Reads small /proc files of another process.
enum ProcFS {
    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            out.append(contentsOf: buf[0..<n])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// utime + stime of `pid`, in seconds.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let stat = read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after "comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return nil }
        return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Busy CPU seconds of the whole machine since boot (all CPUs; /proc/stat minus idle and iowait).
    static func machineBusySeconds() -> Double? {
        guard let stat = read("/proc/stat"), let line = stat.split(separator: "\n").first else { return nil }
        let v = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard v.count >= 5 else { return nil }
        return (v.reduce(0, +) - v[3] - v[4]) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A `kB` line of /proc/PID/status (`VmRSS`, `RssAnon`, `VmHWM`), in KiB.
    static func statusKiB(_ pid: Int32, _ key: String) -> Int? {
        guard let status = read("/proc/\(pid)/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
            let digits = line.dropFirst(key.count + 1).filter { $0.isNumber }
            return Int(digits)
        }
        return nil
    }
}

/// A flat JSON object written by hand (numbers, strings, nested objects), for the harness.
struct JSONOut {
    private var parts: [String] = []

    mutating func num(_ key: String, _ v: Double, digits: Int = 3) {
        let text: String
        if !v.isFinite {
            text = "null"
        } else if v == v.rounded() && abs(v) < 1e15 {
            text = String(Int64(v))
        } else {
            var p = 1.0
            for _ in 0..<digits { p *= 10 }
            text = String((v * p).rounded() / p)
        }
        parts.append("\"\(key)\":\(text)")
    }

    mutating func int(_ key: String, _ v: Int) { parts.append("\"\(key)\":\(v)") }

    mutating func str(_ key: String, _ v: String) { parts.append("\"\(key)\":\(JSONOut.quote(v))") }

    mutating func bool(_ key: String, _ v: Bool) { parts.append("\"\(key)\":\(v)") }

    mutating func object(_ key: String, _ v: JSONOut) { parts.append("\"\(key)\":\(v.text)") }

    var text: String { "{" + parts.joined(separator: ",") + "}" }

    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }
}

/// The latency part of a result: quantiles in milliseconds.
func latencyJSON(_ h: Histogram) -> JSONOut {
    var j = JSONOut()
    j.num("p50", h.quantile(0.5) / 1e6, digits: 4)
    j.num("p90", h.quantile(0.9) / 1e6, digits: 4)
    j.num("p99", h.quantile(0.99) / 1e6, digits: 4)
    j.num("p999", h.quantile(0.999) / 1e6, digits: 4)
    j.num("max", Double(h.maxValue) / 1e6, digits: 4)
    j.num("mean", h.mean / 1e6, digits: 4)
    j.num("count", Double(h.total))
    return j
}
