/**
 * Types of the live-sync socket adapter (live-socket.js, which says what it does). No DOM types: the adapter's
 * events are plain objects with the fields the y-websocket provider reads.
 */

/** The most base64 characters in one frame. */
export declare const FRAME_TEXT_CHARS: number;
/** The close code reported when the service denied access (4403). */
export declare const PERMISSION_DENIED_CLOSE_CODE: number;
/** The close code reported when the server sent a frame that is not of the format (1002). */
export declare const PROTOCOL_ERROR_CLOSE_CODE: number;
/** Reported when the service refused a message over its 1 MiB limit (its reason starts with MESSAGE_TOO_LARGE_PREFIX). */
export declare const MESSAGE_TOO_LARGE_CLOSE_CODE: number;
export declare const MESSAGE_TOO_LARGE_PREFIX: string;
/** Reported when the service closed the connection for too many messages: the provider reconnects. */
export declare const TOO_MANY_MESSAGES_CLOSE_CODE: number;
export declare const TOO_MANY_MESSAGES_REASON: string;
/** The local client's unchanged presence goes out at most once per this many milliseconds (60,000). */
export declare const PRESENCE_RENEWAL_MS: number;
/** How long a remote client's presence is kept alive at the provider after its last real message (150,000 ms). */
export declare const REMOTE_PRESENCE_LIFETIME_MS: number;

/** A frame that is not of the format, or chunks that do not join into a message. */
export declare class MalformedFrameError extends Error {
  constructor(message: string);
}

/** The frames that carry `message`: one whole frame, or its chunks under `id` (1–16 of [A-Za-z0-9_-]). */
export declare function encodeFrames(message: Uint8Array, id: string): string[];

/** The batch frame that carries `messages` (at least 2, their base64 at most FRAME_TEXT_CHARS together), in order. */
export declare function encodeBatch(messages: Uint8Array[]): string;

/** Reassembles the text frames of one connection into messages. */
export declare class FrameReader {
  /** The messages `text` completes, in order (several for a batch, none while chunks are missing); throws MalformedFrameError. */
  readAll(text: string): Uint8Array[];
  /** The message `text` (not a batch) completes, or null while chunks are missing; throws MalformedFrameError. */
  read(text: string): Uint8Array | null;
}

/** The URL opened for the provider's `<serverUrl>/<room>?<params>`: the room as `room=`, plus `encoding=base64`. */
export declare function liveUrl(providerUrl: string): string;

export interface LiveOpenEvent {
  type: 'open';
  target: LiveSocketInstance;
}
export interface LiveMessageEvent {
  type: 'message';
  target: LiveSocketInstance;
  /** One whole protocol message: an ArrayBuffer when binaryType is 'arraybuffer', else a Blob where there is one. */
  data: ArrayBuffer | Blob;
}
export interface LiveCloseEvent {
  type: 'close';
  target: LiveSocketInstance;
  /** 4403 after the service denied access, 1002 after a malformed frame, else the underlying socket's code. */
  code: number;
  reason: string;
  wasClean: boolean;
}
export interface LiveErrorEvent {
  type: 'error';
  target: LiveSocketInstance;
  error?: unknown;
  message?: string;
}

export interface LiveSocketInstance {
  /** The URL actually opened. */
  readonly url: string;
  binaryType: 'arraybuffer' | 'blob';
  readonly readyState: number;
  readonly bufferedAmount: number;
  readonly protocol: string;
  readonly extensions: string;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSING: 2;
  readonly CLOSED: 3;
  onopen: ((event: LiveOpenEvent) => void) | null;
  onmessage: ((event: LiveMessageEvent) => void) | null;
  onclose: ((event: LiveCloseEvent) => void) | null;
  onerror: ((event: LiveErrorEvent) => void) | null;
  /**
   * Sends one protocol message (not empty): at the end of the tick, in one batch frame with the others sent in the
   * same tick, or in chunks when too large. An awareness message goes out with only the local client's entries
   * (learnt from this connection's traffic), and not at all when it has none.
   */
  send(data: Uint8Array | ArrayBuffer | ArrayBufferView): void;
  /** Sends what waits for the end of the tick, then closes. */
  close(code?: number, reason?: string): void;
}

export interface LiveSocketConstructor {
  new (url: string | URL, protocols?: string | string[]): LiveSocketInstance;
  readonly prototype: LiveSocketInstance;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSING: 2;
  readonly CLOSED: 3;
}

/** Any WebSocket class: the browser's, Node 22's global, the `ws` package's. */
export type WebSocketConstructorLike = new (url: string, protocols?: string | string[]) => object;

/**
 * The adapter over `WebSocketImpl` (default: the global WebSocket; throws a TypeError where there is none). For the
 * provider's `WebSocketPolyfill` option, whose type is the DOM's `typeof WebSocket`, cast:
 * `createLiveSocket(WebSocket) as unknown as typeof WebSocket`.
 */
export declare function createLiveSocket(WebSocketImpl?: WebSocketConstructorLike): LiveSocketConstructor;

/** The adapter over the global WebSocket (browsers, Node 22+); undefined where there is none (Node 20). */
export declare const LiveSocket: LiveSocketConstructor | undefined;
