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

    /// The mutable state, behind a pointer: stored properties of a class are reached through a
    /// dynamic exclusivity check on every use, several per message here. Service thread only.
    struct State {
        var inMessage = false
        var rxBinary = false
        var rxCount = 0
        var rxBuffer: [UInt8] = []
        var queue = MessageQueue()
        var headOffset = 0
        var queuedBytes = 0
        var writableRequested = false
        var closeRequest: (code: UInt16, reason: String)?
        var discardInput = false
        var closeSent = false
    }
    private let state: UnsafeMutablePointer<State>

    // Receive side: reassembly of fragmented messages.
    var inMessage: Bool { get { state.pointee.inMessage } _modify { yield &state.pointee.inMessage } }
    var rxBinary: Bool { get { state.pointee.rxBinary } _modify { yield &state.pointee.rxBinary } }
    var rxCount: Int { get { state.pointee.rxCount } _modify { yield &state.pointee.rxCount } }
    var rxBuffer: [UInt8] { get { state.pointee.rxBuffer } _modify { yield &state.pointee.rxBuffer } }

    // Send side.
    var queue: MessageQueue { get { state.pointee.queue } _modify { yield &state.pointee.queue } }
    /// Bytes of `queue.first` already written (a message larger than one fragment).
    var headOffset: Int { get { state.pointee.headOffset } _modify { yield &state.pointee.headOffset } }
    /// Bytes queued and not yet handed to lws.
    var queuedBytes: Int { get { state.pointee.queuedBytes } _modify { yield &state.pointee.queuedBytes } }
    var writableRequested: Bool {
        get { state.pointee.writableRequested }
        _modify { yield &state.pointee.writableRequested }
    }
    /// Set by `close` (or shutdown / overflow / oversized input): sent once the queue is empty.
    var closeRequest: (code: UInt16, reason: String)? {
        get { state.pointee.closeRequest }
        _modify { yield &state.pointee.closeRequest }
    }
    /// Input is read and dropped (we are closing).
    var discardInput: Bool { get { state.pointee.discardInput } _modify { yield &state.pointee.discardInput } }
    /// Our close frame is out; waiting for the peer's.
    var closeSent: Bool { get { state.pointee.closeSent } _modify { yield &state.pointee.closeSent } }

    init(id: UInt64, wsi: OpaquePointer) {
        self.id = id
        self.wsi = wsi
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Accepts new outbound messages only while open and not closing.
    var acceptsMessages: Bool { closeRequest == nil && !closeSent }
}
