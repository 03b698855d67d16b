/// A FIFO of outbound messages: an array with a moving head, compacted when the dead prefix
/// dominates, so append and removeFirst are amortised O(1). It also counts the memory its
/// messages hold (`memory`), which is what the slow-reader bound limits.
struct MessageQueue {
    private var storage: [[UInt8]] = []
    private var head = 0
    /// Heap bytes held by the queued messages (see `cost`).
    private(set) var elementMemory = 0

    /// What one message costs on the heap: its storage (`capacity`, which the array reads from
    /// the allocator), the array's header (32 bytes) and the allocator's (8).
    @inline(__always) static func cost(_ message: [UInt8]) -> Int { message.capacity + 40 }

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: [UInt8]? { isEmpty ? nil : storage[head] }
    /// The message `offset` places behind the first (0: the first), nil past the end.
    func element(at offset: Int) -> [UInt8]? { head + offset < storage.count ? storage[head + offset] : nil }

    /// Heap bytes held: the messages and the queue's own array.
    var memory: Int { elementMemory + storage.capacity * MemoryLayout<[UInt8]>.stride }

    mutating func append(_ message: [UInt8]) {
        elementMemory += Self.cost(message)
        storage.append(message)
    }

    mutating func removeFirst() {
        precondition(!isEmpty)
        elementMemory -= Self.cost(storage[head])
        if head + 1 == storage.count {
            // The last one: emptied (the elements before it are already []). Element by element
            // keeps the storage cheaply (removeAll(keepingCapacity:) goes through the generic
            // replaceSubrange); the message itself is released by the first removeLast, not
            // replaced by [] first.
            if storage.capacity <= 64 {
                while !storage.isEmpty { storage.removeLast() }
            } else {
                storage = []
            }
            head = 0
            return
        }
        storage[head] = []
        head += 1
        if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }

    /// Drops every message; returns how many bytes they held.
    @discardableResult
    mutating func removeAll() -> Int {
        var bytes = 0
        for i in head..<storage.count { bytes += storage[i].count }
        storage = []
        head = 0
        elementMemory = 0
        return bytes
    }
}

/// State of one WebSocket connection. Service thread only.
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

    // Receive side: reassembly of fragmented messages.
    @exclusivity(unchecked) var inMessage = false
    @exclusivity(unchecked) var rxBinary = false
    @exclusivity(unchecked) var rxCount = 0
    @exclusivity(unchecked) var rxBuffer: [UInt8] = []

    // Send side.
    @exclusivity(unchecked) var queue = MessageQueue()
    /// Bytes of `queue.first` already written (a message larger than one fragment).
    @exclusivity(unchecked) var headOffset = 0
    /// Bytes queued and not yet handed to lws.
    @exclusivity(unchecked) var queuedBytes = 0
    @exclusivity(unchecked) var writableRequested = false
    /// In `Transport.pendingFlush`: written directly when the current callback ends.
    @exclusivity(unchecked) var flushPending = false
    /// Set by `close` (or shutdown / overflow / oversized input): sent once the queue is empty.
    @exclusivity(unchecked) var closeRequest: (code: UInt16, reason: String)?
    /// Input is read and dropped (we are closing).
    @exclusivity(unchecked) var discardInput = false
    /// An unmasked frame arrived (see Transport+Wire.swift): close with 1002.
    @exclusivity(unchecked) var wireFailed = false
    /// lws closed it (CLOSED): no longer in `Transport.connections`.
    @exclusivity(unchecked) var closed = false
    /// Our close frame is out; waiting for the peer's. (Also set when the peer closed first:
    /// lws answers its close, we send nothing more.)
    @exclusivity(unchecked) var closeSent = false
    /// Since when the bytes waiting behind the message in flight exceed the send-queue limit
    /// (0: they do not); see `Transport.isSlowReader`.
    @exclusivity(unchecked) var overSince: Int64 = 0

    init(id: UInt64, wsi: OpaquePointer, fd: Int32) {
        self.id = id
        self.wsi = wsi
        self.fd = fd
    }

    /// Accepts new outbound messages only while open and not closing.
    var acceptsMessages: Bool { closeRequest == nil && !closeSent }
}
