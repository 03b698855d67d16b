import BridgeProtocol

/// What the `Daemon` needs from a transport: the libwebsockets `Transport` in the product, a
/// recording fake in tests (which also lets a test advance the clock).
///
/// Everything is called on the transport's service thread; the transport calls its `delegate`
/// on that thread too.
public protocol ServerTransport: AnyObject {
    var delegate: TransportDelegate? { get set }
    /// The real listening port once started (0 before).
    var port: Int { get }
    /// The clock of the timers, in microseconds (monotonic).
    var monotonicMicroseconds: Int64 { get }
    /// True once `remote.stop()` began the shutdown (draining connections with 1001).
    var stopping: Bool { get }
    /// Open WebSocket connections.
    var connectionCount: Int { get }
    /// What the transport counted (frames, closes, overflows) for the metrics.
    var counters: TransportCounters { get }
    /// The thread-safe handle other threads use.
    var remote: TransportRemote { get }
    /// Serves until `remote.stop()`; the calling thread becomes the service thread.
    func run() throws
    /// Queues a text message (a no-op for unknown or closing connections).
    func send(_ id: ConnectionID, _ message: [UInt8])
    /// Closes once what was queued before is written.
    func close(_ id: ConnectionID, code: UInt16, reason: String)
    /// A keyed timer: `delegate.transportTimerFired(key)` when due; replaces a pending one.
    func schedule(_ key: TimerKey, afterMicroseconds: Int64)
    /// Forgets a pending keyed timer (a no-op otherwise).
    func cancel(_ key: TimerKey)
    /// A one-shot timer running `body` (periodic housekeeping).
    func schedule(afterMicroseconds: Int64, _ body: @escaping () -> Void) -> TimerHandle
    func cancel(_ timer: TimerHandle)
}

extension Transport: ServerTransport {}
