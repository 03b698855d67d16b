import CWebsockets
import CWireCheck
import Logging

/// The wire checks libwebsockets 4.1.6 does not make (Sources/CWireCheck): a `recv` interposer
/// follows each accepted connection's bytes. The transport tells it what the connection is
/// (accepted, a plain HTTP request with a body of so many bytes, an established WebSocket); it
/// answers request heads over 8 KiB with `431` itself, and reports the first unmasked client
/// frame (RFC 6455 §5.1), which the transport answers with close 1002.
extension Transport {
    /// The process-wide failure hook, installed once before the first context exists.
    static let wireHookInstalled: Bool = {
        bridged_wire_set_fail_hook { owner, id in
            guard let owner else { return }
            Unmanaged<Transport>.fromOpaque(owner).takeUnretainedValue().unmaskedFrame(connection: id)
        }
        return true
    }()

    /// From inside `recv` on the service thread (lws is reading, no callback of ours is running):
    /// the frames before the unmasked one are still delivered; the close goes out from the next
    /// WRITEABLE, after the replies to them.
    func unmaskedFrame(connection id: UInt64) {
        guard !destroying, let conn = connections[id] else { return }
        logger.info("unmasked frame from a client; closing with 1002", metadata: ["connection": "c\(id)"])
        conn.wireFailed = true
        requestWritable(conn)
    }

    /// WRITEABLE after `unmaskedFrame`: input is dropped from here on, messages already queued
    /// are still written, then the close frame.
    func failForUnmaskedFrame(_ conn: Connection) {
        conn.discardInput = true
        conn.closeRequest = CloseRequest(1002, "unmasked frame")
        setCloseGrace(conn)
    }

    func wireDescriptor(_ wsi: OpaquePointer) -> Int32 { Int32(lws_get_socket_fd(wsi)) }
}
