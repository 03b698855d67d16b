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
    /// How long a page may take to answer one call of the checker (an evaluate, a click, a
    /// screenshot) before it is judged unresponsive (seconds; bounded by `timeout` too). A page
    /// that is still answers in milliseconds.
    public var pageAnswerSeconds: Double = 10
    /// `--dialogs`: how the session answers a page's JavaScript dialogs (`accept`, `dismiss`),
    /// as `session.create`'s `dialogs`.
    public var dialogs: String = "dismiss"

    public init(url: String, steps: [Step]?, budgetMs: Int?, maxStates: Int, host: String, port: Int) {
        self.url = url
        self.steps = steps
        self.budgetMs = budgetMs
        self.maxStates = maxStates
        self.host = host
        self.port = port
    }
}

/// A controller of the daemon's own protocol: requests with replies, events kept in order. The
/// one Swift controller client: `bridged check` runs on it, and `bridged sessions` asks each
/// daemon of a farm through it.
///
/// Every call has a deadline. The daemon holds a connection whose request the browser answers
/// (its later frames wait), so a call that got no reply in time leaves the connection useless:
/// it is dropped and a new one made (`reconnect`), which the runner subscribes to its session
/// again. A connection that cannot be made again means the daemon is gone.
public final class ControllerClient {
    var ws: WebSocketClient
    let host: String
    let port: Int
    let path: String
    var nextID = 1
    public var onEvent: (String, JSONValue) -> Void = { _, _ in }
    /// How many times the connection was made again after a call ran out of time.
    public private(set) var reconnects = 0

    /// A connection to the daemon at `host`:`port` (`path`: its WebSocket endpoint), made within
    /// `timeout` seconds (`ClientError` otherwise). Say `hello` next.
    public init(host: String, port: Int, path: String = "/bridge", timeout: Double = 10) throws(ClientError) {
        self.host = host
        self.port = port
        self.path = path
        ws = try WebSocketClient(host: host, port: port, path: path, timeout: timeout)
    }

    /// The daemon answered with an error (the connection is fine).
    public struct CallError: Error { public var code: String; public var message: String }

    /// No reply within the call's deadline (the daemon is there but did not answer: a page that
    /// does not answer holds the call). The connection was made again before this is thrown.
    public struct CallTimeout: Error { public var method: String; public var seconds: Double }

    /// `hello` as a controller (with the daemon's controller token, if it has one); its result.
    @discardableResult
    public func hello(token: String? = nil, timeout: Double = 30) throws -> JSONValue {
        var params: JSONObject = ["protocol": 1, "role": "controller"]
        if let token { params["token"] = .string(token) }
        return try call("hello", params, timeout: timeout, reconnecting: false)
    }

    /// Closes the connection (a close frame; errors ignored: it is going anyway).
    public func close() { try? ws.sendClose() }

    /// `f`'s value, or nil when the daemon answered it with an error (a page gone, no
    /// screenshot) or did not answer in time; a lost connection is thrown on: the check cannot
    /// go on.
    func soft<T>(_ f: () throws -> T) throws -> T? {
        do { return try f() } catch is CallError { return nil } catch is CallTimeout { return nil }
    }

    /// Sends a request and waits for its reply, at most `timeout` seconds. Events that come
    /// meanwhile go to `onEvent`. A connection that closes or fails is thrown as `ClientError`;
    /// no reply in time is `CallTimeout`, after the connection was made again (a `ClientError`
    /// when it cannot be: the daemon is gone); without `reconnecting`, as it is.
    public func call(_ method: String, _ params: JSONObject = [:], timeout: Double = 60, reconnecting: Bool = true) throws -> JSONValue {
        let id = nextID
        nextID += 1
        try ws.send(JSONValue.object(["id": .int(Int64(id)), "method": .string(method), "params": .object(params)]).jsonString)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, let text = try ws.receive(timeout: left) else {
                if reconnecting { try reconnect() }
                throw CallTimeout(method: method, seconds: timeout)
            }
            guard let v = try? JSONParser.parse(text, maxDepth: 64) else { continue }
            if let name = v["event"]?.stringValue { onEvent(name, v["params"] ?? .null); continue }
            guard v["id"]?.intValue == Int64(id) else { continue }
            if let e = v["error"] {
                throw CallError(code: e["code"]?.stringValue ?? "?", message: e["message"]?.stringValue ?? "")
            }
            return v["result"] ?? .null
        }
    }

    /// Hooks run once a new connection is up (the runner's hello and subscribe).
    var onReconnect: () throws -> Void = {}

    /// Drops the connection (a reply it still owes goes nowhere) and makes a new one, within
    /// 10 s; the daemon not accepting one is a `ClientError`.
    func reconnect() throws {
        let fresh: WebSocketClient
        do { fresh = try WebSocketClient(host: host, port: port, path: path, timeout: 10) } catch {
            throw ClientError("the daemon did not accept a new connection after a call got no reply (\(error.message))")
        }
        ws = fresh
        reconnects += 1
        try onReconnect()
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
