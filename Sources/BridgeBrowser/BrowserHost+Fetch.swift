import BridgeProtocol
import Foundation

/// Documents the daemon fetches through the browser: a hotwire-native session's
/// `pathConfigurationUrl`, as the app's native side loads its server copy (docs/HOTWIRE.md).
///
/// Chromium fetches it (`Network.loadNetworkResource` in the frame of the session's main tab): no
/// CORS (a document of another origin without CORS headers is fine), http and https (Chromium's
/// certificate checks), the session's cookies, redirects followed by Chromium's network stack (at
/// most 20; a redirect to a scheme it will not follow fails). The daemon then reads the body from
/// Chromium's stream (`IO.read`), at most `maxBytes`, and parses it as JSON.
extension BrowserHost {
    /// Bytes asked for per `IO.read`.
    static let fetchChunkBytes = 64 * 1024

    /// The JSON document at `url`, fetched in the frame of `webview`'s tab: `.document` or
    /// `.failed` with why (`HTTP 404`, `net::ERR_CONNECTION_REFUSED`, over `maxBytes`, not JSON,
    /// no answer within `timeoutSeconds`). Never throws: a failure is the answer.
    public func fetchJSON(session: String, webview: ItemID, url: String, maxBytes: Int, timeoutSeconds: Double) async -> PathConfigurationFetch {
        let body: [UInt8]
        do {
            body = try await fetchBody(session: session, webview: webview, url: url, maxBytes: maxBytes, timeoutSeconds: timeoutSeconds)
        } catch let failure as FetchFailure {
            return .failed(failure.message)
        } catch BrowserError.timeout {
            return .failed("no answer within \(Self.seconds(timeoutSeconds)) s")
        } catch BrowserError.unknownTarget {
            return .failed("the main web view has no tab to fetch it from")
        } catch BrowserError.browser(let message) {
            return .failed("the browser could not fetch it: \(message)")
        } catch {
            return .failed("the browser could not fetch it: \(error)")
        }
        do {
            return .document(try JSONParser.parse(body))
        } catch {
            return .failed("not JSON: \(error.description)")
        }
    }

    struct FetchFailure: Error {
        var message: String
    }

    static func seconds(_ s: Double) -> String {
        s == s.rounded() ? String(Int(s)) : String(s)
    }

    /// The body of `url` (a 2xx answer), at most `maxBytes`, within `timeoutSeconds` in all.
    func fetchBody(session: String, webview: ItemID, url: String, maxBytes: Int, timeoutSeconds: Double) async throws -> [UInt8] {
        let (tab, cdp) = try tab(session, webview)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int64(timeoutSeconds * 1000)))
        func remaining() throws -> Double {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { throw BrowserError.timeout("the fetch") }
            return Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
        }
        let reply = try await cdp.call(DevToolsCall(.networkLoadNetworkResource, [
            // The main frame's id is its tab's target id.
            "frameId": .string(tab.mainFrame), "url": .string(url),
            "options": ["disableCache": true, "includeCredentials": true],
        ]), session: tab.cdpSession, timeout: try remaining())
        guard let resource = reply["resource"] else { throw FetchFailure(message: "the browser gave no answer for it") }
        let stream = resource["stream"]?.stringValue
        do {
            if let status = resource["httpStatusCode"]?.intValue, !(200..<300).contains(status) {
                throw FetchFailure(message: "HTTP \(status)")
            }
            guard resource["success"]?.boolValue == true else {
                throw FetchFailure(message: resource["netErrorName"]?.stringValue ?? "the browser could not load it")
            }
            guard let stream else { throw FetchFailure(message: "the browser gave no body for it") }
            var body: [UInt8] = []
            while true {
                let chunk = try await cdp.call(DevToolsCall(.ioRead, ["handle": .string(stream), "size": .int(Int64(Self.fetchChunkBytes))]),
                                               session: tab.cdpSession, timeout: try remaining())
                let data = chunk["data"]?.stringValue ?? ""
                if chunk["base64Encoded"]?.boolValue == true {
                    guard let bytes = Data(base64Encoded: data) else { throw FetchFailure(message: "the browser's stream was not base64") }
                    body.append(contentsOf: bytes)
                } else {
                    body.append(contentsOf: data.utf8)
                }
                if body.count > maxBytes { throw FetchFailure(message: "the document is over \(maxBytes) bytes") }
                if chunk["eof"]?.boolValue == true { break }
                if data.isEmpty { throw FetchFailure(message: "the browser's stream of it ended without its end") }
            }
            await closeStream(cdp, stream, session: tab.cdpSession)
            return body
        } catch {
            if let stream { await closeStream(cdp, stream, session: tab.cdpSession) }
            throw error
        }
    }

    private func closeStream(_ cdp: CDPConnection, _ handle: String, session: CDPSessionID) async {
        _ = try? await cdp.call(DevToolsCall(.ioClose, ["handle": .string(handle)]), session: session, timeout: options.callTimeoutSeconds)
    }
}
