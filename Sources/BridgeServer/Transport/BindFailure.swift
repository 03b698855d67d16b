#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What went wrong when the listener could not be created. libwebsockets only logs that it
/// failed; the transport binds the same address once more, as lws does (`SO_REUSEADDR`, IPv6
/// dual-stack for `::`), to name the error: "127.0.0.1:8787 is already in use (EADDRINUSE)".
enum BindFailure {
    /// The sentence for `host:port` (the address `plan` binds).
    static func describe(host: String, plan: BindPlan, port: Int) -> String {
        let address = plan.iface ?? (plan.disableIPv6 ? "0.0.0.0" : "::")
        guard let errorNumber = probe(address: address, port: port) else {
            return "libwebsockets could not listen on \(HostPolicy.urlHost(host)):\(port) (see its log lines above)"
        }
        return message(address: address, port: port, errorNumber: errorNumber)
    }

    /// The sentence for `errorNumber` from binding `address:port` (pure).
    static func message(address: String, port: Int, errorNumber: Int32) -> String {
        let shown = "\(HostPolicy.urlHost(address)):\(port)"
        switch errorNumber {
        case EADDRINUSE:
            return "\(shown) is already in use (EADDRINUSE): another process listens there; "
                + "choose another --port, or --port 0 for a free one"
        case EACCES:
            return "no permission to listen on \(shown) (EACCES): ports below 1024 need privileges "
                + "(CAP_NET_BIND_SERVICE); choose a port from 1024 up"
        case EADDRNOTAVAIL:
            return "\(HostPolicy.urlHost(address)) is not an address of this machine (EADDRNOTAVAIL); "
                + "choose one of its addresses with --host"
        case 0:
            return "libwebsockets could not listen on \(shown), although the address can be bound now "
                + "(see its log lines above)"
        default:
            return "could not listen on \(shown): \(String(cString: strerror(errorNumber))) "
                + "(\(errnoName(errorNumber)))"
        }
    }

    static func errnoName(_ e: Int32) -> String {
        switch e {
        case EADDRINUSE: "EADDRINUSE"
        case EACCES: "EACCES"
        case EADDRNOTAVAIL: "EADDRNOTAVAIL"
        case EAFNOSUPPORT: "EAFNOSUPPORT"
        case EINVAL: "EINVAL"
        case EPERM: "EPERM"
        case EMFILE: "EMFILE"
        case ENFILE: "ENFILE"
        case ENOBUFS: "ENOBUFS"
        case ENOMEM: "ENOMEM"
        default: "errno \(e)"
        }
    }

    /// The errno of binding `address:port` now (0: it binds), nil when `address` is not a
    /// numeric address (an interface name lws resolves itself).
    static func probe(address: String, port: Int) -> Int32? {
        let literal = HostPolicy.stripBrackets(address)
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
        } else if inet_pton(AF_INET6, literal, &v6.sin6_addr) == 1 {
            family = AF_INET6
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
        } else {
            return nil
        }
        #if canImport(Glibc)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(family, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let result: Int32
        if family == AF_INET {
            result = withUnsafePointer(to: &v4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        } else {
            result = withUnsafePointer(to: &v6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        guard result == 0 else { return errno }
        // lws also listens: a port taken by a socket bound without listening shows here.
        return listen(fd, 1) == 0 ? 0 : errno
    }
}
