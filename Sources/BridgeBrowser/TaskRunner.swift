import Foundation

/// Where the browser layer's background work runs: one long-lived task consuming a stream of
/// jobs, each run as a child of its task group (structured: no job outlives the runner's task,
/// and none is a task of its own). The host's spare tabs, its close retries and its retired
/// Chromiums, and the daemon's host lanes and one-shot host calls, run here.
///
/// Jobs start in the order they were given, side by side; what one must wait for, it awaits
/// itself (a `Completion`, a lane's order).
public final class TaskRunner: Sendable {
    private let jobs: AsyncStream<@Sendable () async -> Void>.Continuation

    public init() {
        let (stream, jobs) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        self.jobs = jobs
        // The one task: it holds the stream, not the runner; it ends once the runner is gone
        // and its last job has returned.
        Task {
            await withDiscardingTaskGroup { group in
                for await job in stream { group.addTask(operation: job) }
            }
        }
    }

    deinit { jobs.finish() }

    /// Starts `job` as a child of the runner's task.
    public func run(_ job: @escaping @Sendable () async -> Void) {
        jobs.yield(job)
    }
}

/// Something that happens once, awaited by any number of tasks before or after it did (a spare
/// tab made, a lane's job done).
public final class Completion: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init() {}

    public func complete() {
        let waiters: [CheckedContinuation<Void, Never>] = lock.withLock {
            guard !done else { return [] }
            done = true
            defer { waiting.removeAll() }
            return waiting
        }
        waiters.forEach { $0.resume() }
    }

    public var isComplete: Bool { lock.withLock { done } }

    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = lock.withLock {
                if done { return true }
                waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
