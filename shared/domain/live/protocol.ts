/**
 * The y-websocket wire protocol (y-protocols), as the stock `WebsocketProvider` speaks it: each message starts with
 * its type (a varuint), then its payload.
 *
 *   0 sync       varuint 0 (step 1) + varUint8Array state vector
 *                varuint 1 (step 2) + varUint8Array update       what the other side lacks
 *                varuint 2 (update) + varUint8Array update       a change
 *   1 awareness  varUint8Array awareness update: varuint count, then per client varuint id, varuint clock, varstring state (JSON)
 *   2 auth       varuint 0 (permission denied) + varstring reason
 *   3 query awareness (no payload): "send me every presence you know"
 *
 * Decoding is strict: a message that does not parse, or has bytes left over, is malformed and closes only its own
 * connection (decisions §13).
 */
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';

export const MESSAGE_SYNC = 0;
export const MESSAGE_AWARENESS = 1;
export const MESSAGE_AUTH = 2;
export const MESSAGE_QUERY_AWARENESS = 3;
const SYNC_STEP_1 = 0;
const SYNC_STEP_2 = 1;
const SYNC_UPDATE = 2;
const PERMISSION_DENIED = 0;

/** One client's presence in an awareness update: its clock, and its state as JSON text (`null` when it left). */
export interface AwarenessEntry {
  clientId: number;
  clock: number;
  state: string;
}

export type LiveMessage =
  | { kind: 'syncStep1'; stateVector: Uint8Array }
  | { kind: 'syncStep2'; update: Uint8Array }
  | { kind: 'update'; update: Uint8Array }
  | { kind: 'awareness'; entries: AwarenessEntry[] }
  | { kind: 'queryAwareness' }
  | { kind: 'auth' };

/** A frame that is not a protocol message. */
export class MalformedMessageError extends Error {}

function readAwareness(payload: Uint8Array): AwarenessEntry[] {
  const decoder = decoding.createDecoder(payload);
  const count = decoding.readVarUint(decoder);
  const entries: AwarenessEntry[] = [];
  for (let i = 0; i < count; i += 1) {
    const clientId = decoding.readVarUint(decoder);
    const clock = decoding.readVarUint(decoder);
    const state = decoding.readVarString(decoder);
    JSON.parse(state);
    entries.push({ clientId, clock, state });
  }
  if (decoding.hasContent(decoder)) throw new Error('Bytes after the awareness update.');
  return entries;
}

/** Reads one protocol message. Throws MalformedMessageError for anything else. */
export function readMessage(bytes: Uint8Array): LiveMessage {
  try {
    const decoder = decoding.createDecoder(bytes);
    const type = decoding.readVarUint(decoder);
    let message: LiveMessage;
    if (type === MESSAGE_SYNC) {
      const step = decoding.readVarUint(decoder);
      const payload = decoding.readVarUint8Array(decoder);
      if (step === SYNC_STEP_1) message = { kind: 'syncStep1', stateVector: payload };
      else if (step === SYNC_STEP_2) message = { kind: 'syncStep2', update: payload };
      else if (step === SYNC_UPDATE) message = { kind: 'update', update: payload };
      else throw new Error(`Unknown sync step ${step}.`);
    } else if (type === MESSAGE_AWARENESS) {
      message = { kind: 'awareness', entries: readAwareness(decoding.readVarUint8Array(decoder)) };
    } else if (type === MESSAGE_QUERY_AWARENESS) {
      message = { kind: 'queryAwareness' };
    } else if (type === MESSAGE_AUTH) {
      decoding.readVarUint(decoder);
      decoding.readVarString(decoder);
      message = { kind: 'auth' };
    } else {
      throw new Error(`Unknown message type ${type}.`);
    }
    if (decoding.hasContent(decoder)) throw new Error('Bytes after the message.');
    return message;
  } catch (error) {
    if (error instanceof MalformedMessageError) throw error;
    throw new MalformedMessageError(
      `Not a y-websocket protocol message: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function syncMessage(step: number, payload: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, MESSAGE_SYNC);
  encoding.writeVarUint(encoder, step);
  encoding.writeVarUint8Array(encoder, payload);
  return encoding.toUint8Array(encoder);
}

export const syncStep1Message = (stateVector: Uint8Array) => syncMessage(SYNC_STEP_1, stateVector);
export const syncStep2Message = (update: Uint8Array) => syncMessage(SYNC_STEP_2, update);
export const updateMessage = (update: Uint8Array) => syncMessage(SYNC_UPDATE, update);

/** An awareness message with these clients' presence (a state of `null` removes the client for everyone). */
export function awarenessMessage(entries: readonly AwarenessEntry[]): Uint8Array {
  const update = encoding.createEncoder();
  encoding.writeVarUint(update, entries.length);
  for (const entry of entries) {
    encoding.writeVarUint(update, entry.clientId);
    encoding.writeVarUint(update, entry.clock);
    encoding.writeVarString(update, entry.state);
  }
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, MESSAGE_AWARENESS);
  encoding.writeVarUint8Array(encoder, encoding.toUint8Array(update));
  return encoding.toUint8Array(encoder);
}

/** The auth message that refuses: the stock provider reports `reason` (and the service then closes the connection). */
export function permissionDeniedMessage(reason: string): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, MESSAGE_AUTH);
  encoding.writeVarUint(encoder, PERMISSION_DENIED);
  encoding.writeVarString(encoder, reason);
  return encoding.toUint8Array(encoder);
}

/** A Yjs update that changes nothing (no structs, no deletions): stored and relayed as nothing. */
export function isEmptyUpdate(update: Uint8Array): boolean {
  return update.length === 2 && update[0] === 0 && update[1] === 0;
}
