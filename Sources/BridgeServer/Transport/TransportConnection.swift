/// A FIFO of outbound messages: the first one inline, the ones behind it in an array with a
/// moving head, compacted when the dead prefix dominates, so append and removeFirst are
/// amortised O(1). A reply written at once (the common case: one message at a time) never
/// touches the array, which stays unallocated until a second message waits. It also counts the
/// memory its messages hold (`memory`), which is what the slow-reader bound limits.
struct MessageQueue {
    /// The first message (nil: the queue is empty, and so is `rest`).
    private var front: [UInt8]?
    /// The messages behind `front`, from `head` on (the elements before `head` are []).
    private var rest: [[UInt8]] = []
    private var head = 0
    /// Heap bytes held by the queued messages (see `cost`).
    private(set) var elementMemory = 0

    /// What one message costs on the heap: its storage (`capacity`, which the array reads from
    /// the allocator), the array's header (32 bytes) and the allocator's (8).
    @inline(__always) static func cost(_ message: [UInt8]) -> Int { message.capacity + 40 }

    var isEmpty: Bool { front == nil }
    var count: Int { front == nil ? 0 : 1 + rest.count - head }
    var first: [UInt8]? { front }
    /// The message `offset` places behind the first (0: the first), nil past the end.
    func element(at offset: Int) -> [UInt8]? {
        if offset == 0 { return front }
        return head + offset - 1 < rest.count ? rest[head + offset - 1] : nil
    }

    /// Heap bytes held: the messages and the array of those behind the first (none while at
    /// most one message waits).
    var memory: Int { elementMemory + rest.capacity * MemoryLayout<[UInt8]>.stride }

    mutating func append(_ message: [UInt8]) {
        elementMemory += Self.cost(message)
        if front == nil {
            front = message
        } else {
            rest.append(message)
        }
    }

    mutating func removeFirst() {
        guard let removed = front else { preconditionFailure("removeFirst on an empty MessageQueue") }
        elementMemory -= Self.cost(removed)
        if head == rest.count {
            front = nil
            return
        }
        // The next one moves inline (swapped out: no retain and release of its storage).
        var next: [UInt8] = []
        swap(&next, &rest[head])
        front = next
        if head + 1 == rest.count {
            // The array emptied. Element by element keeps its storage cheaply
            // (removeAll(keepingCapacity:) goes through the generic replaceSubrange); a large
            // one is given back.
            if rest.capacity <= 64 {
                while !rest.isEmpty { rest.removeLast() }
            } else {
                rest = []
            }
            head = 0
            return
        }
        head += 1
        if head >= 64 && head * 2 >= rest.count {
            rest.removeFirst(head)
            head = 0
        }
    }

    /// Drops every message; returns how many bytes they held.
    @discardableResult
    mutating func removeAll() -> Int {
        var bytes = front?.count ?? 0
        for i in head..<rest.count { bytes += rest[i].count }
        front = nil
        rest = []
        head = 0
        elementMemory = 0
        return bytes
    }
}

/// Why we close a connection (`Connection.closeRequest`): set once, on a rare path, so kept out
/// of line (a pointer) rather than as 24 bytes in every connection.
final class CloseRequest {
    let code: UInt16
    let reason: String

    init(_ code: UInt16, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}

/// State of one WebSocket connection. Service thread only.
///
/// Every message reads or writes nearly every field, so the object is kept small: 128 bytes
/// with the header (the one-byte flags together after `fd`, the close request out of line),
/// two or three cache lines depending on where the allocator puts it, where 152 bytes took
/// three or four (docs/PERFORMANCE.md, "the daemon half at 1,000 pages: against the echo").
///
/// The mutable properties opt out of dynamic exclusivity enforcement: every message touches
/// several of them, and each use of a class's stored property otherwise pays a runtime check.
/// Only the service thread touches a connection, and no access to one of them overlaps another
/// (no `inout` is held across a call that reaches the same connection again).
final class Connection {
    let id: UInt64
    let wsi: OpaquePointer
    /// The socket's descriptor (for the wire checks, Transport+Wire.swift).
    let fd: Int32

    // The flags (one byte each, packed after `fd`).
    /// Receive side: inside a fragmented message, and whether it is binary.
    @exclusivity(unchecked) var inMessage = false
    @exclusivity(unchecked) var rxBinary = false
    @exclusivity(unchecked) var writableRequested = false
    /// In `Transport.pendingFlush`: written directly when the current callback ends.
    @exclusivity(unchecked) var flushPending = false
    /// Input is read and dropped (we are closing).
    @exclusivity(unchecked) var discardInput = false
    /// An unmasked frame arrived (see Transport+Wire.swift): close with 1002.
    @exclusivity(unchecked) var wireFailed = false
    /// lws closed it (CLOSED): no longer in `Transport.connections`.
    @exclusivity(unchecked) var closed = false
    /// Our close frame is out; waiting for the peer's. (Also set when the peer closed first:
    /// lws answers its close, we send nothing more.)
    @exclusivity(unchecked) var closeSent = false

    // Receive side: reassembly of fragmented messages.
    @exclusivity(unchecked) var rxCount = 0
    @exclusivity(unchecked) var rxBuffer: [UInt8] = []

    // Send side.
    @exclusivity(unchecked) var queue = MessageQueue()
    /// Bytes of `queue.first` already written (a message larger than one fragment).
    @exclusivity(unchecked) var headOffset = 0
    /// Bytes queued and not yet handed to lws.
    @exclusivity(unchecked) var queuedBytes = 0
    /// Since when the bytes waiting behind the message in flight exceed the send-queue limit
    /// (0: they do not); see `Transport.isSlowReader`.
    @exclusivity(unchecked) var overSince: Int64 = 0
    /// Set by `close` (or shutdown / overflow / oversized input): sent once the queue is empty.
    @exclusivity(unchecked) var closeRequest: CloseRequest?

    init(id: UInt64, wsi: OpaquePointer, fd: Int32) {
        self.id = id
        self.wsi = wsi
        self.fd = fd
    }

    /// Accepts new outbound messages only while open and not closing.
    var acceptsMessages: Bool { closeRequest == nil && !closeSent }
}
