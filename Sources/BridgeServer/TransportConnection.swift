/// A FIFO of outbound messages: an array with a moving head, compacted when the dead prefix
/// dominates, so append and removeFirst are amortised O(1).
struct MessageQueue {
    private var storage: [[UInt8]] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: [UInt8]? { isEmpty ? nil : storage[head] }

    mutating func append(_ message: [UInt8]) { storage.append(message) }

    mutating func removeFirst() {
        precondition(!isEmpty)
        storage[head] = []
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 64)
            head = 0
        } else if head >= 64 && head * 2 >= storage.count {
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
        return bytes
    }
}

/// State of one WebSocket connection. Service thread only.
final class Connection {
    let id: UInt64
    let wsi: OpaquePointer

    // Receive side: reassembly of fragmented messages.
    var inMessage = false
    var rxBinary = false
    var rxCount = 0
    var rxBuffer: [UInt8] = []

    // Send side.
    var queue = MessageQueue()
    /// Bytes of `queue.first` already written (a message larger than one fragment).
    var headOffset = 0
    /// Bytes queued and not yet handed to lws.
    var queuedBytes = 0
    var writableRequested = false
    /// Set by `close` (or shutdown / overflow): sent once the queue is empty.
    var closeRequest: (code: UInt16, reason: String)?
    /// The connection is being killed (send queue overflow); nothing more is written.
    var killed = false

    init(id: UInt64, wsi: OpaquePointer) {
        self.id = id
        self.wsi = wsi
    }

    /// Accepts new outbound messages only while open and not closing.
    var acceptsMessages: Bool { closeRequest == nil && !killed }
}
