/**
 * What Ask AI's provider adapters (openai.ts, anthropic.ts, gemini.ts) share: the request they get and the one
 * error they throw. Each adapter turns its SDK's errors into a `ProviderFailure`, so the caller never depends on an
 * SDK's error classes (and never loads an SDK it does not use).
 */

/** The providers Ask AI can call, one adapter module each (providers.ts). */
export const AI_PROVIDERS = ['openai', 'anthropic', 'gemini'] as const;

export type AiProvider = (typeof AI_PROVIDERS)[number];

export interface ProviderRequest {
  /** The tenant's decrypted provider key. Adapters hand it to the SDK and nowhere else. */
  apiKey: string;
  model: string;
  /** The system instruction; absent for reasoning models. */
  system?: string;
  user: string;
  /** Aborted at the deadline. */
  signal: AbortSignal;
  /** The deadline, also given to the SDK so that its own timer (10 minutes by default) never outlasts ours. */
  timeoutMs: number;
}

/** The shape of every adapter module. */
export interface ProviderAdapter {
  /** The model's answer; throws a ProviderCallError for an error the provider reported or a connection failure. */
  complete(request: ProviderRequest): Promise<string>;
}

export type ProviderFailure =
  /** The provider answered with an HTTP error; `detail` is its own message, when it sent one. */
  | { kind: 'status'; status: number; detail?: string }
  | { kind: 'timeout' }
  /** No answer: connection refused or reset, DNS failure. */
  | { kind: 'network' }
  /** A success without any text (a filtered or empty answer). */
  | { kind: 'empty' }
  /** Anything else (an answer the SDK could not read). */
  | { kind: 'unexpected' };

export class ProviderCallError extends Error {
  constructor(readonly failure: ProviderFailure) {
    super(`AI provider call failed: ${failure.kind}`);
    this.name = 'ProviderCallError';
  }
}

/**
 * The provider's own message from an error body, whatever its nesting (`{error: {message}}`, `{message}`, or a
 * JSON string of either); undefined when there is none.
 */
export function errorBodyMessage(body: unknown, depth = 0): string | undefined {
  if (depth > 3) return undefined;
  if (typeof body === 'string') {
    try {
      return errorBodyMessage(JSON.parse(body), depth + 1);
    } catch {
      return undefined;
    }
  }
  if (body === null || typeof body !== 'object') return undefined;
  const { message, error } = body as { message?: unknown; error?: unknown };
  if (typeof message === 'string' && message.trim() !== '') return message;
  return errorBodyMessage(error, depth + 1);
}

/** The classes every Stainless-generated SDK (openai, @anthropic-ai/sdk) exposes on its client class. */
export interface StainlessErrors {
  APIError: abstract new (...args: never[]) => Error & { status: number | undefined; error: unknown };
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
}

/**
 * Turns an error of a Stainless SDK into a ProviderCallError: its own timeout, an HTTP status, a connection
 * failure. Anything else is returned as it is (the caller reports it as unexpected).
 */
export function stainlessFailure(error: unknown, sdk: StainlessErrors): unknown {
  if (error instanceof sdk.APIConnectionTimeoutError) return new ProviderCallError({ kind: 'timeout' });
  if (error instanceof sdk.APIConnectionError) return new ProviderCallError({ kind: 'network' });
  if (error instanceof sdk.APIError && typeof error.status === 'number') {
    return new ProviderCallError({ kind: 'status', status: error.status, detail: errorBodyMessage(error.error) });
  }
  return error;
}
