#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CWebsockets
import Logging

/// Routes libwebsockets' own log (errors and warnings only) into a swift-log `Logger`.
///
/// lws keeps one process-wide emit function (a C function pointer, so no captures): the logger
/// lives in a global box. The most recently started transport's logger wins.
enum LWSLog {
    static let box = Locked<Logger?>(nil)

    static func install(_ logger: Logger) {
        box.withLock { $0 = logger }
        // BRIDGED_LWS_LOG=<LLL_ bitmask> widens lws's own log for diagnosis (e.g. 1023).
        var mask = Int32(LLL_ERR | LLL_WARN)
        if let env = getenv("BRIDGED_LWS_LOG"), let value = Int32(String(cString: env)) { mask = value }
        lws_set_log_level(mask) { level, line in
            guard let line else { return }
            LWSLog.emit(level: level, line: String(cString: line))
        }
    }

    static func emit(level: Int32, line: String) {
        guard let logger = box.withLock({ $0 }) else { return }
        let message = clean(line)
        if level & Int32(LLL_ERR) != 0 {
            logger.error("lws: \(message)")
        } else if level & Int32(LLL_WARN) != 0 {
            logger.warning("lws: \(message)")
        } else {
            logger.notice("lws: \(message)")
        }
    }

    /// Drops the trailing newline and lws's own `[date time] E: ` prefix.
    static func clean(_ line: String) -> String {
        var s = Substring(line)
        while let last = s.last, last == "\n" || last == "\r" { s = s.dropLast() }
        if s.hasPrefix("["), let close = s.firstIndex(of: "]") {
            var rest = s[s.index(after: close)...]
            while rest.first == " " { rest = rest.dropFirst() }
            // e.g. "E: " / "W: "
            if rest.count >= 3, rest.dropFirst().hasPrefix(": ") { rest = rest.dropFirst(3) }
            s = rest
        }
        return String(s)
    }
}
