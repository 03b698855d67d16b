@testable import BridgeServer
import BridgeTesting
import Dispatch
import Foundation
import Logging

/// Every test transport logs here (lws's log emitter is process-wide, so all transports share
/// one capture whichever installed it last).
enum TestLog {
    static let lines = Locked<[(Logger.Level, String)]>([])
    /// The same lines, to wait on (`next`).
    static let arrived = Inbox<LogLine>()

    struct LogLine: Sendable, CustomStringConvertible {
        var level: Logger.Level
        var message: String
        var description: String { "\(level): \(message)" }
    }

    /// The next line of `level` that `match` picks (waits for it).
    static func next(_ level: Logger.Level, _ match: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await arrived.next { $0.level == level && match($0.message) }.message
    }

    static let logger: Logger = {
        var logger = Logger(label: "bridged-tests") { _ in CapturingLogHandler() }
        logger.logLevel = .debug
        return logger
    }()

    static func contains(_ level: Logger.Level, _ fragment: String) -> Bool {
        lines.withLock { $0.contains { $0.0 == level && $0.1.contains(fragment) } }
    }
}

struct CapturingLogHandler: LogHandler {
    var logLevel: Logger.Level = .debug
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        TestLog.lines.withLock { $0.append((event.level, event.message.description)) }
        TestLog.arrived.append(TestLog.LogLine(level: event.level, message: event.message.description))
    }
}

/// Runs a real `Transport` on its own thread (which becomes the service thread). The transport
/// and its delegate are created on that thread; tests talk to it through `remote` and wait on
/// semaphores with generous timeouts (no sleeps).
final class ServiceThread: @unchecked Sendable {
    private let state = Locked<(port: Int, remote: TransportRemote?, error: Error?)>((0, nil, nil))
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    var port: Int { state.withLock { $0.port } }
    var remote: TransportRemote { state.withLock { $0.remote! } }
    var runError: Error? { state.withLock { $0.error } }

    /// `makeDelegate` runs on the service thread; `afterRun` too, once `run()` has returned.
    init(configuration: TransportConfiguration = ServiceThread.defaultConfiguration(),
         makeDelegate: @escaping @Sendable (Transport) -> TransportDelegate? = { _ in nil },
         afterRun: @escaping @Sendable (Transport) -> Void = { _ in }) {
        let thread = Thread { [state, started, finished] in
            do {
                let transport = try Transport(configuration: configuration, bridgeJS: Array("export {}".utf8),
                                              logger: TestLog.logger)
                let delegate = makeDelegate(transport)
                transport.delegate = delegate
                state.withLock { $0.remote = transport.remote }
                transport.remote.enqueue { (t: Transport) in
                    state.withLock { $0.port = t.port }
                    started.signal()
                }
                do {
                    try transport.run()
                } catch {
                    state.withLock { $0.error = error }
                    started.signal()
                }
                afterRun(transport)
                withExtendedLifetime(delegate) {}
            } catch {
                state.withLock { $0.error = error }
                started.signal()
            }
            finished.signal()
        }
        thread.start()
    }

    static func defaultConfiguration() -> TransportConfiguration {
        var c = TransportConfiguration()
        c.port = 0
        return c
    }

    /// Waits until the listener is up (true) or start failed / timed out (false). A failure is
    /// printed with its error and the latest error lines of the log (lws's among them), so
    /// that a test that did not expect it says why.
    func waitStarted(seconds: Double = 10) -> Bool {
        let why: String
        if started.wait(timeout: .now() + seconds) != .success {
            why = "did not start within \(seconds) s"
        } else if let error = runError {
            why = "did not start: \(error)"
        } else {
            return true
        }
        let errors = TestLog.lines.withLock { lines in
            lines.filter { $0.0 >= .error }.suffix(5).map { "  \($0.1)" }
        }
        let text = (["ServiceThread: the transport \(why)"] + errors).joined(separator: "\n") + "\n"
        FileHandle.standardError.write(Data(text.utf8))
        return false
    }

    /// Runs `body` on the service thread and waits for it; returns its result.
    func sync<T: Sendable>(seconds: Double = 10, _ body: @escaping @Sendable (Transport) -> T) -> T? {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<T?>(nil)
        remote.enqueue { (t: Transport) in
            result.withLock { $0 = body(t) }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// stop() and wait for run() to return.
    @discardableResult
    func stop(seconds: Double = 10) -> Bool {
        state.withLock { $0.remote }?.stop()
        return waitFinished(seconds: seconds)
    }

    func waitFinished(seconds: Double = 10) -> Bool {
        finished.wait(timeout: .now() + seconds) == .success
    }
}

/// A thread-safe recorder with a semaphore per awaited condition.
final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let values = Locked<[Value]>([])
    private let signal = DispatchSemaphore(value: 0)

    func append(_ v: Value) {
        values.withLock { $0.append(v) }
        signal.signal()
    }

    var all: [Value] { values.withLock { $0 } }

    /// Waits until `count` values were recorded (true) or the timeout passed (false).
    func wait(forCount count: Int, seconds: Double = 10) -> Bool {
        let deadline = DispatchTime.now() + seconds
        while values.withLock({ $0.count }) < count {
            if signal.wait(timeout: deadline) == .timedOut { return values.withLock { $0.count } >= count }
        }
        return true
    }
}
