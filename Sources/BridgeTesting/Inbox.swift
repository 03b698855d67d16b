import Foundation

/// What arrives from other threads (the host's events, the fake Chromium's commands), kept in
/// order; a test waits for the next one that matches. No polling: a waiter is resumed by the
/// `append` that brings its element. The timeout is only a generous bound for a test that would
/// otherwise hang.
public final class Inbox<Element: Sendable>: @unchecked Sendable {
    private struct Waiter {
        var match: @Sendable (Element) -> Bool
        var continuation: CheckedContinuation<Element, any Error>
    }

    public struct Timeout: Error, CustomStringConvertible {
        public var description: String
    }

    private let lock = NSLock()
    /// Arrived and not taken by a waiter, oldest first.
    private var items: [Element] = []
    /// Everything that ever arrived, oldest first.
    private var history: [Element] = []
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0

    public init() {}

    public func append(_ element: Element) {
        let waiter: Waiter? = lock.withLock {
            history.append(element)
            if let key = waiters.keys.sorted().first(where: { waiters[$0]!.match(element) }) {
                return waiters.removeValue(forKey: key)
            }
            items.append(element)
            return nil
        }
        waiter?.continuation.resume(returning: element)
    }

    /// The oldest element not taken yet that satisfies `match`, taken; waits for one up to
    /// `timeout` seconds, then throws `Timeout` naming what did arrive.
    public func next(timeout: Double = 30, _ match: @escaping @Sendable (Element) -> Bool) async throws -> Element {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element, any Error>) in
            let found: Element? = lock.withLock {
                if let i = items.firstIndex(where: match) { return items.remove(at: i) }
                let key = nextWaiter
                nextWaiter += 1
                waiters[key] = Waiter(match: match, continuation: continuation)
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
                    guard let self else { return }
                    let (waiter, seen): (Waiter?, [Element]) = self.lock.withLock { (self.waiters.removeValue(forKey: key), self.history) }
                    waiter?.continuation.resume(throwing: Timeout(description: "nothing matching arrived in \(timeout) s; arrived: \(seen)"))
                }
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
    }

    /// Everything that arrived so far, oldest first (taken or not).
    public var all: [Element] { lock.withLock { history } }

    /// What arrived and was not taken, oldest first.
    public var untaken: [Element] { lock.withLock { items } }
}
