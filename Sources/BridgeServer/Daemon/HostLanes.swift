import BridgeBrowser
import BridgeProtocol

/// The ordering model of host work (docs/ARCHITECTURE.md, "The ordering model"): every piece of
/// browser work the Bridge asks for runs in a lane, and the lane alone decides what it waits for.
///
/// - A **session lane** per browser session carries the tab lifecycle, in the order the Bridge
///   asked for it:
///   - an **open** (a root's makes the session's browser context first) waits for the opens
///     before it (two opens keep their order) and for a front under way; a front not started
///     yet is dropped (the new tab comes to the front by itself). It does not wait for closes:
///     the tab machine knows which tab is in front whatever order Chromium answers them in.
///   - a **close** of a tab waits for the opens and fronts before it, and runs side by side with
///     the other closes. It cancels its web view's open: one not started is skipped, one under
///     way ends after its current host call (`BrowserError.closedWhileOpening`) and the close,
///     after it, closes what it made.
///   - a **front** waits for every open, close and front asked before it; the latest wins (a
///     front not started yet is dropped when another front is asked for or a tab is opened).
///   - **closing the session** takes effect at once, on the service thread: the lane is
///     cancelled, so a job not started is skipped (an open then answers as closed) and an open
///     under way sees it after its current host call and ends; the session's close itself is
///     the lane's last job, after everything under way, and disposes of whatever they made.
/// - A **page lane** per web view carries the work on its page: an overlay change waits for the
///   overlay changes asked before it; a look at the page (a snapshot, a screenshot, evaluate,
///   click, type) waits for the overlay changes before it, not for other looks, and holds up
///   nothing.
/// - Closing a session cancels its page lanes too: what has not started yet is skipped (work
///   that answers a request still runs, and fails at once: the tabs are gone).
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

    /// Opens `webview`'s tab: after the session's opens before it and a front under way (a
    /// front not started yet is dropped). `body` reads `cancelled.now` after each host call: the
    /// session (or the web view) was closed meanwhile.
    func open(session: String, webview: ItemID, _ body: @escaping @Sendable (_ cancelled: HostLane.Cancellation) async -> Void) {
        lane(session).open(webview, body)
    }

    /// Closes `webview`'s tab, after the session's opens and fronts before it (beside its other
    /// closes); its open, if not done, is cancelled.
    func close(session: String, webview: ItemID, _ body: @escaping @Sendable () async -> Void) {
        pages.removeValue(forKey: PageKey(session: session, webview: webview))?.cancel()
        lane(session).close(webview, body)
    }

    /// `webview` closed while its tab is kept for a later web view (`HostWork.keepTab`): its
    /// page work not started is dropped, as at a close; its open, if not done, goes on (the tab
    /// it makes is the one kept), and a reuse of the tab is an open (after it).
    func keep(session: String, webview: ItemID) {
        pages.removeValue(forKey: PageKey(session: session, webview: webview))?.cancel()
    }

    /// Brings a tab to the front after the session's opens, closes and fronts asked before,
    /// unless a newer front or a new tab comes first (`body` is then told it was dropped).
    func front(session: String, _ body: @escaping @Sendable (_ dropped: Bool) async -> Void) {
        lane(session).front(body)
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

    /// The session is gone: its lanes are cancelled (at once: a job under way sees it) and
    /// forgotten; `body`, the session's close, runs after the session lane's jobs under way.
    func closeSession(_ session: String, _ body: @escaping @Sendable () async -> Void = {}) {
        let lane = sessions.removeValue(forKey: session) ?? SessionLane(runner: runner)
        lane.closeSession(body)
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

    /// One session's lane: what each kind of job waits for (see `HostLanes`). It keeps only the
    /// jobs a later one may have to wait for: the latest open, fronts neither dropped nor done,
    /// closes not done.
    final class SessionLane {
        private let runner: TaskRunner
        private let cancelled = Locked(false)
        private var lastOpen: HostLane.Job?
        private var fronts: [HostLane.Job] = []
        private var closes: [HostLane.Job] = []
        /// Each web view's latest open (its close cancels it).
        private var opens: [ItemID: HostLane.Job] = [:]

        init(runner: TaskRunner) { self.runner = runner }

        func open(_ webview: ItemID, _ body: @escaping @Sendable (HostLane.Cancellation) async -> Void) {
            dropFronts()
            let job = HostLane.Job(runner: runner, lane: cancelled, after: waits(opens: true, fronts: true), body)
            lastOpen = job
            // (Later jobs wait for the open, which waited for the fronts under way.)
            fronts = []
            opens[webview] = job
        }

        func close(_ webview: ItemID, _ body: @escaping @Sendable () async -> Void) {
            opens.removeValue(forKey: webview)?.cancel()
            closes.removeAll { $0.isDone }
            closes.append(HostLane.Job(runner: runner, lane: cancelled, after: waits(opens: true, fronts: true)) { _ in await body() })
        }

        func front(_ body: @escaping @Sendable (_ dropped: Bool) async -> Void) {
            // (After the fronts it drops too: the dropped one says so before the newer one runs.)
            let waits = waits(opens: true, fronts: true, closes: true)
            dropFronts()
            let job = HostLane.Job(runner: runner, lane: cancelled, after: waits) { c in
                await body(c.atStart)
            }
            fronts.append(job)
        }

        /// Cancelled at once; `body` runs after every job under way (and after those not
        /// started, which are skipped).
        func closeSession(_ body: @escaping @Sendable () async -> Void) {
            cancelled.withLock { $0 = true }
            _ = HostLane.Job(runner: runner, lane: cancelled, after: waits(opens: true, fronts: true, closes: true)) { _ in await body() }
        }

        /// The fronts not started yet are dropped (and not waited for); those under way stay.
        private func dropFronts() {
            fronts.removeAll { $0.cancel() || $0.isDone }
        }

        private func waits(opens: Bool = false, fronts: Bool = false, closes: Bool = false) -> [Completion] {
            var waits: [Completion] = []
            if opens, let lastOpen { waits.append(lastOpen.done) }
            if fronts { waits += self.fronts.map(\.done) }
            if closes {
                self.closes.removeAll { $0.isDone }
                waits += self.closes.map(\.done)
            }
            return waits
        }
    }
}

/// One lane: jobs start in the order they were put in it. A **shared** job waits for the
/// exclusive jobs before it; an **exclusive** job waits for the exclusive jobs before it and,
/// unless told otherwise, for the shared ones too. A job is told
/// whether it was cancelled (its lane, or the job itself) before it started.
/// (Service thread only; the flags are read by the jobs, which run in the runner's task.)
final class HostLane {
    /// What a job knows of its cancellation: whether it was cancelled (its lane, or the job
    /// itself) before it started, and, read after an await, whether it is by now.
    struct Cancellation: Sendable {
        fileprivate let job: Locked<Job.State>
        fileprivate let lane: Locked<Bool>
        let atStart: Bool
        var now: Bool { job.withLock { $0.cancelled } || lane.withLock { $0 } }
    }

    /// A job in a lane; `cancel()` before it starts makes it start cancelled.
    final class Job: Sendable {
        struct State {
            var cancelled = false
            var started = false
        }

        fileprivate let state = Locked(State())
        let done = Completion()

        init(runner: TaskRunner, lane: Locked<Bool>, after waits: [Completion], _ body: @escaping @Sendable (Cancellation) async -> Void) {
            let state = self.state, done = self.done
            runner.run {
                for w in waits { await w.wait() }
                let own = state.withLock { s in
                    s.started = true
                    return s.cancelled
                }
                await body(Cancellation(job: state, lane: lane, atStart: own || lane.withLock { $0 }))
                done.complete()
            }
        }

        /// Cancels the job: true when it had not started (it starts cancelled), false when it is
        /// under way (it sees it in `Cancellation.now`).
        @discardableResult
        func cancel() -> Bool {
            state.withLock { s in
                s.cancelled = true
                return !s.started
            }
        }

        var isDone: Bool { done.isComplete }
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
        let job = Job(runner: runner, lane: cancelled, after: exclusiveTail.map { [$0.done] } ?? []) { await body($0.atStart) }
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
        let job = Job(runner: runner, lane: cancelled, after: waits) { await body($0.atStart) }
        exclusiveTail = job
        sharedSince = []
        return job
    }

    /// Every job not started yet starts cancelled, and so do later ones.
    func cancel() { cancelled.withLock { $0 = true } }
}
