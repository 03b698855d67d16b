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
        case .profile(let m): try profileRequest(m, client, id: id, p, now: now)
        case .ping: sendResult(client, id: id) { _ in }
        }
    }
}

extension Bridge {
    /// A controller method a profile answers (`ProfileBehavior.methods`): to the session's
    /// profile, refused for a session of another profile (or none).
    mutating func profileRequest(_ method: BridgeMethod, _ client: ClientID, id: Int64, _ p: Params, now: Int64) throws(ProtocolError) {
        try withExistingSession(p) { (b, s) throws(ProtocolError) in
            guard let profile = s.profile, let kind = type(of: profile.configuration) as? any ProfileBehavior.Type,
                  kind.methods.contains(method) else {
                let owner = b.configuration.profiles.owner(of: method)?.name ?? SessionProfile.plainName
                throw ProtocolError(.invalidParams, "session \(s.id) is not a \(owner) session: \(method.name) needs {\"profile\": \"\(owner)\"}")
            }
            try type(of: profile).request(&b, method, client, id: id, p, &s, now: now)
        }
    }
}
