import BridgeBrowser
import BridgeProtocol
import Foundation

/// One DevTools command the host sent to the fake.
public struct CDPCommand: Sendable, CustomStringConvertible {
    public var id: Int64
    public var method: String
    public var params: JSONValue
    /// The attached tab's session (`S-T1` for the tab `T1`), nil for the browser's own commands.
    public var sessionId: String?
    /// Which launch of the fake received it (1 for the first browser).
    public var browser: Int

    public var description: String { sessionId.map { "\(method)@\($0)" } ?? method }
}

/// How the fake answers a command.
public enum CDPReply: Sendable {
    /// `{"id": …, "result": …}`.
    case result(JSONValue)
    /// `{"id": …, "error": {"message": …}}`.
    case error(String)
    /// Nothing now: the test answers later with `FakeChromium.reply(to:_:)` (or never, and the
    /// call times out).
    case later
}

/// A fake Chromium for the browser host: each launch gives an in-memory `CDPTransport` whose
/// other end is played by script, no process and no pipe. The host's commands are recorded (and
/// can be awaited, `next(_:)`); every command gets a plausible answer by default (ids count up:
/// contexts `C1`…, targets `T1`…, the session attached to `Tn` is `S-Tn`, whose main frame id is
/// `Tn` as in Chromium); `on(_:_:)` replaces the answer of a method. Events are pushed with
/// `emit`; `crash()` closes the browser's end as a crash or a kill would. Everything the fake
/// writes reaches the host in the order it was written, from one queue, as a pipe delivers it.
public final class FakeChromium: @unchecked Sendable {
    /// The JPEG every `Page.captureScreenshot` answers with by default.
    public static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9]
    public static let userAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.7000.1 Safari/537.36"

    /// Every command the host sent, in order (awaitable).
    public let commands = Inbox<CDPCommand>()
    private let lock = NSLock()
    private var scripts: [String: @Sendable (CDPCommand) -> CDPReply] = [:]
    private var pipes: [FakePipe] = []
    private var launchError: BrowserError?
    private var counters: [String: Int] = [:]

    public init() {}

    /// What `BrowserHost(launcher:)` and `BrowserConfiguration.launcher` take.
    public var launcher: BrowserLauncher {
        { [self] _ in try launch() }
    }

    /// Browsers launched so far.
    public var launches: Int { lock.withLock { pipes.count } }

    /// From now on launches fail with `error` (nil: they succeed again).
    public func failLaunches(with error: BrowserError?) { lock.withLock { launchError = error } }

    /// Answers `method` with `reply` from now on (replacing the default).
    public func on(_ method: String, _ reply: @escaping @Sendable (CDPCommand) -> CDPReply) {
        lock.withLock { scripts[method] = reply }
    }

    /// The next command of `method` not taken yet (waits for it).
    @discardableResult
    public func next(_ method: String, timeout: Double = 30, where match: @escaping @Sendable (CDPCommand) -> Bool = { _ in true }) async throws -> CDPCommand {
        try await commands.next(timeout: timeout) { $0.method == method && match($0) }
    }

    /// The methods sent so far, in order; of one tab's session when `session` is given.
    public func methods(session: String? = nil) -> [String] {
        commands.all.filter { session == nil || $0.sessionId == session }.map(\.method)
    }

    /// Answers a command the script left for later (`.later`).
    public func reply(to command: CDPCommand, _ reply: CDPReply) {
        pipe(command.browser)?.write(reply: reply, to: command.id)
    }

    /// An event from the running browser; `session` for a tab's event (`S-Tn`).
    public func emit(_ method: String, _ params: JSONValue = .object(JSONObject()), session: String? = nil) {
        var message: JSONObject = ["method": .string(method), "params": params]
        if let session { message["sessionId"] = .string(session) }
        current?.write(JSONValue.object(message).serialized())
    }

    /// The running browser goes away (a crash, a kill): its end of the transport closes.
    public func crash() { current?.close() }

    private var current: FakePipe? { lock.withLock { pipes.last } }
    private func pipe(_ n: Int) -> FakePipe? { lock.withLock { pipes.indices.contains(n - 1) ? pipes[n - 1] : nil } }

    private func launch() throws -> LaunchedBrowser {
        try lock.withLock { () throws -> LaunchedBrowser in
            if let launchError { throw launchError }
            let n = pipes.count + 1
            let pipe = FakePipe(browser: n, owner: self)
            pipes.append(pipe)
            return LaunchedBrowser(process: FakeProcess(n, pipe), transport: pipe)
        }
    }

    private func count(_ what: String) -> Int {
        lock.withLock {
            counters[what, default: 0] += 1
            return counters[what]!
        }
    }

    /// The answer the host gets to `command`.
    fileprivate func answer(_ command: CDPCommand) -> CDPReply {
        if let script = lock.withLock({ scripts[command.method] }) { return script(command) }
        let target = command.sessionId.map { String($0.dropFirst(2)) } ?? ""
        switch command.method {
        case "Browser.getVersion":
            return .result(["product": "HeadlessChrome/156.0.7000.1", "userAgent": .string(Self.userAgent)])
        case "Target.createBrowserContext":
            return .result(["browserContextId": .string("C\(count("context"))")])
        case "Target.createTarget":
            return .result(["targetId": .string("T\(count("target"))")])
        case "Target.attachToTarget":
            return .result(["sessionId": .string("S-" + (command.params["targetId"]?.stringValue ?? ""))])
        case "Page.navigate":
            return .result(["frameId": .string(target), "loaderId": .string("L\(count("loader"))")])
        case "Page.captureScreenshot":
            return .result(["data": .string(Data(Self.jpeg).base64EncodedString())])
        case "Runtime.evaluate":
            return .result(["result": ["type": "boolean", "value": true]])
        default:
            return .result(.object(JSONObject()))
        }
    }

    fileprivate func received(_ command: CDPCommand) { commands.append(command) }
}

/// The host's end of one fake browser.
final class FakePipe: CDPTransport, @unchecked Sendable {
    let browser: Int
    private weak var owner: FakeChromium?
    /// Everything the browser writes, in order, as a pipe would.
    private let queue: DispatchQueue
    private let lock = NSLock()
    private var receive: (@Sendable ([UInt8]) -> Void)?
    private var closed: (@Sendable () -> Void)?
    private var isClosed = false

    init(browser: Int, owner: FakeChromium) {
        self.browser = browser
        self.owner = owner
        queue = DispatchQueue(label: "fake-chromium-\(browser)")
    }

    func start(receive: @escaping @Sendable ([UInt8]) -> Void, closed: @escaping @Sendable () -> Void) {
        lock.withLock {
            self.receive = receive
            self.closed = closed
        }
    }

    func send(_ message: consuming [UInt8]) -> Bool {
        guard !lock.withLock({ isClosed }) else { return false }
        guard let owner, case .object(let object)? = try? JSONParser.parse(message, maxDepth: 200),
              let id = object["id"]?.intValue, let method = object["method"]?.stringValue else { return true }
        let command = CDPCommand(id: id, method: method, params: object["params"] ?? .object(JSONObject()),
                                 sessionId: object["sessionId"]?.stringValue, browser: browser)
        let reply = owner.answer(command)
        // Recorded before the answer is written: a test that waits for the command sees it
        // before the host sees the answer.
        owner.received(command)
        write(reply: reply, to: id)
        if method == "Browser.close" { close() }
        return true
    }

    func write(reply: CDPReply, to id: Int64) {
        switch reply {
        case .result(let value): write(JSONValue.object(["id": .int(id), "result": value]).serialized())
        case .error(let message): write(JSONValue.object(["id": .int(id), "error": ["code": -32000, "message": .string(message)]]).serialized())
        case .later: break
        }
    }

    func write(_ bytes: [UInt8]) {
        queue.async { [self] in
            let receive = lock.withLock { isClosed ? nil : self.receive }
            receive?(bytes)
        }
    }

    /// Closes the browser's end: after what was written before, `closed` runs once.
    func close() {
        queue.async { [self] in
            let closed: (@Sendable () -> Void)? = lock.withLock {
                guard !isClosed else { return nil }
                isClosed = true
                defer { self.receive = nil; self.closed = nil }
                return self.closed
            }
            closed?()
        }
    }
}

/// The fake browser's "process": no process at all. Its pid is above any Linux pid, so that a
/// `kill` of it reaches nothing.
final class FakeProcess: BrowserProcess, @unchecked Sendable {
    let pid: Int32
    let profileDirectory: String
    private let pipe: FakePipe

    init(_ n: Int, _ pipe: FakePipe) {
        pid = 2_000_000_000 + Int32(n)
        profileDirectory = "/nonexistent/fake-chromium-\(n)"
        self.pipe = pipe
    }

    func devToolsURL(timeout: Double) async throws -> String { "ws://127.0.0.1:1/devtools/browser/fake-\(pid - 2_000_000_000)" }

    /// As a killed browser's pipe does, its end closes.
    func terminate(graceSeconds: Double) { pipe.close() }
}
