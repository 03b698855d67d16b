/// The read-only `observer` role (the dashboard's): it may list, get and subscribe, never
/// change a session, and never sees a token.
///
/// An observer is a controller connection marked `observer`: it subscribes and receives events
/// like one, but only the methods of `observerMethods` (Methods.swift) are open to it, it cannot handle
/// `navigate` or `webview.open`, and the events it receives carry no claim token (`webview.open`
/// loses `token` and `pageUrl`). Allowed from loopback (a loopback peer, and a loopback or no
/// `Origin`); elsewhere only with the configured controller token.
extension Bridge {
    /// The host says the connection was opened by a page of a non-loopback origin (its
    /// `Origin` header): an observer there needs the token even from a loopback peer (a proxy).
    public mutating func connectedFromForeignOrigin(_ client: ClientID) {
        clients[client]?.foreignOrigin = true
    }

    mutating func helloObserver(_ client: ClientID, id: Int64, _ p: Params, isLoopback peer: Bool) throws(ProtocolError) {
        let isLoopback = peer && !(clients[client]?.foreignOrigin ?? false)
        let token = try p.optionalString("token")
        if let token {
            guard let expected = configuration.controllerToken, Self.constantTimeEquals(expected, token) else {
                throw ProtocolError(.notAllowed, configuration.controllerToken == nil
                    ? "this daemon has no token; observers are accepted from loopback only"
                    : "wrong token")
            }
        } else if !isLoopback {
            throw ProtocolError(.notAllowed, configuration.controllerToken == nil
                ? "observers are accepted from loopback only (start the daemon with --token to allow others)"
                : "an observer from a non-loopback address must present the token")
        }
        if let handles = try p.optionalStringArray("handles"), !handles.isEmpty {
            throw ProtocolError(.invalidParams, "an observer handles nothing; \"handles\" is for controllers")
        }
        let number = nextControllerNumber
        nextControllerNumber += 1
        var info = ControllerInfo(name: "o\(number)", number: number, handles: [])
        info.observer = true
        clients[client]?.role = .controller(info)
        let version = configuration.version
        let tokenRequired = configuration.controllerToken != nil
        sendResult(client, id: id) { out in
            out.key("protocol"); out.int(1)
            out.key("observer"); out.string(info.name)
            out.key("version"); out.string(version)
            out.key("tokenRequired"); out.bool(tokenRequired)
        }
    }

    /// Refuses what an observer may not do.
    func checkObserver(_ method: BridgeMethod?, name: String) throws(ProtocolError) {
        guard let method else { throw ProtocolError(.unknownMethod, "no method \"\(name)\"") }
        guard !Self.observerMethods.contains(method) else { return }
        if method == .hello { throw ProtocolError(.conflict, "this connection already said hello") }
        throw ProtocolError(.notAllowed, "\"\(name)\" changes sessions; an observer may only list, get and subscribe")
    }

    func isObserver(_ client: ClientID) -> Bool {
        if case .controller(let info)? = clients[client]?.role { return info.observer }
        return false
    }

    /// Queues event `frame` (of event `name`) for `recipients`; observers get events that carry
    /// claim tokens without them.
    mutating func sendEventFrame(_ name: String, _ frame: [UInt8], to recipients: [ClientID]) {
        guard name == "webview.open" else {
            for client in recipients { effects.append(.send(client, frame)) }
            return
        }
        var redacted: [UInt8]?
        for client in recipients {
            if isObserver(client) {
                if redacted == nil { redacted = Self.withoutSecrets(frame) }
                effects.append(.send(client, redacted!))
            } else {
                effects.append(.send(client, frame))
            }
        }
    }

    /// The event frame without `params.token` and `params.pageUrl`.
    static func withoutSecrets(_ frame: [UInt8]) -> [UInt8] {
        guard case .object(var event)? = try? JSONParser.parse(frame),
              case .object(var params)? = event["params"] else { return Array(#"{"event":"webview.open","params":{}}"#.utf8) }
        _ = params.removeValue(forKey: "token")
        _ = params.removeValue(forKey: "pageUrl")
        event["params"] = .object(params)
        var w = JSONWriter(capacity: frame.count)
        w.write(.object(event))
        return w.bytes
    }
}
