import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(Glibc)
private let systemWrite = Glibc.write
#else
private let systemWrite = Darwin.write
#endif

/// How the daemon writes its log lines to standard error (`--log-format`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// `2026-01-02T03:04:05.678Z info bridged: message key=value …`, for people.
    case text
    /// One JSON object per line: `{"timestamp","level","label","message", …metadata}`.
    case json
}

/// The daemon's log handler: one line per record on standard error, in `LogFormat`.
///
/// Whatever a client controls (origins, URLs, methods, session ids) can reach a log line through
/// the message or the metadata, so every value is escaped here, whatever logged it: in text
/// lines control characters (C0, DEL, C1) and backslashes are written as `\u{…}` / `\\`, so no
/// escape sequence reaches a terminal and a line stays one line; JSON lines use JSON's own
/// escaping (`\n`, `\u001b`, …).
public struct BridgedLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public let label: String
    public let format: LogFormat
    private let write: @Sendable (String) -> Void

    public init(label: String, format: LogFormat, level: Logger.Level, write: (@Sendable (String) -> Void)? = nil) {
        self.label = label
        self.format = format
        self.logLevel = level
        self.write = write ?? { line in
            var bytes = Array(line.utf8)
            bytes.append(0x0A)
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let n = systemWrite(2, buffer.baseAddress! + offset, buffer.count - offset)
                    if n <= 0 { return }
                    offset += n
                }
            }
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(level: Logger.Level, message: Logger.Message, metadata extra: Logger.Metadata?, source: String,
                    file: String, function: String, line: UInt) {
        var all = metadata
        if let extra { all.merge(extra) { _, new in new } }
        write(Self.line(format: format, timestamp: Self.timestamp(), level: level, label: label,
                        message: message.description, metadata: all))
    }

    /// One formatted line (without the newline).
    public static func line(format: LogFormat, timestamp: String, level: Logger.Level, label: String, message: String,
                            metadata: Logger.Metadata) -> String {
        let keys = metadata.keys.sorted()
        switch format {
        case .text:
            var out = "\(timestamp) \(level) \(escapeText(label)): \(escapeText(message))"
            for key in keys { out += " \(escapeText(key))=\(escapeText(render(metadata[key]!)))" }
            return out
        case .json:
            var out = "{\"timestamp\":\(jsonString(timestamp)),\"level\":\(jsonString(level.rawValue)),"
                + "\"label\":\(jsonString(label)),\"message\":\(jsonString(message))"
            let reserved: Set<String> = ["timestamp", "level", "label", "message"]
            for key in keys {
                let name = reserved.contains(key) ? "metadata." + key : key
                out += ",\(jsonString(name)):\(json(metadata[key]!))"
            }
            return out + "}"
        }
    }

    static func render(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let s): s
        case .stringConvertible(let c): c.description
        case .array(let a): "[" + a.map(render).joined(separator: ", ") + "]"
        case .dictionary(let d): "[" + d.keys.sorted().map { "\($0): \(render(d[$0]!))" }.joined(separator: ", ") + "]"
        }
    }

    static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let s): jsonString(s)
        case .stringConvertible(let c): jsonString(c.description)
        case .array(let a): "[" + a.map(json).joined(separator: ",") + "]"
        case .dictionary(let d): "{" + d.keys.sorted().map { "\(jsonString($0)):\(json(d[$0]!))" }.joined(separator: ",") + "}"
        }
    }

    /// True for the characters a terminal may act on: C0 controls, DEL, C1 controls, and the
    /// line and paragraph separators.
    static func isControl(_ v: UInt32) -> Bool {
        v < 0x20 || (v >= 0x7F && v <= 0x9F) || v == 0x2028 || v == 0x2029
    }

    /// `s` with control characters as `\u{1b}` and backslashes doubled.
    public static func escapeText(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { isControl($0.value) || $0 == "\\" }) else { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 8)
        for scalar in s.unicodeScalars {
            if scalar == "\\" {
                out += "\\\\"
            } else if isControl(scalar.value) {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `s` as a JSON string literal (quotes included), every control character escaped.
    public static func jsonString(_ s: String) -> String {
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if isControl(scalar.value) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// Now, UTC, ISO 8601 with milliseconds.
    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = time_t(ts.tv_sec)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(ts.tv_nsec / 1_000_000), 3))Z"
    }
}
