/// Session ids and instances (`--instance NAME`): a daemon in a farm names its sessions
/// `s-NAME-RANDOM`, so that a proxy routes every connection of a session to the daemon that owns
/// it by the name inside the id.
extension Bridge {
    /// `s-NAME-` with an instance, else `s-`; RANDOM (16 hex digits) follows.
    var sessionIDPrefix: String {
        if let instance = configuration.instance { return "s-" + instance + "-" }
        return "s-"
    }

    /// The instance named inside a session id (`s-NAME-RANDOM` → NAME), nil for ids without one.
    public static func instance(ofSession sid: String) -> String? {
        let parts = sid.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "s", !parts[2].isEmpty else { return nil }
        let name = String(parts[1])
        return BridgeConfiguration.isValidInstance(name) ? name : nil
    }

    /// `unknown-session` for `sid`; when the id belongs to another daemon of a farm, the message
    /// says which one, and how the connection should have been routed.
    func unknownSession(_ sid: String) -> ProtocolError {
        if let owner = Self.instance(ofSession: sid), owner != configuration.instance {
            let here = configuration.instance.map { "instance \"\($0)\"" } ?? "a daemon without --instance"
            return ProtocolError(.unknownSession,
                                 "no session \"\(sid)\" here: it belongs to instance \"\(owner)\" and this is \(here); "
                                     + "connect through the proxy with /bridge?session=\(sid) so that it reaches its daemon")
        }
        return ProtocolError(.unknownSession, "no session \"\(sid)\"")
    }
}
