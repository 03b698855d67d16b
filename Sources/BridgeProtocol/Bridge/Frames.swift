/// Frames: replies, errors and events as bytes, and stacks and sessions as JSON.
extension Bridge {
    // MARK: Frames

    // Replies, errors and page events are written into the reused `frameWriter` from fixed
    // fragments (the same bytes key-by-key writing gives) and leave as arrays (`frameArray`).

    mutating func sendResult(_ client: ClientID, id: Int64, _ body: (inout JSONWriter) -> Void) {
        var w = takeFrameWriter()
        w.appendRaw(#"{"id":"#)
        w.appendDigits(Int(id))
        w.appendRaw(#","result":{"#)
        w.afterRawOpen()
        body(&w)
        w.appendRaw("}}")
        send(client, &w)
    }

    mutating func sendError(_ client: ClientID, id: Int64?, _ error: ProtocolError) {
        stats.error(error.code)
        var w = takeFrameWriter()
        w.appendRaw(#"{"id":"#)
        if let id { w.appendDigits(Int(id)) } else { w.appendRaw("null") }
        w.appendRaw(#","error":{"code":"#)
        w.appendStringValue(error.code.rawValue)
        w.appendRaw(#","message":"#)
        w.appendStringValue(error.message)
        w.appendRaw("}}")
        send(client, &w)
    }

    mutating func sendEvent(_ client: ClientID, _ name: String, _ body: (inout JSONWriter) -> Void) {
        var w = takeFrameWriter()
        w.appendRaw(#"{"event":"#)
        w.appendStringValue(name)
        w.appendRaw(#","params":{"#)
        w.afterRawOpen()
        body(&w)
        w.appendRaw("}}")
        send(client, &w)
    }

    /// The scratch writer, empty; give it back with `send`.
    mutating func takeFrameWriter() -> JSONWriter {
        var w = JSONWriter.unallocated
        swap(&w, &frameWriter)
        w.reset()
        return w
    }

    /// Queues the frame in `w` for `client` and keeps `w`'s storage for the next frame.
    mutating func send(_ client: ClientID, _ w: inout JSONWriter) {
        let frame = w.withBytes { frameArray($0) }
        effects.append(.send(client, frame))
        swap(&w, &frameWriter)
    }

    /// Frames of at most this many bytes go into `spareFrame`'s storage (`frameArray`); longer
    /// ones get an exact-size array of their own, so the spare never holds more than about twice
    /// this much.
    static var spareFrameCapacity: Int { 1024 }

    /// `bytes` as an array. A frame of up to `spareFrameCapacity` bytes is written over the last
    /// one, in `spareFrame`'s storage: once the host has performed its effects and written that
    /// frame (`Daemon.perform` empties its list of effects at once), nothing else holds the
    /// storage, and the frame costs neither an allocation nor, later, a free (docs/PERFORMANCE.md,
    /// "Issue 24 … at 1,000 pages"). When something still holds it (a frame waiting for its
    /// socket, a held connection's queue, a second frame of the same input, a test's copy of the
    /// effects), `replaceSubrange` copies on write: the holder keeps its frame unchanged and the
    /// spare moves to new storage of this frame's size, as `Array(bytes)` would have allocated.
    mutating func frameArray(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        guard bytes.count <= Self.spareFrameCapacity else {
            // (`Array(UnsafeBufferPointer)` allocates through code specialized here; the
            // `unsafeUninitializedCapacity` initializer goes through the standard library's
            // generic allocation, about 400 instructions more per frame.)
            return Array(bytes)
        }
        spareFrame.replaceSubrange(spareFrame.indices, with: bytes)
        return spareFrame
    }

    // MARK: Stacks and sessions as JSON

    /// The session's stack as JSON, cached until the engine changes.
    ///
    /// A changed stack is written again from its first item that is not a placeholder the cache
    /// holds in the same place: a placeholder never changes and its id is never drawn again in
    /// the session, so the bytes of the placeholders at the bottom of the stack are copied from
    /// the cache instead of written from their items (each copied out of the stack with its
    /// strings retained, and its url escaped again). A `pwa-navigate` or a back's swap changes the
    /// top of a stack that is otherwise placeholders.
    mutating func stackJSON(_ s: inout Session) -> [UInt8] {
        let version = s.engine.version
        if s.stackCacheVersion == version { return s.stackCache }
        // Written in the scratch frame writer (idle between frames), then copied into the cache.
        var w = takeFrameWriter()
        let stack = s.engine.stack
        var kept = 0
        let cached = min(s.stackCacheItems.count, stack.count)
        while kept < cached, s.stackCacheItems[kept].id.kind == .placeholder, stack[kept].id == s.stackCacheItems[kept].id {
            kept += 1
        }
        if kept > 0 {
            let end = s.stackCacheItems[kept - 1].end
            s.stackCache.withUnsafeBufferPointer { w.append(UnsafeBufferPointer(rebasing: $0[..<end])) }
        } else {
            w.beginArray()
        }
        while s.stackCacheItems.count > kept { s.stackCacheItems.removeLast() }
        for i in kept..<stack.count {
            let id = Self.writeStackItem(stack, i, into: &w)
            s.stackCacheItems.append(StackCacheItem(id: id, end: w.byteCount))
        }
        w.endArray()
        w.withBytes { Self.overwrite(&s.stackCache, with: $0) }
        swap(&w, &frameWriter)
        s.stackCacheVersion = version
        return s.stackCache
    }

    /// `cache = Array(bytes)`, but written over the old contents when they fit and nothing else
    /// holds them (the reply that carried the last stack has been written by the time the stack
    /// changes again): no allocation and no free per stack change. Copy on write keeps a held
    /// array as it was. A cache of up to `stackCacheFloor` bytes is kept whatever the stack's
    /// size, a larger one while it holds at least half its capacity; a new one has room for half
    /// as much again. (Exact-size copies, as before, were allocated again at every push and at
    /// most backs of a navigation: fresh memory, cold, on half the navigation replies.)
    static func overwrite(_ cache: inout [UInt8], with bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.count <= cache.capacity && cache.capacity <= max(2 * bytes.count, stackCacheFloor) {
            cache.replaceSubrange(cache.indices, with: bytes)
        } else {
            var fresh: [UInt8] = []
            fresh.reserveCapacity(bytes.count + bytes.count / 2)
            fresh.append(contentsOf: bytes)
            cache = fresh
        }
    }

    /// The capacity a session's stack cache may keep above twice what it holds (a stack of
    /// about ten items).
    static var stackCacheFloor: Int { 1024 }

    public static func writeStack(_ stack: [StackItem], into w: inout JSONWriter) {
        w.beginArray()
        for i in stack.indices { writeStackItem(stack, i, into: &w) }
        w.endArray()
    }

    /// Item `i` of `stack` (preceded by a comma after the first), written from fixed fragments
    /// (same bytes as key-by-key writing; see FastJSON.swift); returns its id.
    @discardableResult
    static func writeStackItem(_ stack: [StackItem], _ i: Int, into w: inout JSONWriter) -> ItemID {
        if i > 0 { w.append(0x2C) }
        // (By index: `for item in stack` copied each item once more, its strings retained and released.)
        switch stack[i] {
        case .webview(let v):
            w.appendRaw(#"{"id":"#)
            w.appendQuotedID(v.id)
            switch v.mode {
            case .pwa: w.appendRaw(#","kind":"webview","mode":"pwa","url":"#)
            case .classic: w.appendRaw(#","kind":"webview","mode":"classic","url":"#)
            }
            w.appendStringValue(v.url)
            w.appendRaw(#","title":"#)
            if let t = v.title { w.appendStringValue(t) } else { w.appendRaw("null") }
            w.appendRaw(v.connected ? #","connected":true}"# : #","connected":false}"#)
            return v.id
        case .placeholder(let p):
            w.appendRaw(#"{"id":"#)
            w.appendQuotedID(p.id)
            w.appendRaw(#","kind":"placeholder","of":"#)
            w.appendQuotedID(p.of)
            w.appendRaw(#","url":"#)
            w.appendStringValue(p.url)
            if let t = p.title {
                w.appendRaw(#","title":"#)
                w.appendStringValue(t)
            }
            w.appendRaw("}")
            return p.id
        case .native(let n):
            w.appendRaw(#"{"id":"#)
            w.appendQuotedID(n.id)
            w.appendRaw(#","kind":"native","url":"#)
            w.appendStringValue(n.url)
            if let screen = n.screen {
                w.appendRaw(#","screen":"#)
                w.appendStringValue(screen)
            }
            w.appendRaw("}")
            return n.id
        }
    }

    static func writeForeground(_ s: Session, into w: inout JSONWriter, now: Int64) {
        guard let fg = s.engine.foreground else {
            w.null()
            return
        }
        w.beginObject()
        w.key("webview"); w.string(fg.webview.description)
        w.key("kind"); w.string(fg.kind.rawValue)
        w.key("sinceMs"); w.int(Int64(SessionEngine.milliseconds(now - fg.shownAt)))
        w.key("timeoutMs"); w.int(Int64(fg.timeoutMs))
        w.endObject()
    }

    func writeSessionArray(into w: inout JSONWriter, now: Int64) {
        w.beginArray()
        for s in sessions.all.sorted(by: { $0.serial < $1.serial }) {
            w.beginObject()
            w.key("session"); w.string(s.id)
            w.key("stack"); Self.writeStack(s.engine.stack, into: &w)
            w.key("foreground"); Self.writeForeground(s, into: &w, now: now)
            w.endObject()
        }
        w.endArray()
    }

    func writeSessionList(into w: inout JSONWriter, now: Int64) {
        w.beginObject()
        w.key("sessions")
        writeSessionArray(into: &w, now: now)
        w.endObject()
    }

    static func writeIDs(_ ids: [ItemID], into w: inout JSONWriter) {
        w.beginArray()
        for id in ids { w.string(id.description) }
        w.endArray()
    }
}
