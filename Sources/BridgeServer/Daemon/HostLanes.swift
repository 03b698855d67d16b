import BridgeBrowser
import BridgeProtocol

/// The ordering model of host work (docs/ARCHITECTURE.md, "The ordering model"): every piece of
/// browser work the Bridge asks for runs in a lane, and the lane alone decides what it waits for.
///
/// - A **session lane** per browser session carries the tab lifecycle: closes run at once (side
///   by side), a bring-to-front waits for every close and front asked before it, and the
///   latest front wins: a front not started yet is dropped when a tab is opened or another
///   front is asked for.
/// - A **page lane** per web view carries the work on its page: an overlay change waits for the
///   overlay changes asked before it; a look at the page (a snapshot, a screenshot, evaluate,
///   click, type) waits for the overlay changes before it, not for other looks, and holds up
///   nothing.
/// - Closing a session cancels its lanes: what has not started yet is skipped (work that
///   answers a request still runs, and fails at once: the tabs are gone).
///
/// Touched on the service thread only; the jobs run in `runner` (the host's `TaskRunner`: one
/// long-lived task, each job a child of it) and report back through the transport's remote, as
/// any host result does.
final class HostLanes {
    private var sessions: [String: SessionLane] = [:]
    private var pages: [PageKey: HostLane] = [:]
    private let runner: TaskRunner

    init(runner: TaskRunner = TaskRunner()) {
        self.runner = runner
    }

    struct PageKey: Hashable {
        var session: String
        var webview: ItemID
    }

    /// How many lanes are open (tests: nothing outlives its session).
    var count: (sessions: Int, pages: Int) { (sessions.count, pages.count) }

    // MARK: the session lane

    /// Closes `webview`'s tab, at once (beside the session's other closes).
    func close(session: String, webview: ItemID, _ body: @escaping @Sendable () async -> Void) {
        pages.removeValue(forKey: PageKey(session: session, webview: webview))?.cancel()
        _ = lane(session).lane.shared { _ in await body() }
    }

    /// Brings a tab to the front after the session's closes and fronts asked before, unless a
    /// newer front or a new tab comes first (`body` is then told it was dropped).
    func front(session: String, _ body: @escaping @Sendable (_ dropped: Bool) async -> Void) {
        let s = lane(session)
        s.pendingFront?.cancel()
        s.pendingFront = s.lane.exclusive { cancelled in await body(cancelled) }
    }

    /// A tab of `session` is being opened: it comes to the front itself, so a front asked for
    /// before and not started is out of date.
    func opening(session: String) {
        sessions[session]?.pendingFront?.cancel()
    }

    // MARK: the page lane

    /// An overlay change of `webview`'s page: after the changes asked before it on that page
    /// (not after the looks: an evaluate awaiting a promise never holds up the page's cover).
    /// Skipped when the lane was cancelled before it started.
    func change(session: String, webview: ItemID, _ body: @escaping @Sendable () async -> Void) {
        _ = page(session, webview).exclusive(joinsShared: false) { cancelled in
            guard !cancelled else { return }
            await body()
        }
    }

    /// A look at `webview`'s page (snapshot, screenshot, evaluate, click, type): after the
    /// overlay changes asked before it; always runs (it answers someone).
    func look(session: String, webview: ItemID, _ body: @escaping @Sendable () async -> Void) {
        _ = page(session, webview).shared { _ in await body() }
    }

    // MARK: ends

    /// The session is gone: its lanes are cancelled and forgotten.
    func closeSession(_ session: String) {
        sessions.removeValue(forKey: session)?.lane.cancel()
        for key in pages.keys where key.session == session {
            pages.removeValue(forKey: key)?.cancel()
        }
    }

    private func lane(_ session: String) -> SessionLane {
        if let s = sessions[session] { return s }
        let s = SessionLane(runner: runner)
        sessions[session] = s
        return s
    }

    private func page(_ session: String, _ webview: ItemID) -> HostLane {
        let key = PageKey(session: session, webview: webview)
        if let p = pages[key] { return p }
        let p = HostLane(runner: runner)
        pages[key] = p
        return p
    }

    final class SessionLane {
        let lane: HostLane
        var pendingFront: HostLane.Job?
        init(runner: TaskRunner) { lane = HostLane(runner: runner) }
    }
}

/// One lane: jobs start in the order they were put in it. A **shared** job waits for the
/// exclusive jobs before it; an **exclusive** job waits for the exclusive jobs before it and,
/// unless told otherwise, for the shared ones too. A job is told
/// whether it was cancelled (its lane, or the job itself) before it started.
/// (Service thread only; the flags are read by the jobs, which run in the runner's task.)
final class HostLane {
    /// A job in a lane; `cancel()` before it starts makes it start cancelled.
    final class Job: Sendable {
        fileprivate let flags: (own: Locked<Bool>, lane: Locked<Bool>)
        fileprivate let done = Completion()

        fileprivate init(runner: TaskRunner, lane: Locked<Bool>, after waits: [Completion], _ body: @escaping @Sendable (Bool) async -> Void) {
            let own = Locked(false)
            flags = (own, lane)
            let done = self.done
            runner.run {
                for w in waits { await w.wait() }
                await body(own.withLock { $0 } || lane.withLock { $0 })
                done.complete()
            }
        }

        func cancel() { flags.own.withLock { $0 = true } }
        func wait() async { await done.wait() }
    }

    private let runner: TaskRunner
    private let cancelled = Locked(false)
    private var exclusiveTail: Job?
    /// Shared jobs since the last exclusive one (an exclusive job waits for them all).
    private var sharedSince: [Job] = []
    /// Past this many shared jobs in a row, the ones kept to wait for are folded into one.
    static let foldAt = 64

    init(runner: TaskRunner = TaskRunner()) {
        self.runner = runner
    }

    @discardableResult
    func shared(_ body: @escaping @Sendable (_ cancelled: Bool) async -> Void) -> Job {
        let job = Job(runner: runner, lane: cancelled, after: exclusiveTail.map { [$0.done] } ?? [], body)
        sharedSince.append(job)
        if sharedSince.count > Self.foldAt {
            // Bounded: one job stands for the ones it waits for.
            sharedSince = [Job(runner: runner, lane: cancelled, after: sharedSince.map(\.done)) { _ in }]
        }
        return job
    }

    /// `joinsShared`: it also waits for the shared jobs before it (else only for the exclusive
    /// ones: a look at a page never holds up its next overlay change).
    @discardableResult
    func exclusive(joinsShared: Bool = true, _ body: @escaping @Sendable (_ cancelled: Bool) async -> Void) -> Job {
        let waits = (exclusiveTail.map { [$0.done] } ?? []) + (joinsShared ? sharedSince.map(\.done) : [])
        let job = Job(runner: runner, lane: cancelled, after: waits, body)
        exclusiveTail = job
        sharedSince = []
        return job
    }

    /// Every job not started yet starts cancelled, and so do later ones.
    func cancel() { cancelled.withLock { $0 = true } }
}
