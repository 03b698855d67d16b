/// Controller requests (contract section 6): dispatch by method to the file that handles it.
extension Bridge {
    mutating func controllerRequest(_ client: ClientID, id: Int64, method known: BridgeMethod?, name: String, _ p: Params, now: Int64) throws(ProtocolError) {
        guard let known, let method = ControllerMethod(known) else {
            if known == .hello { throw ProtocolError(.conflict, "this connection already said hello") }
            if known != nil {
                throw ProtocolError(.notAllowed, "\"\(name)\" is for pages; this connection is a controller")
            }
            throw ProtocolError(.unknownMethod, "no method \"\(name)\"")
        }
        switch method {
        case .session(let m): try sessionRequest(m, client, id: id, p, now: now)
        case .navigation(let m): try navigationRequest(m, client, id: id, p, now: now)
        case .router(let m): try routerRequest(m, named: known, client, id: id, p, now: now)
        case .host(let m): try hostRequest(client, id: id, method: m, named: known, p)
        case .shell(let m): try shellRequest(client, id: id, method: m, named: known, p, now: now)
        case .bridgeReply: try bridgeReply(client, id: id, p)
        case .ping: sendResult(client, id: id) { _ in }
        }
    }
}
