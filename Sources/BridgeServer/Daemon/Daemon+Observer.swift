import BridgeProtocol

extension Daemon {
    /// An observer opened by a page of a non-loopback origin needs the token (docs/PROTOCOL.md,
    /// "Observers"); the Bridge learns it here.
    func noteOrigin(_ id: ConnectionID, _ info: ConnectionInfo) {
        guard let origin = info.origin, !Self.isLoopbackOrigin(origin) else { return }
        bridge.connectedFromForeignOrigin(ClientID(id.raw))
    }

    /// `http(s)://127.0.0.1`, `localhost` or `[::1]`, any port.
    static func isLoopbackOrigin(_ origin: String) -> Bool {
        guard let p = OriginPolicy.parse(origin), p.scheme == "http" || p.scheme == "https" else { return false }
        return p.host == "127.0.0.1" || p.host == "localhost" || p.host == "[::1]"
    }
}
