// Type declarations for bridge.js (the page side of bridged, protocol v1). Written by hand:
// keep in step with bridge.js. Documentation: docs/JS-CLIENT.md.

export declare const PROTOCOL_VERSION: 1;

/** The query parameters that carry a claim on a web view. */
export declare const CLAIM_PARAMS: readonly ["bridge_session", "bridge_webview", "bridge_token"];

/**
 * Codes of the protocol (section 2 of the contract) plus the client's own:
 * `disconnected` (the socket dropped while the request was in flight; it may or may not have
 * been acted on), `closed` (the bridge is closed: `close()`, the daemon's `closed`/`load`
 * event, a `pagehide`, or a refused handshake), `bad-url` (no usable WebSocket URL).
 */
export type ErrorCode =
  | "parse-error" | "invalid-request" | "unknown-method" | "invalid-params" | "not-ready"
  | "not-allowed" | "unknown-session" | "unknown-webview" | "unknown-route" | "conflict"
  | "limit-exceeded" | "internal"
  | "disconnected" | "closed" | "bad-url";

export declare class BridgeError extends Error {
  constructor(code: ErrorCode | string, message?: string, data?: unknown);
  readonly name: "BridgeError";
  /** The protocol's error code (or one of the client's). */
  readonly code: ErrorCode | string;
  readonly data?: unknown;
}

export type ConnectionState = "connecting" | "open" | "reconnecting" | "suspended" | "closed";

export type ConnectionEvent =
  // reclaimed: the bridge was open before, or this open follows reclaim()
  | { state: "open"; session: string; webview: string; reclaimed: boolean }
  | { state: "reconnecting"; attempt: number; delayMs: number; code?: number; reason?: string }
  | { state: "suspended" }
  | { state: "closed"; code: string; reason: string };

export interface WebViewItem {
  id: string;
  kind: "webview";
  mode: "pwa" | "classic";
  url: string;
  title: string | null;
  connected: boolean;
}
export interface PlaceholderItem { id: string; kind: "placeholder"; of: string; url: string }
export interface NativeItem { id: string; kind: "native"; url: string }
export type StackItem = WebViewItem | PlaceholderItem | NativeItem;

export interface Claim { session: string; webview: string; token: string }

export interface HelloResult extends Claim {
  protocol: 1;
  pageUrl: string;
  stack: StackItem[];
}

export interface PwaNavigateParams { url?: string | null; title?: string | null; [key: string]: unknown }
export interface PwaNavigateResult { placeholder: string; stack: StackItem[] }
export type PwaRenderedResult =
  | { removed: true; reason: "rendered"; latencyMs: number }
  | { removed: false };
export interface BackResult { action: "swap" | "pop" | "none"; removed: string[]; stack: StackItem[] }

export interface LoadParams extends Claim { url: string; pageUrl: string }
export interface BackEventParams { placeholder: string; url: string }
export interface ClosedEventParams { reason?: string; load?: LoadParams }
export interface NavigateFailedParams { url: string; code: ErrorCode | string; message?: string }

/** Events a page may receive, by name; any other name carries an app-defined object. */
export interface BridgeEvents {
  connection: ConnectionEvent;
  back: BackEventParams;
  load: LoadParams;
  closed: ClosedEventParams;
  "navigate.failed": NavigateFailedParams;
  /** An error reply the client could not match to a request (e.g. `"id": null`). */
  "protocol-error": { code: string; message: string };
}

export interface Frame { id?: number | null; method?: string; event?: string; params?: object; result?: unknown; error?: unknown }

export interface ReconnectOptions {
  /** First delay after a drop (default 250 ms). */
  initialDelayMs?: number;
  /** Upper bound of the delay (default 5000 ms). */
  maxDelayMs?: number;
  /** Growth per failed attempt (default 2). */
  factor?: number;
  /** Multiply each delay by a random factor in [0.5, 1] (default true). */
  jitter?: boolean;
}

/** A WebSocket constructor: the browser's, Node's, or a test double. */
export interface WebSocketLike {
  readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code?: number; reason?: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface ConnectOptions {
  /** The daemon's WebSocket URL. Default: the page's `?bridge=`, else `/bridge` on the host that served bridge.js. */
  url?: string;
  /** Claim this web view; default: the page URL's `bridge_session`/`bridge_webview`/`bridge_token`. */
  claim?: Claim;
  /** On a first connect whose claim fails with `unknown-session`, start a new session (default true). */
  claimFallback?: boolean;
  /** After `hello`, put the claim into the address bar with `history.replaceState` (default true). */
  replaceUrl?: boolean;
  /** Also add the claim to same-origin URLs the app passes to pushState/replaceState (default false). */
  keepClaimInUrl?: boolean;
  /** Turn link clicks and GET form submits that would load another document into `navigate` events (default true). */
  interceptNavigation?: boolean;
  /** Decides which URLs are intercepted (default: every scheme but javascript, mailto, tel, sms, data, blob, about, file). */
  shouldIntercept?: (url: URL) => boolean;
  /**
   * The page came back by the browser's Back or Forward button (default: detected from the
   * navigation timing entry; a page restored from the back-forward cache sets it on its own).
   * The first `hello` then carries `history: true` and the daemon pops what the tab left behind.
   */
  fromHistory?: boolean;
  /**
   * Remember this web view's claim for each history entry of the tab (in `sessionStorage`, never
   * in a URL), so that a document the browser's Back/Forward loads at an entry whose URL carries
   * no claim (one the app pushed) claims its web view again with `history: true` instead of
   * starting a new session (default true).
   */
  rememberClaims?: boolean;
  /** Where the claims of the tab's history entries are kept (default `window.sessionStorage`; null: nowhere). */
  sessionStorage?: { getItem(key: string): string | null; setItem(key: string, value: string): void } | null;
  /** Go to the `pageUrl` of `load` and `closed.load` (default true). */
  followLoad?: boolean;
  /** Let `pwaRendered()` report an address the daemon does not know with `pwa-navigated` (default true). */
  reportUrl?: boolean;
  /** Reconnection after a drop; `false`: close instead. */
  reconnect?: ReconnectOptions | false;
  // Injection points (tests, non-browser hosts). Default: the globals.
  WebSocket?: WebSocketConstructor;
  window?: object | null;
  location?: { href: string; replace(url: string): void } | null;
  history?: { state: unknown; back(): void; replaceState(state: unknown, title: string, url?: string | null): void; pushState?(state: unknown, title: string, url?: string | null): void } | null;
  document?: { baseURI: string } | null;
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  random?: () => number;
  console?: Pick<Console, "warn" | "error"> | null;
  /** The URL this module was served from (default `import.meta.url`). */
  moduleUrl?: string;
}

export declare class Bridge {
  constructor(options?: ConnectOptions);
  /** Resolves with this bridge after the first successful `hello`; rejects if it closes first (a new promise after `reclaim`). */
  readonly ready: Promise<Bridge>;
  readonly state: ConnectionState;
  /** The WebSocket URL in use (null when none could be derived). */
  readonly url: string | null;
  readonly session: string | null;
  readonly webview: string | null;
  readonly token: string | null;
  readonly pageUrl: string | null;
  /** The last stack the daemon reported to this page (hello, pwa-navigate). */
  readonly stack: StackItem[] | null;
  /** Why the bridge closed, once `state` is "closed". */
  readonly closeReason: BridgeError | null;

  /** Sends a request; calls made before the handshake (or while reconnecting) are queued. */
  request<R = Record<string, unknown>>(method: string, params?: object | null): Promise<R>;
  /** Sends an event; false when the bridge is closed. Throws TypeError on a bad name or params. */
  trigger(name: string, params?: object | null): boolean;
  /** The PWA is about to change its DOM; resolves once the placeholder is stacked. A string is `{url}`. */
  pwaNavigate(params?: PwaNavigateParams | string): Promise<PwaNavigateResult>;
  /** The PWA finished rendering (also after a back). */
  pwaRendered(): Promise<PwaRenderedResult>;
  /** Asks the host to go back (a header back button). */
  back(): Promise<BackResult>;
  /** Asks for a classic navigation (a `navigate` event); false when the bridge is closed. */
  navigate(url: string | URL): boolean;
  /** Handles the daemon's `back` event; default `history.back()`; null restores it. Returns a restorer. */
  onBack(handler: ((params: BackEventParams) => void) | null): () => void;
  on<K extends keyof BridgeEvents>(name: K, callback: (params: BridgeEvents[K], frame: Frame) => void): () => void;
  on(name: string, callback: (params: Record<string, unknown>, frame: Frame) => void): () => void;
  /** Closes for good (until a `reclaim`); pending requests reject with code "closed". */
  close(): void;
  /**
   * Opens a closed bridge again, on this same object, for the web view `claim` names (the daemon
   * calls it when it hands a kept document to a new web view, e.g. hotwire-native's modal on iOS).
   * The hello carries `claim` and the page's current url; listeners and the `onBack` handler stay;
   * `ready` becomes a new promise; requests made before the hello is answered are queued; the
   * `connection` event of the open says `reclaimed: true`. A refused claim closes the bridge again
   * (never a new session in its place). Returns true when the connection attempt started; false,
   * changing nothing, when the bridge is not "closed" or has no WebSocket URL. Throws a
   * BridgeError "invalid-params" unless `claim` has three non-empty strings.
   */
  reclaim(claim: Claim): boolean;
}

/** Connects and resolves with the bridge after a successful `hello`. */
export declare function connect(options?: ConnectOptions): Promise<Bridge>;
/** A bridge that starts connecting at once; use `bridge.ready` to wait for the handshake. */
export declare function createBridge(options?: ConnectOptions): Bridge;

export interface AstroShim {
  readonly bridge: Bridge;
  isRunningInApp(): true;
  trigger(name: string, params?: object): boolean;
  on(name: string, callback: (params: Record<string, unknown>, frame: Frame) => void): () => void;
  /**
   * `Astro.jsRpcMethod(name, argNames)(...args)` sends request `name` with params built from
   * argNames; a trailing function is a node-style callback `(error, result)`.
   */
  jsRpcMethod(method: string, argNames?: string[]): (...args: unknown[]) => Promise<any>;
  nativeRpcMethod(method: string, argNames?: string[]): (...args: unknown[]) => Promise<any>;
}

/**
 * Installs `window.Astro` on a new bridge (or `options.bridge`). Loading the module as
 * `/bridge.js?astro` does this automatically. An existing non-shim `window.Astro` is returned
 * untouched.
 */
export declare function installAstroShim(options?: ConnectOptions & { bridge?: Bridge; window?: object }): AstroShim;

/** `href` without the claim parameters, every other byte unchanged. */
export declare function stripClaim(href: string): string;
/** `href` with the claim in its query, before any fragment. */
export declare function addClaim(href: string, claim: Claim): string;
/** The claim in `href`'s query, or null unless all three parameters are there. */
export declare function claimFromUrl(href: string): Claim | null;
/** The daemon's WebSocket URL: `explicit`, else `?bridge=` of `pageHref`, else from `moduleUrl`. */
export declare function resolveBridgeUrl(pageHref: string | null, moduleUrl: string, explicit?: string): string;
/** `url` with `?session=ID` (what a proxy in front of several daemons routes by); `url` unchanged without a session. */
export declare function sessionSocketUrl(url: string, session?: string | null): string;

declare global {
  interface Window { Astro?: AstroShim }
}
