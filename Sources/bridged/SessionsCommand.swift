import ArgumentParser
import BridgeCheck
import BridgeProtocol
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `bridged sessions --farm URL1,URL2,…`: every session of a farm, one controller connection per
/// daemon (a proxy in front of the farm would send a connection without a session to just one of
/// them).
struct SessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List the sessions of one daemon or of every daemon of a farm.",
        discussion: """
            Opens one controller connection to each daemon, asks for session.list and prints one \
            line per session: its id, the daemon it lives on and its stack (P placeholder, W web \
            view with (*P) PWA or (*C) classic, N native screen; a trailing ~ marks a web view \
            without a connected page). Daemons that cannot be reached are reported on standard \
            error and the exit status is 1; the sessions of the others are still listed.
            """)

    @Option(name: .customLong("farm"), help: ArgumentHelp(
        "The daemons, comma-separated: http://HOST:PORT, ws://HOST:PORT/bridge or HOST:PORT. Give the daemons' own addresses, not the proxy's.",
        valueName: "url,url,…"))
    var farm: String = "http://127.0.0.1:8787"

    @Option(help: "Controller token of the daemons (also BRIDGED_TOKEN).")
    var token: String?

    @Option(name: .customLong("timeout-s"), help: "Seconds to wait for each daemon (connecting and answering).")
    var timeoutS: Int = 5

    @Flag(help: "Print one JSON object: {\"sessions\":[{\"daemon\",\"session\",\"stack\",\"foreground\"}…],\"errors\":[{\"daemon\",\"error\"}…]}.")
    var json = false

    var endpoints: [FarmEndpoint] {
        get throws {
            let parts = farm.split(separator: ",", omittingEmptySubsequences: false)
                .map { String($0).trimmingSpaces() }
            guard !parts.isEmpty, !parts.contains(where: \.isEmpty) else {
                throw ValidationError("--farm '\(farm)' has an empty entry; give daemon URLs separated by commas, e.g. --farm http://127.0.0.1:8701,http://127.0.0.1:8702")
            }
            var result: [FarmEndpoint] = []
            for raw in parts {
                do { result.append(try FarmEndpoint(parsing: raw)) } catch {
                    throw ValidationError("--farm: \(error.message)")
                }
            }
            return result
        }
    }

    func validate() throws {
        _ = try endpoints
        try check((1...3600).contains(timeoutS), "--timeout-s must be between 1 and 3600 (got \(timeoutS))")
        if let token { try check(!token.isEmpty, "--token must not be empty") }
    }

    private func check(_ ok: Bool, _ message: String) throws {
        if !ok { throw ValidationError(message) }
    }

    func run() throws {
        var resolvedToken = token
        if resolvedToken == nil, let env = getenv("BRIDGED_TOKEN"), env.pointee != 0 { resolvedToken = String(cString: env) }
        var rows: [(daemon: String, session: JSONValue)] = []
        var errors: [(daemon: String, message: String)] = []
        for endpoint in try endpoints {
            do {
                let sessions = try FarmClient.listSessions(endpoint, token: resolvedToken, timeoutMs: timeoutS * 1000)
                for s in sessions { rows.append((endpoint.display, s)) }
            } catch {
                errors.append((endpoint.display, error.message))
            }
        }
        if json {
            var w = JSONWriter(capacity: 4096)
            w.beginObject()
            w.key("sessions"); w.beginArray()
            for row in rows {
                var object = row.session.objectValue ?? JSONObject()
                object["daemon"] = .string(row.daemon)
                w.write(.object(object))
            }
            w.endArray()
            w.key("errors"); w.beginArray()
            for e in errors {
                w.beginObject(); w.key("daemon"); w.string(e.daemon); w.key("error"); w.string(e.message); w.endObject()
            }
            w.endArray()
            w.endObject()
            Stdout.writeLine(w.string)
        } else {
            let width = max(7, rows.map { ($0.session["session"]?.stringValue ?? "").utf8.count }.max() ?? 0)
            let daemonWidth = max(6, rows.map { $0.daemon.utf8.count }.max() ?? 0)
            func pad(_ s: String, _ n: Int) -> String { s + String(repeating: " ", count: max(0, n - s.utf8.count)) }
            Stdout.writeLine(pad("SESSION", width) + "  " + pad("DAEMON", daemonWidth) + "  STACK")
            for row in rows {
                let id = row.session["session"]?.stringValue ?? "?"
                Stdout.writeLine(pad(id, width) + "  " + pad(row.daemon, daemonWidth) + "  " + Self.notation(row.session["stack"]))
            }
        }
        for e in errors { Stderr.writeLine("bridged sessions: \(e.daemon): \(e.message)") }
        let count = (try endpoints).count
        Stderr.writeLine("\(rows.count) session\(rows.count == 1 ? "" : "s") on \(count - errors.count) of \(count) daemon\(count == 1 ? "" : "s")")
        if !errors.isEmpty { throw ExitCode(1) }
    }

    /// A stack in the seed's notation: `P1 W1(*P) W2(*C)~ N1`.
    static func notation(_ stack: JSONValue?) -> String {
        guard let items = stack?.arrayValue else { return "-" }
        return items.map { item -> String in
            let id = item["id"]?.stringValue ?? "?"
            guard item["kind"]?.stringValue == "webview" else { return id }
            let mode = item["mode"]?.stringValue == "pwa" ? "(*P)" : "(*C)"
            return id + mode + (item["connected"]?.boolValue == false ? "~" : "")
        }.joined(separator: " ")
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}

struct FarmError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// One daemon's WebSocket address, from `http://HOST:PORT`, `ws://HOST:PORT/PATH` or `HOST:PORT`.
struct FarmEndpoint {
    var host: String  // without brackets
    var port: Int
    var path: String
    var display: String

    init(parsing raw: String) throws(FarmError) {
        var rest = Substring(raw)
        let separator = Array("://".utf8)
        let bytes = Array(raw.utf8)
        let schemeEnd = bytes.count >= 3 ? (0...(bytes.count - 3)).first { Array(bytes[$0..<($0 + 3)]) == separator } : nil
        if let schemeEnd {
            let scheme = String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased()
            switch scheme {
            case "http", "ws": break
            case "https", "wss":
                throw FarmError("'\(raw)': TLS is not supported here; give the daemon's own plain address (http://HOST:PORT)")
            default:
                throw FarmError("'\(raw)': unknown scheme '\(scheme)'; use http://HOST:PORT or ws://HOST:PORT/bridge")
            }
            rest = Substring(String(decoding: bytes[(schemeEnd + 3)...], as: UTF8.self))
        }
        var path = "/bridge"
        if let slash = rest.firstIndex(of: "/") {
            let p = String(rest[slash...])
            if p != "/" { path = p }
            rest = rest[..<slash]
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw FarmError("'\(raw)': unterminated IPv6 address") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw FarmError("'\(raw)': expected :PORT after the IPv6 address")
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw FarmError("'\(raw)': no host; expected http://HOST:PORT") }
        let port: Int
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p) else { throw FarmError("'\(raw)': the port must be a number between 1 and 65535") }
            port = p
        } else {
            port = 8787
        }
        self.host = String(host)
        self.port = port
        self.path = path
        let shownHost = host.contains(":") ? "[\(host)]" : String(host)
        self.display = "http://\(shownHost):\(port)" + (path == "/bridge" ? "" : path)
    }

}

/// One controller's hello and `session.list`, over the project's controller client
/// (`ControllerClient`, the one `bridged check` runs on).
enum FarmClient {
    static func listSessions(_ endpoint: FarmEndpoint, token: String?, timeoutMs: Int) throws(FarmError) -> [JSONValue] {
        let deadline = Double(timeoutMs) / 1000
        let start = Date()
        func left() -> Double { max(0.001, deadline - Date().timeIntervalSince(start)) }
        let client: ControllerClient
        do {
            client = try ControllerClient(host: endpoint.host, port: endpoint.port, path: endpoint.path, timeout: deadline)
        } catch {
            if error.message.hasPrefix("cannot connect") || error.message.hasPrefix("cannot resolve") {
                throw FarmError(error.message + "; is the daemon running, and is this its address?")
            }
            throw FarmError(error.message)
        }
        defer { client.close() }
        /// The call's result, its failures said as `bridged sessions` says them.
        func call(_ what: String, _ body: () throws -> JSONValue) throws(FarmError) -> JSONValue {
            do {
                return try body()
            } catch let e as ControllerClient.CallError {
                let hint = what == "hello" && e.code == "not-allowed" ? " (pass --token or set BRIDGED_TOKEN to the daemons' controller token)" : ""
                throw FarmError(what == "hello" ? "the daemon refused the controller: \(e.code): \(e.message)\(hint)"
                                                : "\(what) failed: \(e.code): \(e.message)")
            } catch is ControllerClient.CallTimeout {
                throw FarmError("timed out waiting for the daemon (see --timeout-s)")
            } catch let e as ClientError {
                throw FarmError(e.message)
            } catch {
                throw FarmError("\(error)")
            }
        }
        _ = try call("hello") { try client.hello(token: token, timeout: left()) }
        let list = try call("session.list") { try client.call("session.list", timeout: left(), reconnecting: false) }
        guard let sessions = list["sessions"]?.arrayValue else {
            throw FarmError("session.list answered without a sessions list: is this a bridged daemon?")
        }
        return sessions
    }
}
