import CWebsockets

/// The thread-safe handle of a `Transport`: the only part other threads may touch.
///
/// Work enqueued here runs on the service thread, in order, the next time the loop wakes up
/// (`lws_cancel_service` wakes it; the queue is drained in `LWS_CALLBACK_EVENT_WAIT_CANCELLED`).
/// Work enqueued before `run()` runs once the listener is up; work enqueued after the transport
/// has finished is discarded.
public final class TransportRemote: Sendable {
    enum Work {
        case plain(@Sendable () -> Void)
        case withTransport(@Sendable (Transport) -> Void)
    }

    struct State {
        var work: [Work] = []
        var context: OpaquePointer? = nil
        var stopRequested = false
        var finished = false
        /// Tests on a fake transport: told (on the enqueuing thread) that work is waiting.
        var onSubmit: (@Sendable () -> Void)? = nil
    }

    let state = Locked(State())

    /// A remote whose work nobody runs until its transport does: the `Transport` makes its own;
    /// another `ServerTransport` (BridgeTesting's `FakeTransport`) makes one, runs what is
    /// queued with `takeQueuedWork()` and learns of it through `onSubmit(_:)`.
    public init() {}

    /// Runs `work` on the service thread.
    public func enqueue(_ work: @Sendable @escaping () -> Void) {
        submit(.plain(work))
    }

    /// Runs `work` on the service thread with the transport (which is not Sendable itself).
    public func enqueue(_ work: @Sendable @escaping (Transport) -> Void) {
        submit(.withTransport(work))
    }

    /// Asks the transport to shut down: every WebSocket gets a 1001 close, the loop ends within
    /// `shutdownTimeout`, and `run()` returns. Safe from any thread, any number of times.
    public func stop() {
        state.withLock { s in
            s.stopRequested = true
            // Under the lock so that the service thread cannot destroy the context meanwhile.
            if let ctx = s.context { lws_cancel_service(ctx) }
        }
    }

    public var isStopRequested: Bool { state.withLock { $0.stopRequested } }

    private func submit(_ item: Work) {
        let told: (@Sendable () -> Void)? = state.withLock { s in
            guard !s.finished else { return nil }
            s.work.append(item)
            if let ctx = s.context { lws_cancel_service(ctx) }
            return s.onSubmit
        }
        told?()
    }

    // MARK: service-thread side

    func attach(_ context: OpaquePointer) {
        state.withLock { $0.context = context }
    }

    /// Called before the context is destroyed; later work is dropped.
    func detach() {
        state.withLock { s in
            s.context = nil
            s.finished = true
            s.work.removeAll()
        }
    }

    func takeWork() -> (work: [Work], stop: Bool) {
        state.withLock { s in
            let w = s.work
            s.work = []
            return (w, s.stopRequested)
        }
    }

    // MARK: for a transport of another kind (tests)

    /// Tells `body` (on the enqueuing thread, outside the lock) each time work is queued, for a
    /// transport that runs the queue itself; nil stops it. The `Transport` never sets it.
    public func onSubmit(_ body: (@Sendable () -> Void)?) {
        state.withLock { $0.onSubmit = body }
    }

    /// Takes what `enqueue(_:)` queued, oldest first, for the caller to run as the service
    /// thread would. Work queued for the lws `Transport` itself (`enqueue { transport in … }`)
    /// is dropped: only that transport can run it.
    public func takeQueuedWork() -> [@Sendable () -> Void] {
        takeWork().work.compactMap { if case .plain(let body) = $0 { body } else { nil } }
    }
}
