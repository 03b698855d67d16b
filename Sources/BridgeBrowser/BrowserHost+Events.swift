import BridgeProtocol
import Foundation

/// Chromium's events: the `TabMachine` decides, the host performs its commands in order (an
/// `.ask`'s answer is fed back before the next one). One job handles a browser's events, one at a
/// time, in arrival order (`launch`).
extension BrowserHost {
    func handle(_ event: CDPEvent, generation gen: Int) async {
        guard let b = browser, b.generation == gen else { return }
        let commands = machine.event(event.event, session: event.sessionId, now: DispatchTime.now().uptimeNanoseconds)
        await perform(commands, b)
    }

    /// Carries out the machine's commands, in order.
    func perform(_ commands: [TabCommand], _ b: Browser) async {
        let t = options.callTimeoutSeconds
        for command in commands {
            switch command {
            case .call(let call, let session):
                _ = try? await b.cdp.call(call, session: session, timeout: t)
            case .send(let call, let session):
                b.cdp.send(call, session: session, timeout: t) { _ in }
            case .ask(let call, let session, let timeout, let followUp):
                let result: Result<JSONValue, any Error>
                do { result = .success(try await b.cdp.call(call, session: session, timeout: timeout ?? t)) } catch { result = .failure(error) }
                await perform(machine.answered(followUp, result), b)
            case .emit(let event):
                emit(event)
            case .debug(let line):
                debug(line)
            case .letThrough(let load):
                await letThrough(load, b)
            case .serve(let requestId, let url, let web, let session, let label):
                do {
                    _ = try await b.cdp.call(DevToolsCall(.fetchFulfillRequest, web.answer(requestId, url: url)), session: session, timeout: t)
                } catch {
                    // Not left paused for good: the page sees the request fail, the log says why.
                    emit(.warning("\(label): \(url) could not be served from the web directory: \(error)"))
                    b.cdp.send(.failRequest(requestId, reason: "Failed"), session: session, timeout: t) { _ in }
                }
            case .disableNetwork(let session, let label):
                let debug = self.debug
                b.cdp.send(.networkDisable, session: session, timeout: t) { result in
                    if case .failure(let error) = result { debug("\(label): Network.disable: \(error)") }
                }
            case .spareAfterLoad(let session):
                pageLoaded(session: session)
            case .dropSpare(let targetId):
                await dropSpare(targetId: targetId, cdp: b.cdp)
            case .retryClose(let targetId, let session):
                retryClose(targetId, session: session, cdp: b.cdp)
            }
        }
    }

    /// Until Chromium reports the tab destroyed, its close is sent again now and then.
    private func retryClose(_ targetId: TargetID, session s: CDPSessionID, cdp: CDPConnection) {
        tasks.run { [weak self] in
            for _ in 0..<Self.closeRetries {
                try? await Task.sleep(nanoseconds: Self.closeRetryNanoseconds)
                guard let self, await self.machine.closing[s] == targetId else { return }
                _ = try? await cdp.call(.closeTarget(targetId), timeout: self.options.callTimeoutSeconds)
            }
        }
    }

    /// The tab's own load, let through: continued, or answered from the session's web directory.
    /// A load the browser will not let through stays paused for good: the web view is told it
    /// failed (`webview.failed`), not left blank without a word.
    private func letThrough(_ load: LetThrough, _ b: Browser) async {
        let (cdp, t, emit) = (b.cdp, options.callTimeoutSeconds, self.emit)
        let (key, session, requestId, url) = (load.key, load.cdpSession, load.requestId, load.url)
        let call = load.served.map { DevToolsCall(.fetchFulfillRequest, $0.answer(requestId, url: url)) }
            ?? DevToolsCall(.fetchContinueRequest, load.continued)
        let failed: @Sendable (any Error) -> Void = { error in
            emit(.loadFailed(session: key.session, webview: key.webview, url: url, reason: "the browser did not let the page's load through: \(error)"))
        }
        if load.afterClient, let client = clients[key] {
            // Not before the page's client is in place; meanwhile other events go on.
            tasks.run {
                if (try? await client.value) == nil {
                    _ = try? await cdp.call(.failRequest(requestId), session: session, timeout: t)
                } else {
                    do {
                        _ = try await cdp.call(call, session: session, timeout: t)
                    } catch BrowserError.requestGone {
                        await self.ownLoadSuperseded(key)
                    } catch {
                        failed(error)
                    }
                }
            }
            return
        }
        do {
            _ = try await cdp.call(call, session: session, timeout: t)
        } catch BrowserError.requestGone {
            ownLoadSuperseded(key)
        } catch {
            failed(error)
        }
    }

    /// A newer navigation of the tab cancelled its own load's request before it was let through
    /// (the host's own load replacing the page's navigation to the same place): the next document
    /// request of the tab is the own load, not a failure.
    func ownLoadSuperseded(_ key: TabKey) {
        machine.tabs[key]?.ownLoadPending = true
    }
}
