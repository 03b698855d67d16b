// The native side's decisions of a hotwire-native session, as a value: two stacks of screens
// (main and modal), a proposal or a back in, the new stacks and the commands for the two web
// views out (visits, snapshot cache, cold boots, external opens). Pure: no I/O, no clock.
// iOS follows hotwire-native-ios's Navigator and NavigationHierarchyController; Android
// hotwire-native-android's NavigatorRule and Navigator (docs/HOTWIRE.md, "Decisions").

public struct HotwireNavigator: Sendable, Equatable {
    public let platform: HotwirePlatform
    public var configuration: HotwirePathConfiguration
    public private(set) var main: [HotwireScreen]
    public private(set) var modal: [HotwireScreen]
    /// The screen each context's web view shows now (its last visit).
    public private(set) var shown: [HotwireContext: Int]
    /// The contexts whose web view has a document.
    public private(set) var booted: Set<HotwireContext>
    /// A modal form finished: the main web view's snapshot cache is cleared when it shows again.
    public private(set) var mainSnapshotStale = false
    private var nextID = 1
    /// The start location's host: hotwire-native routes a location of the same host (any port
    /// or http(s) scheme) in the app, and opens any other outside it.
    private let startHost: String?

    /// A navigator whose main stack is the start screen, already cold-booted by the session.
    public init(platform: HotwirePlatform, configuration: HotwirePathConfiguration, startURL: String) {
        self.platform = platform
        self.configuration = configuration
        startHost = Self.host(of: startURL)
        let root = HotwireScreen(id: 1, url: startURL, context: .default)
        nextID = 2
        main = [root]
        modal = []
        shown = [.default: 1]
        booted = [.default]
    }

    public var activeContext: HotwireContext { modal.isEmpty ? .default : .modal }
    public var activeStack: [HotwireScreen] { modal.isEmpty ? main : modal }
    public var top: HotwireScreen { modal.last ?? main[main.count - 1] }

    public func stack(_ context: HotwireContext) -> [HotwireScreen] { context == .default ? main : modal }

    public func screen(_ id: Int) -> HotwireScreen? {
        main.first { $0.id == id } ?? modal.first { $0.id == id }
    }

    // MARK: - What the web views report

    /// `pageLoaded` / `visitCompleted`: the restoration identifier of the screen `context`'s web
    /// view shows; `url` (the page's location, when known) becomes that screen's URL (a
    /// redirected visit ends on another URL).
    public mutating func recordVisit(context: HotwireContext, restorationIdentifier: String?, url: String? = nil) {
        guard let id = shown[context] else { return }
        update(id) { screen in
            if let restorationIdentifier, !restorationIdentifier.isEmpty {
                screen.restorationIdentifier = restorationIdentifier
            }
            if let url, !url.isEmpty { screen.url = url }
            screen.failedStatus = nil
        }
    }

    /// `visitRequestFailed`: the shown screen of `context` is in an error state.
    public mutating func recordFailure(context: HotwireContext, statusCode: Int) {
        guard let id = shown[context] else { return }
        update(id) { $0.failedStatus = statusCode }
    }

    /// `formSubmissionFinished` in `context`: after a modal form, the main web view's snapshot
    /// cache is stale (iOS and Android clear it when the main stack shows again).
    public mutating func formSubmissionFinished(context: HotwireContext) {
        if context == .modal { mainSnapshotStale = true }
    }

    /// `pageInvalidated`: the context's web view reloads its screen with a cold boot.
    public mutating func pageInvalidated(context: HotwireContext) -> HotwireDecision {
        guard let id = shown[context], let screen = screen(id) else {
            return HotwireDecision(presentation: .none, outcome: ["none"], commands: [], changed: false)
        }
        let visit = HotwireVisit(context: context, screen: id, url: screen.url, action: .advance, coldBoot: true)
        return HotwireDecision(presentation: .refresh, outcome: ["reload"], commands: [.visit(visit)], changed: false)
    }

    // MARK: - Back

    /// Native back: pop the active stack's top (a modal of one screen is dismissed); the
    /// uncovered web screen gets a `restore` visit with its stored identifier. `nil` at the root
    /// of the main stack with no modal (nothing to pop; a native app would leave).
    public mutating func back() -> HotwireDecision? {
        guard !modal.isEmpty || main.count > 1 else { return nil }
        var work = Work(self)
        work.popActive()
        var decision = finish(&work, presentation: .pop)
        decision.outcome.insert("back", at: 0)
        return decision
    }

    /// The lower-cased host of an http(s) URL; nil for other schemes or no host.
    static func host(of url: String) -> String? {
        guard let u = try? RouteURL.parse(url), u.scheme == "http" || u.scheme == "https", let authority = u.authority,
              let (host, _) = try? RouteURL.hostAndPort(authority), !host.isEmpty else { return nil }
        return host.lowercased()
    }

    // MARK: - Proposals

    /// A `visitProposed` (or a navigation native intercepted, proposed with `advance`):
    /// `options` as the page sent them (`action`, `response`). `from` is the context whose web
    /// view proposed it.
    public mutating func propose(location: String, options: JSONObject = JSONObject(),
                                 from: HotwireContext = .default) -> HotwireDecision {
        if let startHost, Self.host(of: location) != startHost {
            return HotwireDecision(presentation: .default, outcome: ["external"],
                                   commands: [.openExternal(location)], changed: false)
        }
        let properties = configuration.properties(for: location, platform: platform)
        var action = HotwireVisitAction(rawValue: options["action"]?.stringValue ?? "advance") ?? .advance
        if action == .restore { action = .advance }  // Turbo never proposes restore
        let response = options["response"]
        let proposal = Proposal(location: location, action: action, response: response,
                                redirected: response?["redirected"]?.boolValue == true, properties: properties)
        var work = Work(self)
        switch platform {
        case .ios: routeIOS(proposal, &work)
        case .android: routeAndroid(proposal, &work)
        }
        if let error = work.error {
            return HotwireDecision(presentation: properties.presentation, outcome: ["rejected"], commands: [],
                                   changed: false, error: error)
        }
        return finish(&work, presentation: properties.presentation)
    }

    // MARK: - Internals

    struct Proposal {
        var location: String
        var action: HotwireVisitAction
        var response: JSONValue?
        var redirected: Bool
        var properties: HotwirePathProperties
    }

    /// The stacks being changed, the visits asked for and what happened.
    struct Work {
        var main: [HotwireScreen]
        var modal: [HotwireScreen]
        var nextID: Int
        var visits: [HotwireVisit] = []
        var outcome: [String] = []
        var error: String?

        init(_ navigator: HotwireNavigator) {
            main = navigator.main
            modal = navigator.modal
            nextID = navigator.nextID
        }

        var modalShowing: Bool { !modal.isEmpty }

        mutating func newScreen(_ p: Proposal, context: HotwireContext) -> HotwireScreen {
            defer { nextID += 1 }
            return HotwireScreen(id: nextID, url: p.location, context: context, nativeScreen: p.properties.nativeScreen)
        }

        mutating func visit(_ screen: HotwireScreen, _ action: HotwireVisitAction, response: JSONValue? = nil) {
            guard screen.isWeb else { return }
            visits.append(HotwireVisit(context: screen.context, screen: screen.id, url: screen.url, action: action,
                                       restorationIdentifier: action == .restore ? screen.restorationIdentifier : nil,
                                       response: response))
        }

        mutating func dismiss() {
            guard modalShowing else { return }
            modal.removeAll()
            outcome.append("dismiss")
        }

        /// iOS `pop`: the modal's top (dismissing a modal of one), else the main stack's top
        /// (never its root).
        mutating func popActive() {
            if modalShowing {
                if modal.count == 1 { dismiss() } else { modal.removeLast(); outcome.append("pop") }
            } else if main.count > 1 {
                main.removeLast()
                outcome.append("pop")
            }
        }

        mutating func set(_ context: HotwireContext, _ stack: [HotwireScreen]) {
            if context == .default { main = stack } else { modal = stack }
        }

        func stack(_ context: HotwireContext) -> [HotwireScreen] { context == .default ? main : modal }

        /// The newly exposed top of `context` gets a `replace` visit (a refresh).
        mutating func refreshTop(_ context: HotwireContext) {
            guard let top = stack(context).last else { return }
            visits.removeAll { $0.screen == top.id }
            visit(top, .replace)
            outcome.append("refresh")
        }
    }

    static func sameLocation(_ a: String, _ b: String, pathOnly: Bool) -> Bool {
        func split(_ url: String) -> (String, String?) {
            if let parsed = try? RouteURL.parse(url), parsed.authority != nil || parsed.path.hasPrefix("/") {
                return (parsed.path.isEmpty ? "/" : parsed.path, parsed.query)
            }
            var rest = Substring(url)
            if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
            var query: String?
            if let q = rest.firstIndex(of: "?") {
                query = String(rest[rest.index(after: q)...])
                rest = rest[..<q]
            }
            return (rest.isEmpty ? "/" : String(rest), query)
        }
        let (pa, qa) = split(a)
        let (pb, qb) = split(b)
        return pathOnly ? pa == pb : (pa == pb && (qa ?? "") == (qb ?? ""))
    }

    // MARK: iOS

    private func routeIOS(_ p: Proposal, _ w: inout Work) {
        // Navigator.session(_:didProposeVisit:): a redirect first pops the top screen.
        if p.redirected {
            let before = w.outcome.count
            w.popActive()
            if w.outcome.count > before { w.outcome.insert("redirect", at: before) }
        }
        // dismissModalIfNeeded: a historical location always leaves the modal.
        if p.properties.historicalLocation { w.dismiss() }
        switch p.properties.presentation {
        case .default, .push:
            iosNavigate(p, &w)
        case .pop:
            w.popActive()
        case .replace:
            let new = w.newScreen(p, context: p.properties.context)
            w.visit(new, p.action, response: p.response)
            if p.properties.context == .default {
                w.dismiss()
                w.main[w.main.count - 1] = new
                w.outcome.append("replace")
            } else if w.modalShowing {
                w.modal[w.modal.count - 1] = new
                w.outcome.append("replace")
            } else {
                w.modal = [new]
                w.outcome.append("present")
            }
        case .refresh:
            if p.properties.historicalLocation {
                w.refreshTop(.default)
            } else if w.modalShowing {
                if w.modal.count == 1 {
                    w.dismiss()
                    w.refreshTop(.default)
                } else {
                    w.modal.removeLast()
                    w.outcome.append("pop")
                    w.refreshTop(.modal)
                }
            } else {
                if w.main.count > 1 { w.main.removeLast(); w.outcome.append("pop") }
                w.refreshTop(.default)
            }
        case .clearAll:
            w.dismiss()
            w.main = [w.main[0]]
            w.outcome.append("clear_all")
            w.refreshTop(.default)
        case .replaceRoot:
            var new = w.newScreen(p, context: .default)
            new.context = .default
            w.visit(new, .replace)
            w.dismiss()
            w.main = [new]
            w.outcome.append("replace_root")
        case .none:
            w.outcome.append("none")
        }
    }

    private func iosNavigate(_ p: Proposal, _ w: inout Work) {
        let context = p.properties.context
        let new = w.newScreen(p, context: context)
        switch context {
        case .default:
            let didReplaceModal = w.modalShowing
            w.dismiss()
            pushOrReplace(.default, new, p, didReplaceModal: didReplaceModal, &w)
        case .modal:
            if w.modalShowing {
                pushOrReplace(.modal, new, p, didReplaceModal: false, &w)
            } else {
                w.visit(new, p.action, response: p.response)
                w.modal = [new]
                w.outcome.append("present")
            }
        }
    }

    private func pushOrReplace(_ context: HotwireContext, _ new: HotwireScreen, _ p: Proposal,
                               didReplaceModal: Bool, _ w: inout Work) {
        var stack = w.stack(context)
        let pathOnly = p.properties.queryStringReplace
        func same(_ screen: HotwireScreen) -> Bool {
            if screen.isWeb { return Self.sameLocation(screen.url, p.location, pathOnly: pathOnly) }
            return screen.nativeScreen == new.nativeScreen
        }
        let top = stack[stack.count - 1]
        // The top: a web screen compares locations; a native one compares its kind.
        let sameAsTop = top.isWeb ? (new.isWeb && same(top)) : same(top)
        if sameAsTop {
            w.visit(new, p.action, response: p.response)
            stack[stack.count - 1] = new
            w.outcome.append("replace")
        } else if stack.count >= 2, same(stack[stack.count - 2]) {
            stack.removeLast()
            w.outcome.append("pop")
        } else if p.action == .advance || didReplaceModal {
            w.visit(new, p.action, response: p.response)
            stack.append(new)
            w.outcome.append("push")
        } else {
            w.visit(new, p.action, response: p.response)
            stack[stack.count - 1] = new
            w.outcome.append("replace")
        }
        w.set(context, stack)
    }

    // MARK: Android

    private func routeAndroid(_ p: Proposal, _ w: inout Work, depth: Int = 0) {
        // One back stack: the main screens, then the modal ones.
        let backStack = w.main + w.modal
        let current = backStack[backStack.count - 1]
        let previous = backStack.count >= 2 ? backStack[backStack.count - 2] : nil
        let atStart = backStack.count == 1
        let currentContext = current.context
        let newContext = p.properties.context
        let pathOnly = p.properties.queryStringReplace
        let isCurrent = Self.sameLocation(p.location, current.url, pathOnly: pathOnly)
        let isPrevious = previous.map { Self.sameLocation(p.location, $0.url, pathOnly: pathOnly) } ?? false

        var presentation: HotwirePresentation
        if p.properties.presentation != .default {
            presentation = p.properties.presentation
            if atStart && (presentation == .pop || presentation == .clearAll) { presentation = .none }
        } else if isCurrent && atStart {
            presentation = .replaceRoot
        } else if isPrevious || (currentContext == .modal && newContext == .default) {
            presentation = .pop
        } else if isCurrent || p.action == .replace {
            presentation = .replace
        } else {
            presentation = .push
        }
        if newContext == .modal && presentation == .replaceRoot {
            w.error = "a modal destination cannot use presentation replace_root"
            return
        }

        if currentContext == .modal && newContext == .default && presentation != .replaceRoot {
            // DISMISS_MODAL: leave the modal, then route again from the screen below with
            // `replace` when it is the previous location, else `advance`.
            w.dismiss()
            guard depth == 0 else { return }
            var again = p
            again.action = isPrevious ? .replace : .advance
            routeAndroid(again, &w, depth: 1)
            return
        }
        if currentContext == .default && newContext == .modal && presentation != .replaceRoot {
            // TO_MODAL
            if presentation == .replace && w.main.count > 1 {
                w.main.removeLast()
                w.outcome.append("pop")
            }
            let new = w.newScreen(p, context: .modal)
            w.visit(new, p.action, response: p.response)
            w.modal.append(new)
            w.outcome.append("present")
            return
        }
        switch presentation {
        case .refresh:
            w.refreshTop(w.modalShowing ? .modal : .default)
        case .none, .default:
            w.outcome.append("none")
        case .pop:
            popBackStack(&w)
        case .replace:
            popBackStack(&w, keepRoot: false)
            let new = w.newScreen(p, context: newContext)
            w.visit(new, p.action, response: p.response)
            if newContext == .modal { w.modal.append(new) } else { w.main.append(new) }
            w.outcome.removeLast()
            w.outcome.append("replace")
        case .push:
            let new = w.newScreen(p, context: newContext)
            w.visit(new, p.action, response: p.response)
            if newContext == .modal { w.modal.append(new) } else { w.main.append(new) }
            w.outcome.append("push")
        case .replaceRoot:
            let new = w.newScreen(p, context: .default)
            w.visit(new, .replace)
            w.dismiss()
            w.main = [new]
            w.outcome.append("replace_root")
        case .clearAll:
            w.dismiss()
            w.main = [w.main[0]]
            w.outcome.append("clear_all")
        }
    }

    /// Android `popBackStack`: the last entry of the single back stack (a modal one first).
    /// `keepRoot: false` lets a replace take the start destination's place.
    private func popBackStack(_ w: inout Work, keepRoot: Bool = true) {
        if !w.modal.isEmpty {
            w.modal.removeLast()
        } else if w.main.count > 1 || !keepRoot {
            w.main.removeLast()
        }
        w.outcome.append("pop")
    }

    /// Commits `work`: the context on screen, when its top is a web screen its web view does not
    /// show, gets a `restore` visit (the screen uncovered by a pop); cold boots where a web view has
    /// no document yet; the snapshot cache commands.
    private mutating func finish(_ w: inout Work, presentation: HotwirePresentation) -> HotwireDecision {
        var commands: [HotwireCommand] = []
        var visits = w.visits
        // Visits for screens that did not stay on a stack are dropped.
        visits.removeAll { v in !(w.main.contains { $0.id == v.screen } || w.modal.contains { $0.id == v.screen }) }
        // Only the context on screen: a main stack changed under a modal restores when it shows.
        let active: HotwireContext = w.modal.isEmpty ? .default : .modal
        if let top = w.stack(active).last, top.isWeb {
            let context = active
            if shown[context] != top.id && !visits.contains(where: { $0.screen == top.id }) {
                var action = HotwireVisitAction.restore
                if platform == .android && (top.restorationIdentifier ?? "").isEmpty { action = .advance }
                visits.append(HotwireVisit(context: context, screen: top.id, url: top.url, action: action,
                                           restorationIdentifier: action == .restore ? top.restorationIdentifier : nil))
            } else if shown[context] == top.id, stack(context).last?.isWeb == false,
                      !visits.contains(where: { $0.context == context }) {
                // Back from a native screen to the web screen the web view never left. iOS
                // visits it with `restore` (Session.visitableViewWillAppear: "navigating backward
                // from a native to a web view screen"); Android re-attaches the web view and
                // restores its current visit when it has its restoration identifier
                // (Session.restoreCurrentVisit), else visits it.
                let rid = top.restorationIdentifier ?? ""
                if platform == .android && !rid.isEmpty {
                    commands.append(.restoreCurrentVisit(context))
                } else {
                    visits.append(HotwireVisit(context: context, screen: top.id, url: top.url, action: .restore,
                                               restorationIdentifier: rid.isEmpty ? nil : rid))
                }
            }
        }
        // The web screen a context's web view shows, covered while it stays on its stack: by a
        // new top in its own context (a web or native push), or, for the main stack, by a modal
        // presented over it. Native caches its snapshot first (the screen disappears:
        // visitableViewDidDisappear → cacheSnapshot), before any visit of that web view.
        for context in HotwireContext.allCases {
            guard let oldTop = stack(context).last, oldTop.isWeb, shown[context] == oldTop.id,
                  w.stack(context).contains(where: { $0.id == oldTop.id }) else { continue }
            let coveredInContext = w.stack(context).last?.id != oldTop.id
            let coveredByModal = context == .default && modal.isEmpty && !w.modal.isEmpty
            if coveredInContext || coveredByModal { commands.append(.cacheSnapshot(context)) }
        }
        // The main stack shows again after a modal form: its snapshot cache is stale.
        if mainSnapshotStale && !modal.isEmpty && w.modal.isEmpty {
            commands.append(.clearSnapshotCache(.default))
            mainSnapshotStale = false
        }
        for var visit in visits {
            if !booted.contains(visit.context) {
                visit.coldBoot = true
                booted.insert(visit.context)
            }
            if visit.restorationIdentifier == nil, visit.action == .restore, platform == .android {
                visit.action = .advance
            }
            shown[visit.context] = visit.screen
            update(visit.screen, in: &w) { $0.failedStatus = nil }
            commands.append(.visit(visit))
        }
        let changed = w.main.map(\.id) != main.map(\.id) || w.modal.map(\.id) != modal.map(\.id)
        main = w.main
        modal = w.modal
        nextID = w.nextID
        return HotwireDecision(presentation: presentation, outcome: w.outcome, commands: commands, changed: changed)
    }

    private mutating func update(_ id: Int, _ body: (inout HotwireScreen) -> Void) {
        if let i = main.firstIndex(where: { $0.id == id }) { body(&main[i]) }
        if let i = modal.firstIndex(where: { $0.id == id }) { body(&modal[i]) }
    }

    private func update(_ id: Int, in w: inout Work, _ body: (inout HotwireScreen) -> Void) {
        if let i = w.main.firstIndex(where: { $0.id == id }) { body(&w.main[i]) }
        if let i = w.modal.firstIndex(where: { $0.id == id }) { body(&w.modal[i]) }
    }
}
