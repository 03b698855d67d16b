// The invariants and bounds `fuzz-bridge` holds the Bridge to after every step (BridgeFuzz.swift's Driver).
// Compiled with it: in the fuzz binary, and through a link in the replay tests.
#if canImport(BridgeProtocol)
@testable import BridgeProtocol
#endif

extension Driver {
    // MARK: Bounds

    mutating func checkBounds() {
        let c = BridgeFuzz.configuration
        if bridge.sessionCount > c.maxSessions { fuzzFailure("\(bridge.sessionCount) sessions, at most \(c.maxSessions)") }
        for sid in bridge.sessionIDs {
            guard let engine = bridge.engine(of: sid) else { fuzzFailure("listed session \(sid) has no engine") }
            if engine.stack.isEmpty || engine.stack.count > c.engine.maxStackDepth {
                fuzzFailure("\(sid): \(engine.stack.count) items, at most \(c.engine.maxStackDepth)")
            }
        }
        for sid in bridge.sessionIDs {
            guard let session = bridge.sessions[sid] else { fuzzFailure("listed session \(sid) is not in the table") }
            let held = session.heldBytes
            if held > c.maxSessionBytes { fuzzFailure("\(sid) holds \(held) bytes, at most \(c.maxSessionBytes), after \(lastStep)") }
            for item in session.engine.stack {
                let title: String? = switch item {
                case .webview(let w): w.title
                case .placeholder(let p): p.title
                case .native: nil
                }
                if item.url.utf8.count > c.maxURLBytes || (title?.utf8.count ?? 0) > c.maxURLBytes {
                    fuzzFailure("\(sid) holds a url or title over \(c.maxURLBytes) bytes: \(item.url.utf8.count), \(title?.utf8.count ?? 0)")
                }
            }
            if session.stackCache.count > BridgeFuzz.jsonBound {
                fuzzFailure("\(sid): cached stack JSON of \(session.stackCache.count) bytes, bound \(BridgeFuzz.jsonBound)")
            }
        }
        // The session list (what /api/sessions sends) is bounded by the same worst case.
        let list = bridge.sessionListJSON(at: now)
        let bound = max(bridge.sessionCount, 1) * (BridgeFuzz.jsonBound + 256) + 256
        if list.count > bound { fuzzFailure("session list of \(list.count) bytes for \(bridge.sessionCount) sessions, bound \(bound)") }
    }

    // MARK: Structure

    /// The engines' and the Bridge's invariants (see the type's comment).
    func checkStructure(_ what: String) {
        let b = bridge
        if Set(b.sessionIDs) != Set(foregroundUp.keys) {
            fuzzFailure("the observer's sessions \(foregroundUp.keys.sorted()) differ from the daemon's \(b.sessionIDs.sorted()): \(what)")
        }
        var liveTimers: Set<TimerKey> = []
        for s in b.sessions.all {
            let sid = s.id
            let stack = s.engine.stack
            let ids = stack.map(\.id)
            if Set(ids).count != ids.count { fuzzFailure("\(sid): duplicate ids \(ids): \(what)") }
            if stack.last?.isPlaceholder == true { fuzzFailure("\(sid): a placeholder on top \(ids): \(what)") }
            for (i, item) in stack.enumerated() {
                guard case .placeholder(let p) = item, i + 1 < stack.count else { continue }
                let above = stack[i + 1]
                let ok = above.id == p.of || { if case .placeholder(let q) = above { return q.of == p.of } else { return false } }()
                if !ok { fuzzFailure("\(sid): \(p.id) of \(p.of) is under \(above.id): \(what)") }
            }
            if let fg = s.engine.foreground {
                if fg.webview != stack.last?.id { fuzzFailure("\(sid): foreground over \(fg.webview), top \(String(describing: stack.last?.id)): \(what)") }
                liveTimers.insert(TimerKey(session: s.serial, token: fg.timer))
                if foregroundUp[sid] != true { fuzzFailure("\(sid): a foreground the observer never heard of: \(what)") }
            } else if foregroundUp[sid] == true {
                fuzzFailure("\(sid): the observer thinks a foreground is up: \(what)")
            }
            for w in s.engine.webViews {
                let page = s.pages[w.id]
                if w.connected != (page != nil) { fuzzFailure("\(sid): \(w.id) connected \(w.connected), page \(String(describing: page)): \(what)") }
                if let page {
                    guard case .page(let psid, let pw)? = b.clients[page]?.role, psid == sid, pw == w.id else {
                        fuzzFailure("\(sid): \(w.id)'s page \(page) does not speak for it: \(what)")
                    }
                }
            }
            // (With a routing configuration a page may wait on a web view of an inactive stack;
            // with a profile, on a web view the profile holds off the stacks: a hotwire-native
            // tab whose screens are all native keeps its web view and page.)
            for (w, _) in s.pages where s.engine.webView(w) == nil && s.tree?.locate(w) == nil && s.profile?.hasWebView(w) != true {
                fuzzFailure("\(sid): a page for \(w), on no stack: \(what)")
            }
        }
        for s in b.sessions.all {
            if let problem = Self.stackCacheProblem(b, s) { fuzzFailure("\(s.id): \(problem): \(what)") }
        }
        if Set(timers.keys) != liveTimers {
            fuzzFailure("timers \(timers.keys.sorted { $0.description < $1.description }) for foregrounds \(liveTimers): \(what)")
        }
    }

    /// What is wrong with session `s`'s stack as JSON (see the type's comment), or nil. The
    /// cached bytes are the only place a stack is not written from the engine's items, so a
    /// stale cache shows here after the step that made it stale, whether or not it was sent.
    static func stackCacheProblem(_ b: Bridge<SeededRandom>, _ s: Session) -> String? {
        let stack = s.engine.stack
        var fresh = JSONWriter()
        Bridge<SeededRandom>.writeStack(stack, into: &fresh)
        let expected = fresh.bytes
        func text(_ bytes: some Collection<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
        if s.stackCacheVersion == s.engine.version, s.stackCache != expected {
            return "cached stack \(text(s.stackCache)) for version \(s.engine.version), the engine's items write \(text(expected))"
        }
        var start = 1  // after `[`
        for (i, kept) in s.stackCacheItems.enumerated() {
            defer { start = kept.end }
            guard kept.end >= start, kept.end <= s.stackCache.count else {
                return "cached item \(i) (\(kept.id)) ends at \(kept.end), outside \(start)...\(s.stackCache.count)"
            }
            guard kept.id.kind == .placeholder, i < stack.count, stack[i].id == kept.id else { continue }
            var w = JSONWriter()
            Bridge<SeededRandom>.writeStackItem(stack, i, into: &w)
            if !s.stackCache[start..<kept.end].elementsEqual(w.bytes) {
                return "cached bytes of \(kept.id) at \(i) \(text(s.stackCache[start..<kept.end])), the engine's item writes \(text(w.bytes))"
            }
        }
        var copy = b
        let sent = copy.withSession(s.id) { b, s in b.stackJSON(&s) }
        if sent != expected {
            return "stackJSON gives \(text(sent ?? [])), the engine's items write \(text(expected))"
        }
        return nil
    }

    /// What a frame not answered yet is owed (`owed`): the reply to a request (or to a frame
    /// that is neither a request nor an event: an error with its id or null), or, to an event,
    /// nothing or one error with id null. A waiting connection's events are handled in turn,
    /// when the browser is done, so the error of one (`{"event": 1.5}`) then comes after the
    /// reply to the request before it, to a connection that is not the sender of that step.
    enum Owed: Equatable, CustomStringConvertible {
        case reply(JSONValue)
        case errorMaybe

        var description: String {
            switch self {
            case .reply(let id): id.jsonString
            case .errorMaybe: "(event)"
            }
        }
    }
}
