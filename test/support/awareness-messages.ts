/**
 * y-protocols awareness messages as the tests write and read them (varuint 1, then a varUint8Array of varuint count
 * and per entry varuint clientID, varuint clock, varstring JSON state), with lib0 as the libraries do.
 */
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';

export interface AwarenessTestEntry {
  clientId: number;
  clock: number;
  /** The parsed JSON state; null for a removal. */
  state: unknown;
}

export function awarenessMessage(entries: readonly AwarenessTestEntry[]): Uint8Array {
  const update = encoding.createEncoder();
  encoding.writeVarUint(update, entries.length);
  for (const { clientId, clock, state } of entries) {
    encoding.writeVarUint(update, clientId);
    encoding.writeVarUint(update, clock);
    encoding.writeVarString(update, JSON.stringify(state));
  }
  const message = encoding.createEncoder();
  encoding.writeVarUint(message, 1);
  encoding.writeVarUint8Array(message, encoding.toUint8Array(update));
  return encoding.toUint8Array(message);
}

/** The entries of an awareness message, or null for another message. */
export function awarenessEntries(message: Uint8Array): AwarenessTestEntry[] | null {
  const decoder = decoding.createDecoder(message);
  if (decoding.readVarUint(decoder) !== 1) return null;
  const update = decoding.createDecoder(decoding.readVarUint8Array(decoder));
  return Array.from({ length: decoding.readVarUint(update) }, () => ({
    clientId: decoding.readVarUint(update),
    clock: decoding.readVarUint(update),
    state: JSON.parse(decoding.readVarString(update)) as unknown,
  }));
}
