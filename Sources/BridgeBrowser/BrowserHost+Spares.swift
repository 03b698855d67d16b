import BridgeProtocol
import Foundation

/// Tabs made before they are needed (`BrowserOptions.spareTabs`): a spare per session, and a
/// browser context made ahead, with its spare, for the next session. Made in `tasks`, in the
/// background, once the page the user waits for has loaded (`TabCommand.spareAfterLoad`).
extension BrowserHost {
    /// Spare tabs ready (at most one per session).
    public var spareTabCount: Int { spares.count }

    /// Chromium's target id of the spare tab of `session` (once the one being made, if any, is
    /// ready or failed); nil when it has none.
    public func spareTargetId(session: String) async -> TargetID? {
        if let making = makingSpares[session] { await making.wait() }
        return spares[session]?.targetId
    }

    /// The browser context made ahead for the next session and its tab's target id (once the
    /// one being made, if any, is ready or failed); nil when there is none.
    public func contextAhead() async -> (context: BrowserContextID, target: TargetID)? {
        if let waiting = freeContextWaiting { await waiting.wait() }
        if let making = makingFreeContext { await making.wait() }
        return freeContext.map { ($0.id, $0.spare.targetId) }
    }

    /// Whether the context ahead is wanted and waits for the browser to be quiet.
    public var contextAheadWaits: Bool { freeContextWaiting != nil }

    /// The session's spare, taken (nil when it has none; one being made is waited for).
    func takeSpare(session: String, context: BrowserContextID) async -> Spare? {
        guard options.spareTabs else { return nil }
        if spares[session] == nil, let making = makingSpares[session] { await making.wait() }
        guard machine.contexts[session] == context, browser != nil else { return nil }
        return spares.removeValue(forKey: session)
    }

    /// The session's page has loaded: its spare first, then (after it) a context for the next
    /// session.
    func pageLoaded(session: String) {
        if spares[session] == nil, makingSpares[session] == nil { makeSpare(session: session) } else { makeFreeContext() }
    }

    /// Starts making a spare tab for `session` unless it has one or one is being made.
    func makeSpare(session: String) {
        guard options.spareTabs, !shuttingDown, spares[session] == nil, makingSpares[session] == nil,
              let b = browser, let context = machine.contexts[session] else { return }
        let userAgent = sessionUserAgents[session] ?? b.userAgent
        let done = Completion()
        makingSpares[session] = done
        tasks.run {
            await self.buildSpare(b, session: session, context: context, userAgent: userAgent)
            done.complete()
        }
    }

    private func buildSpare(_ b: Browser, session: String, context: BrowserContextID, userAgent: String) async {
        // Still wanted: the session (its context) and the browser are the same.
        do {
            spares[session] = try await newSpare(b, context: context, userAgent: userAgent,
                                                 wanted: { machine.contexts[session] == context && browser?.generation == b.generation })
        } catch is CancellationError {
            debug("\(session): its spare tab was made for nothing (the session or the browser went away)")
        } catch {
            debug("\(session): no spare tab: \(error)")
        }
        // Made for nothing or failed half-way: closed (the session's next tab is made the usual
        // way and makes a new spare once its page has loaded).
        makingSpares[session] = nil
        makeFreeContext()
    }

    /// A tab in `context` on `about:blank`, attached and dressed, without an injected client.
    /// Closed again when a call fails or `wanted()` says no after one.
    private func newSpare(_ b: Browser, context: BrowserContextID, userAgent: String, wanted: () -> Bool) async throws -> Spare {
        let t = options.callTimeoutSeconds
        var targetId: TargetID?
        do {
            // In the background: the session's top web view stays the tab in front.
            let created = try await b.cdp.call(.createTarget(context: context, background: true), timeout: t)
            targetId = created["targetId"]?.stringValue.map(TargetID.init(_:))
            guard let id = targetId, wanted() else { throw CancellationError() }
            let attached = try await b.cdp.call(.attachToTarget(id), timeout: t)
            guard let cdpSession = attached["sessionId"]?.stringValue.map(CDPSessionID.init(_:)), wanted() else { throw CancellationError() }
            try await dress(b, cdpSession: cdpSession, userAgent: userAgent, script: nil)
            guard wanted() else { throw CancellationError() }
            return Spare(targetId: id, cdpSession: cdpSession, userAgent: userAgent)
        } catch {
            if let targetId {
                _ = try? await b.cdp.call(.closeTarget(targetId), timeout: t)
            }
            throw error
        }
    }

    /// Makes a browser context with its spare tab for the next session, unless there is one or
    /// one is being made or waited for: once no web view's tab has opened or reported anything
    /// for `options.contextAheadQuietSeconds` (the pages the user waits for come first).
    func makeFreeContext() {
        guard options.spareTabs, !shuttingDown, freeContext == nil, makingFreeContext == nil, freeContextWaiting == nil, browser != nil else { return }
        let waiting = Completion()
        freeContextWaiting = waiting
        freeContextWaits += 1
        let wait = freeContextWaits
        tasks.run { [weak self] in
            await self?.makeFreeContextWhenQuiet(wait: wait)
            waiting.complete()
        }
    }

    /// The wait for quiet is called off (`shutdown`): those waiting for it go on at once, and
    /// the wait ends by itself.
    func cancelFreeContextWait() {
        freeContextWaits += 1
        freeContextWaiting?.complete()
        freeContextWaiting = nil
    }

    private func makeFreeContextWhenQuiet(wait: Int) async {
        let quiet = UInt64(max(0, options.contextAheadQuietSeconds) * 1_000_000_000)
        while true {
            guard wait == freeContextWaits else { return }
            let since = DispatchTime.now().uptimeNanoseconds &- machine.lastTabActivity
            if since >= quiet || shuttingDown || browser == nil { break }
            try? await Task.sleep(nanoseconds: quiet - since)
        }
        guard wait == freeContextWaits else { return }
        freeContextWaiting = nil
        guard options.spareTabs, !shuttingDown, freeContext == nil, makingFreeContext == nil, let b = browser else { return }
        let making = Completion()
        makingFreeContext = making
        tasks.run {
            await self.buildFreeContext(b)
            making.complete()
        }
    }

    private func buildFreeContext(_ b: Browser) async {
        let t = options.callTimeoutSeconds
        var contextId: BrowserContextID?
        do {
            let reply = try await b.cdp.call(.createBrowserContext, timeout: t)
            contextId = reply["browserContextId"]?.stringValue.map(BrowserContextID.init(_:))
            guard let id = contextId, browser?.generation == b.generation, !shuttingDown else { throw CancellationError() }
            let spare = try await newSpare(b, context: id, userAgent: b.userAgent, wanted: { browser?.generation == b.generation && !shuttingDown })
            freeContext = FreeContext(id: id, spare: spare)
        } catch {
            if let contextId {
                _ = try? await b.cdp.call(.disposeBrowserContext(contextId), timeout: t)
            }
        }
        makingFreeContext = nil
    }

    /// A spare tab Chromium reports crashed or gone is dropped (and closed).
    func dropSpare(targetId: TargetID, cdp: CDPConnection) async {
        if let free = freeContext, free.spare.targetId == targetId {
            // The context made ahead goes with it (the next session makes its own).
            freeContext = nil
            _ = try? await cdp.call(.disposeBrowserContext(free.id), timeout: options.callTimeoutSeconds)
            return
        }
        guard let (session, _) = spares.first(where: { $0.value.targetId == targetId }) else { return }
        spares[session] = nil
        _ = try? await cdp.call(.closeTarget(targetId), timeout: options.callTimeoutSeconds)
    }
}
