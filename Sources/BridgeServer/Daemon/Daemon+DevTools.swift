import BridgeBrowser
import BridgeProtocol

/// `--devtools`: Chromium also listens for DevTools on a loopback port of its own, so that
/// Playwright or Puppeteer attach to the tabs the daemon drives (docs/PLAYWRIGHT.md). The port
/// grants full control of every tab to any local process, with no token (docs/SECURITY.md).
extension Daemon {
    /// Starts Chromium now (not with the first browser session), so that the DevTools url exists
    /// from the daemon's start. `done` gets the url, or the reason Chromium could not start, on the
    /// service thread. Call on the service thread (e.g. from `onStart`).
    public func startDevTools(_ done: @escaping @Sendable (Result<String, BrowserError>) -> Void) {
        let host = browserSide().host
        let remote = self.remote
        host.tasks.run {
            let result: Result<String, BrowserError>
            do {
                if let url = try await host.start() {
                    result = .success(url)
                } else {
                    result = .failure(.launchFailed("Chromium was started without a DevTools port (the daemon has no --devtools)"))
                }
            } catch let error as BrowserError {
                result = .failure(error)
            } catch {
                result = .failure(.launchFailed("\(error)"))
            }
            remote.enqueue { done(result) }
        }
    }

    /// `GET /api/devtools`: `{"webSocketDebuggerUrl": "ws://127.0.0.1:PORT/devtools/browser/ID"}`;
    /// 404 without `--devtools`; 503 while no Chromium runs (starting, or a new one after a crash).
    /// Behind the token and Host rules of every `/api` route (the transport checks them first).
    func devtoolsResponse() -> HTTPResponse {
        func error(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
            HTTPResponse(status: status, contentType: "application/json",
                         body: JSONValue.object(["error": ["code": .string(code), "message": .string(message)]]).serialized(),
                         headers: [("Cache-Control", "no-store")])
        }
        guard configuration.browser.options.devtools else {
            return error(404, "not-found", "this daemon has no DevTools port: start it with --devtools (bridged serve --devtools)")
        }
        guard let url = browser?.host.devtoolsURL else {
            if let reason = browser?.restartFailure {
                return error(503, "unavailable", "Chromium could not be started again after it went away (\(reason)); the next browser session starts one")
            }
            return error(503, "unavailable", "Chromium is not running yet (it is starting, or restarting after a crash); ask again in a moment")
        }
        return HTTPResponse(status: 200, contentType: "application/json",
                            body: JSONValue.object(["webSocketDebuggerUrl": .string(url)]).serialized(),
                            headers: [("Cache-Control", "no-store")])
    }
}
