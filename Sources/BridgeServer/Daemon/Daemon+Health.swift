import BridgeProtocol

/// Health for load balancers: `/healthz` (liveness, and "shutting down" while draining) and
/// `/readyz` (whether this daemon should be given new sessions), and the drain that SIGTERM
/// starts.
///
/// Draining: `/healthz` and `/readyz` answer 503 so that a proxy stops sending new sessions here,
/// while every session, page and controller already here keeps working; when the drain time is
/// over the daemon stops as SIGINT stops it (every connection closed with 1001).
extension Daemon {
    /// True from the start of a drain (or of the shutdown) on.
    var isShuttingDown: Bool { draining || transport.stopping }

    /// Starts draining for `milliseconds`, then stops. Service thread only. Called again while
    /// draining (a second SIGTERM), or with 0, it stops at once.
    public func beginDraining(milliseconds: Int) {
        if draining || milliseconds <= 0 || transport.stopping {
            remote.stop()
            return
        }
        draining = true
        logger.notice("draining: /healthz and /readyz answer 503; every connection is closed in \(milliseconds) ms (send SIGTERM again to close them now)",
                      metadata: ["sessions": "\(bridge.sessionCount)", "connections": "\(bridge.clientCount)"])
        _ = transport.schedule(afterMicroseconds: Int64(milliseconds) * 1000) { [remote] in
            remote.stop()
        }
    }

    /// `/healthz` and `/readyz`; nil for any other path.
    func healthResponse(path: String) -> HTTPResponse? {
        switch path {
        case "/healthz":
            let down = isShuttingDown
            var w = JSONWriter(capacity: 160)
            w.beginObject()
            w.key("ok"); w.bool(!down)
            w.key("version"); w.string(configuration.bridge.version)
            if let instance = configuration.bridge.instance { w.key("instance"); w.string(instance) }
            w.key("draining"); w.bool(down)
            w.key("sessions"); w.int(Int64(bridge.sessionCount))
            w.key("connections"); w.int(Int64(bridge.clientCount))
            w.key("uptimeMs"); w.int((now - startedAt) / 1000)
            w.endObject()
            return HTTPResponse(status: down ? 503 : 200, contentType: "application/json", body: w.bytes,
                                headers: [("Cache-Control", "no-store")])
        case "/readyz":
            let reason: String? = isShuttingDown ? "draining"
                : bridge.sessionCount >= configuration.bridge.maxSessions ? "max-sessions" : nil
            var w = JSONWriter(capacity: 96)
            w.beginObject()
            w.key("ready"); w.bool(reason == nil)
            if let reason { w.key("reason"); w.string(reason) }
            if let instance = configuration.bridge.instance { w.key("instance"); w.string(instance) }
            w.key("sessions"); w.int(Int64(bridge.sessionCount))
            w.endObject()
            return HTTPResponse(status: reason == nil ? 200 : 503, contentType: "application/json", body: w.bytes,
                                headers: [("Cache-Control", "no-store")])
        default:
            return nil
        }
    }
}

extension TransportRemote {
    /// SIGTERM: asks the daemon behind this transport to drain for `milliseconds`, then stop
    /// (see `Daemon.beginDraining`). Safe from any thread.
    public func drain(milliseconds: Int) {
        enqueue { (transport: Transport) in
            if let daemon = transport.delegate as? Daemon {
                daemon.beginDraining(milliseconds: milliseconds)
            } else {
                transport.remote.stop()
            }
        }
    }
}
