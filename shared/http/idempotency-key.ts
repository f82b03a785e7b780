/**
 * The `Idempotency-Key` header and whose records it names (shared/http/idempotency.ts keeps the records). Apart
 * from the records so that a function loads Powertools Idempotency only when a request carries a key.
 */
import type { JSONObject } from '@aws-lambda-powertools/commons/types';
import type { Caller } from './auth';
import { InvalidArgumentError } from '../core/errors';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** What identifies a request for its record: who, which key, and what was asked (the request's `data`). */
export type IdempotentRequest = { scope: string; key: string; data: JSONObject } & JSONObject;

/** The key from the request's headers, or undefined when none was sent. Throws InvalidArgumentError when malformed. */
export function idempotencyKeyOf(headers: Record<string, string>): string | undefined {
  const key = headers[IDEMPOTENCY_HEADER];
  if (key === undefined) return undefined;
  if (!/^[\x20-\x7e]{1,255}$/.test(key))
    throw new InvalidArgumentError('Idempotency-Key must be 1 to 255 printable ASCII characters.');
  return key;
}

/** Whose records a caller's keys live among (docs/decisions.md §1). */
export function idempotencyScope(caller: Caller, sourceIp: string): string {
  if (caller.level === 'apiKey') return `apiKey:${caller.apiKeyId}`;
  if (caller.level === 'workspace') return `workspace:${caller.workspaceId}`;
  return `ip:${sourceIp}`;
}
