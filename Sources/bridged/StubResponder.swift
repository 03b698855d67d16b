import BridgeServer
import Foundation

/// Placeholder delegate until the protocol engine is wired in: answers every text message with
/// `unknown-method` (echoing the request's integer id, else null), binary messages with
/// `invalid-request`, serves `/healthz` and a bare `/`.
final class StubResponder: TransportDelegate {
    let transport: Transport
    let startedAt: Int64
    var connections = 0

    init(transport: Transport) {
        self.transport = transport
        startedAt = transport.monotonicMicroseconds
    }

    func transportDidStart(port: Int) {}

    func transportDidOpen(_ id: ConnectionID, info: ConnectionInfo) { connections += 1 }

    func transportDidClose(_ id: ConnectionID) { connections -= 1 }

    func transport(_ id: ConnectionID, didReceiveText message: UnsafeRawBufferPointer) {
        let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(message))
        let requestID = envelope?.id.map(String.init) ?? "null"
        let method = envelope?.method
        let what = method.map { "method '\($0)' is not implemented by this build" } ?? "no method is implemented by this build"
        let reply = #"{"id":\#(requestID),"error":{"code":"unknown-method","message":\#(jsonString(what))}}"#
        transport.send(id, Array(reply.utf8))
    }

    func transportDidReceiveBinary(_ id: ConnectionID) {
        let reply = #"{"id":null,"error":{"code":"invalid-request","message":"binary frames are not supported"}}"#
        transport.send(id, Array(reply.utf8))
    }

    func transportHTTP(method: String, path: String, query: String) -> HTTPResponse? {
        switch path {
        case "/healthz":
            let uptimeMs = (transport.monotonicMicroseconds - startedAt) / 1000
            let body = #"{"ok":true,"connections":\#(connections),"uptimeMs":\#(uptimeMs)}"#
            return HTTPResponse(status: 200, contentType: "application/json", text: body,
                                headers: [("Cache-Control", "no-store")])
        case "/":
            let page = """
                <!doctype html><meta charset="utf-8"><title>bridged</title>
                <h1>bridged</h1><p>\(connections) connection(s). The dashboard is not wired in this build.</p>

                """
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", text: page,
                                headers: [("Cache-Control", "no-store")])
        default:
            return nil
        }
    }

    /// The two fields the stub echoes; each decoded leniently (a bad `id` is just absent).
    struct Envelope: Decodable {
        var id: Int64?
        var method: String?
        enum CodingKeys: String, CodingKey { case id, method }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if let v = try? c.decode(Int64.self, forKey: .id), abs(v) <= 1 << 53 { id = v }
            method = try? c.decode(String.self, forKey: .method)
        }
    }

    private func jsonString(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
