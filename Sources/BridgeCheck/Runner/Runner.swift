import BridgeProtocol
import Foundation

/// Why a check could not run (exit 2).
public struct CheckCannotRun: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public struct CheckOptions: Sendable {
    public var url: String
    public var steps: [Step]?
    public var budgetMs: Int?
    public var maxStates: Int
    /// The daemon's WebSocket endpoint (`ws://127.0.0.1:PORT/bridge` as host and port).
    public var host: String
    public var port: Int
    /// How long to wait for a page to connect, a step to settle or a render (seconds).
    public var timeout: Double = 30
    /// `--profile`: the native shell the app is written for (`astro`, `hotwire-native`).
    public var profile: CheckProfile = .astro
    /// The session's profile (parsed once, by `SessionProfile.parse`): its params go into the
    /// check's `session.create`.
    public var session: SessionProfile = .plain
    /// The most screenshots the report keeps (one after each step); later steps have none.
    public var maxScreenshots: Int = CheckOptions.defaultMaxScreenshots
    public static let defaultMaxScreenshots = 200
    /// How long the page must be still (no DOM change, no request, no event) after a step.
    public var stillnessMs: Int = 250
    /// How long, after a page opened another window (`window.open`, a link with a `target`), the
    /// app is not still while that page stays on top: the web view for the window has not been
    /// stacked yet (Chromium reports the window some time after the tap).
    public var openingMs: Int = 2000
    /// How long the start page may show the browser's error page before the check gives up
    /// waiting for the daemon's `webview.failed` (which names the net error) and says so
    /// without it (seconds; bounded by `timeout` too).
    public var errorPageGrace: Double = 5

    public init(url: String, steps: [Step]?, budgetMs: Int?, maxStates: Int, host: String, port: Int) {
        self.url = url
        self.steps = steps
        self.budgetMs = budgetMs
        self.maxStates = maxStates
        self.host = host
        self.port = port
    }
}

/// A controller of the daemon's own protocol: requests with replies, events kept in order.
final class ControllerClient {
    let ws: WebSocketClient
    var nextID = 1
    var onEvent: (String, JSONValue) -> Void = { _, _ in }

    init(host: String, port: Int) throws {
        ws = try WebSocketClient(host: host, port: port, path: "/bridge")
    }

    /// The daemon answered with an error (the connection is fine).
    struct CallError: Error { var code: String; var message: String }

    /// `f`'s value, or nil when the daemon answered it with an error (a page gone, no
    /// screenshot); a lost connection or no reply is thrown on: the check cannot go on.
    func soft<T>(_ f: () throws -> T) throws -> T? {
        do { return try f() } catch is CallError { return nil }
    }

    func call(_ method: String, _ params: JSONObject = [:], timeout: Double = 60) throws -> JSONValue {
        let id = nextID
        nextID += 1
        try ws.send(JSONValue.object(["id": .int(Int64(id)), "method": .string(method), "params": .object(params)]).jsonString)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, let text = try ws.receive(timeout: left) else { throw ClientError("no reply to \(method) within \(Int(timeout)) s") }
            guard let v = try? JSONParser.parse(text, maxDepth: 64) else { continue }
            if let name = v["event"]?.stringValue { onEvent(name, v["params"] ?? .null); continue }
            guard v["id"]?.intValue == Int64(id) else { continue }
            if let e = v["error"] {
                throw CallError(code: e["code"]?.stringValue ?? "?", message: e["message"]?.stringValue ?? "")
            }
            return v["result"] ?? .null
        }
    }

    /// Reads events for up to `seconds`, or until `until` says stop after an event.
    func pump(_ seconds: Double, until: () -> Bool = { false }) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 || until() { return }
            guard let text = try ws.receive(timeout: left) else { return }
            if let v = try? JSONParser.parse(text, maxDepth: 64), let name = v["event"]?.stringValue { onEvent(name, v["params"] ?? .null) }
        }
    }
}

