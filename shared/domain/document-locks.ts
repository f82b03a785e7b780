/**
 * The write guard of document migration (docs/decisions.md §5): while a migration runs, writes to either document id fail
 * with FAILED_PRECONDITION. Every write path that touches a document's data puts a check of the document's lock
 * (shared/db/migration.ts) into the same transaction as the write, so a write either commits before the
 * migration takes its locks or fails; no write can slip between the worker's reads and its moves. One exception,
 * the hot path: a live append checks its editor's LOG item instead, which the worker locks before it reads the CRDT
 * data (shared/db/crdt.ts lockEditorLogs), so an append lands before that read or not at all.
 *
 * Multi-step operations also call `assertDocumentsWritable` first, so a refused request writes nothing at all.
 */
import { documentUnlockedItem, lockedDocuments, migratingError } from '../db/migration';
import { PartialWriteError } from '../db/partial-write';
import { MAX_TRANSACT_ITEMS, transactWrite, type TransactItem } from '../db/transact';
import { logger } from '../core/logger';

/** A document of an organization, as a write names it. */
export interface DocumentRef {
  organizationId: string;
  documentId: string;
}

/** The refs of `documentIds` in one organization. */
export const documentsIn = (organizationId: string, documentIds: ReadonlyArray<string | undefined>): DocumentRef[] =>
  documentIds.flatMap((documentId) => (documentId === undefined ? [] : [{ organizationId, documentId }]));

const refKey = (ref: DocumentRef) => `${ref.organizationId}\u0000${ref.documentId}`;
const distinct = (refs: readonly DocumentRef[]) => [...new Map(refs.map((ref) => [refKey(ref), ref])).values()];

/** Throws FailedPreconditionError when a migration holds any of `documents` (consistent reads, one per organization). */
export async function assertDocumentsWritable(apiKeyId: string, documents: readonly DocumentRef[]): Promise<void> {
  const byOrganization = new Map<string, string[]>();
  for (const ref of distinct(documents))
    byOrganization.set(ref.organizationId, [...(byOrganization.get(ref.organizationId) ?? []), ref.documentId]);
  const locked = await Promise.all(
    [...byOrganization].map(([organizationId, documentIds]) => lockedDocuments(apiKeyId, organizationId, documentIds)),
  );
  const first = locked.flat()[0];
  if (first !== undefined) throw migratingError(first);
}

/**
 * Writes `items` with a lock check for each of `documents` appended, in one transaction. Throws
 * FailedPreconditionError when a document is being migrated, and what the items' own conditions mean.
 */
export async function transactGuarded(
  apiKeyId: string,
  items: readonly TransactItem[],
  documents: readonly DocumentRef[],
): Promise<void> {
  await transactWrite([
    ...items,
    ...distinct(documents).map((ref) => documentUnlockedItem(apiKeyId, ref.organizationId, ref.documentId)),
  ]);
}

/** Writes that must commit together, and the documents whose data they touch. */
export interface WriteGroup {
  items: TransactItem[];
  documents: readonly DocumentRef[];
  /** What puts the group's items back as they were (writeGroupsAtomically only). */
  undo?: TransactItem[];
}

/** One transaction of packed groups: their items and lock checks, and which groups (by index) it holds. */
export interface PackedTransaction extends WriteGroup {
  groups: number[];
}

const transactionSize = (group: WriteGroup) => group.items.length + distinct(group.documents).length;

/**
 * Packs groups into transactions of at most 100 items, counting one lock check per distinct document in each
 * transaction and never splitting a group. `leading` (organization or structure writes) goes first into the first
 * transaction. Pure, so the packing is unit-tested.
 */
export function packGroups(
  groups: readonly WriteGroup[],
  leading: WriteGroup = { items: [], documents: [] },
): PackedTransaction[] {
  const packed: PackedTransaction[] = [];
  let current: PackedTransaction = { items: [...leading.items], documents: distinct(leading.documents), groups: [] };
  if (transactionSize(leading) > MAX_TRANSACT_ITEMS) throw new Error('A write group does not fit one transaction.');
  groups.forEach((group, index) => {
    if (transactionSize(group) > MAX_TRANSACT_ITEMS) throw new Error('A write group does not fit one transaction.');
    const merged = {
      items: [...current.items, ...group.items],
      documents: distinct([...current.documents, ...group.documents]),
      groups: [...current.groups, index],
    };
    if (transactionSize(merged) <= MAX_TRANSACT_ITEMS) {
      current = merged;
    } else {
      packed.push(current);
      current = { items: [...group.items], documents: distinct(group.documents), groups: [index] };
    }
  });
  packed.push(current);
  return packed.filter((transaction) => transaction.items.length > 0);
}

/**
 * Writes the groups in as few guarded transactions as fit (see packGroups), one after another, so each group is
 * written whole or not at all. When a transaction fails after an earlier one committed, throws PartialWriteError
 * naming the groups written (callers answer those items success and the others not written); when the first
 * fails, its own error: FailedPreconditionError when a document is being migrated (callers run
 * assertDocumentsWritable first, so that only happens when a migration starts mid-request).
 */
export async function writeGroupsGuarded(
  apiKeyId: string,
  groups: readonly WriteGroup[],
  leading?: WriteGroup,
): Promise<void> {
  const committed = new Set<number>();
  let written = false;
  for (const transaction of packGroups(groups, leading)) {
    try {
      await transactGuarded(apiKeyId, transaction.items, transaction.documents);
    } catch (error) {
      throw written ? new PartialWriteError(committed, error) : error;
    }
    written = true;
    for (const index of transaction.groups) committed.add(index);
  }
}

/** True when the groups (and `leading`) fit one guarded transaction, so writing them cannot stop part way. */
export const fitsOneTransaction = (groups: readonly WriteGroup[], leading?: WriteGroup): boolean =>
  packGroups(groups, leading).length <= 1;

/**
 * Writes the groups as writeGroupsGuarded does, but all or nothing, for operations that answer one success for
 * the whole request: when a later transaction fails, the groups already written are put back with their `undo`
 * items and the failure is thrown as if nothing had been written. This is a compensation, not a rollback: a
 * concurrent change to the same items between the write and the undo is overwritten by the undo. When the undo
 * itself fails, the log names the failure and the request still answers the original error.
 */
export async function writeGroupsAtomically(apiKeyId: string, groups: readonly WriteGroup[]): Promise<void> {
  try {
    await writeGroupsGuarded(apiKeyId, groups);
  } catch (error) {
    if (!(error instanceof PartialWriteError)) throw error;
    const undo = [...error.committed].flatMap((index) => groups[index].undo ?? []);
    try {
      for (let i = 0; i < undo.length; i += MAX_TRANSACT_ITEMS)
        await transactWrite(undo.slice(i, i + MAX_TRANSACT_ITEMS));
    } catch (undoError) {
      logger.error('could not undo a write that stopped part way', {
        groupsWritten: error.committed.size,
        undoError: String(undoError),
      });
    }
    throw error.cause;
  }
}
