import Testing
@testable import BridgeServer

/// The transport's outbound FIFO (`MessageQueue`): the first message inline, those behind it in
/// an array, and the heap it reports (`memory`, what the slow-reader bound limits).
struct MessageQueueTests {
    static func message(_ byte: UInt8, count: Int, capacity: Int? = nil) -> [UInt8] {
        var m = [UInt8](repeating: byte, count: count)
        if let capacity { m.reserveCapacity(capacity) }
        return m
    }

    /// Messages come out in the order they went in, whatever the mix of appends and removals,
    /// through `first`, `element(at:)` and `count` alike; the bytes `removeAll` reports are
    /// those still queued.
    @Test func isFirstInFirstOut() {
        var q = MessageQueue()
        #expect(q.isEmpty && q.count == 0 && q.first == nil && q.element(at: 0) == nil)
        var model: [[UInt8]] = []
        var next: UInt8 = 0
        // Grows past the array's compaction point (64 dead slots) and drains to empty, twice.
        for round in 0..<2 {
            for step in 0..<400 {
                let removing = round == 0 ? step % 3 == 2 : step % 2 == 1
                if removing, !model.isEmpty {
                    q.removeFirst()
                    model.removeFirst()
                } else {
                    let m = Self.message(next, count: Int(next % 7) + 1)
                    next &+= 1
                    q.append(m)
                    model.append(m)
                }
                #expect(q.count == model.count && q.isEmpty == model.isEmpty)
                #expect(q.first == model.first)
                for k in [0, 1, model.count - 1, model.count] where k >= 0 {
                    #expect(q.element(at: k) == (k < model.count ? model[k] : nil))
                }
            }
            while !model.isEmpty {
                #expect(q.first == model.first)
                q.removeFirst()
                model.removeFirst()
            }
            #expect(q.isEmpty && q.count == 0 && q.elementMemory == 0)
        }
        for i in 0..<5 { q.append(Self.message(UInt8(i), count: 10 + i)) }
        q.removeFirst()
        #expect(q.removeAll() == 11 + 12 + 13 + 14)
        #expect(q.isEmpty && q.memory == 0)
    }

    /// One message waiting holds its own storage and nothing more (no array until a second one
    /// waits); behind it, each message adds its cost and the array's slots are counted too. The
    /// slow-reader bound (`Transport.isSlowReader`) subtracts the first message's cost: what is
    /// left is exactly the waiting messages and the array.
    @Test func memoryCountsTheMessagesAndTheArrayBehindTheFirst() {
        var q = MessageQueue()
        #expect(q.memory == 0)
        let first = Self.message(1, count: 100, capacity: 4096)
        q.append(first)
        #expect(q.memory == MessageQueue.cost(first))
        #expect(MessageQueue.cost(first) >= 4096 + 40)

        let behind = (0..<3).map { Self.message(UInt8($0), count: 100) }
        for m in behind { q.append(m) }
        // The array of the three behind: at least their slots, and no more than a small array's.
        let slots = q.memory - behind.reduce(MessageQueue.cost(first)) { $0 + MessageQueue.cost($1) }
        #expect(slots >= 3 * MemoryLayout<[UInt8]>.stride && slots <= 16 * MemoryLayout<[UInt8]>.stride)

        // The first written: the next one moves inline; the array keeps its (small) storage.
        q.removeFirst()
        #expect(q.first == behind[0])
        #expect(q.memory == behind.reduce(0) { $0 + MessageQueue.cost($1) } + slots)
        q.removeFirst()
        q.removeFirst()
        // The last one inline: the emptied array keeps its (small) storage, still counted.
        #expect(q.count == 1 && q.first == behind[2])
        #expect(q.memory == MessageQueue.cost(behind[2]) + slots)
        q.removeFirst()
        #expect(q.isEmpty && q.elementMemory == 0)
    }
}
