/**
 * Users at the levels of an organization (docs/decisions.md §4): add, update, delete. Listing is in user-listing.ts.
 * Every write of one user (profile + membership) sits in one transaction, so a failure never leaves half a
 * membership behind; 100 users take three transactions, and a failure part way answers the users written
 * success and the others not written.
 *
 * Read your writes (issue 29): the membership of the level written carries the copy of the profile as the same
 * transaction leaves it, so Get Users of that level shows the write as soon as it is answered. The transaction is
 * conditional on the profile's version as read just before; when another write changed the profile in between,
 * the users not yet written are read and written again (writeUsersWithProfiles).
 */
import {
  getMemberships,
  membershipKey,
  sameCopy,
  updateMemberItem,
  upsertMembershipItem,
  userEntriesInOrganization,
  type Level,
  type UserEntry,
  type Role,
} from '../db/membership';
import {
  ensureFolderItem,
  ensureOrganizationItem,
  folderExists,
  getDocument,
  requireDocumentItem,
  upsertDocumentItem,
} from '../db/organization';
import {
  getProfiles,
  profileAfter,
  ProfileChangedError,
  stableUserId,
  upsertProfileItem,
  type Profile,
} from '../db/profile';
import { keyString } from '../db/batch';
import { MAX_TRANSACT_ITEMS, deleteItem, type TransactItem } from '../db/transact';
import { PartialWriteError } from '../db/partial-write';
import { notWritten, reportOf, type BatchResult, type ItemFailure, type WriteReport } from './batch-result';
import { NotFoundError } from '../core/errors';
import { logger } from '../core/logger';
import { COPIES_IN_REQUEST, copyOfProfile, syncProfileCopies } from './profile-copies';
import {
  assertDocumentsWritable,
  documentsIn,
  writeGroupsGuarded,
  type DocumentRef,
  type WriteGroup,
} from './document-locks';

export interface UserInput {
  userId: string;
  name?: string;
  email?: string;
  initial?: string;
  accessRole?: Role;
}

/** A user's item in Add Users and Update Users: `id` is the user's stable opaque id in the tenant (docs/decisions.md §4). */
export type UserResult = { success: boolean; id: string; message: string };

export interface LevelInput {
  organizationId: string;
  documentId?: string;
  folderId?: string;
}

/** The level a request names: a document, a folder, or (neither) the organization. */
export function levelOf(input: LevelInput): Level {
  if (input.documentId !== undefined) return { type: 'document', id: input.documentId };
  if (input.folderId !== undefined) return { type: 'folder', id: input.folderId };
  return { type: 'organization' };
}

/** The documents whose data a write at the level touches (the lock checks it needs): the document, if any. */
const documentsOf = (organizationId: string, level: Level): DocumentRef[] =>
  documentsIn(organizationId, [level.type === 'document' ? level.id : undefined]);

/** Structure writes for Add Users: organization always ensured; document or folder checked or created. */
async function structureItems(apiKeyId: string, input: AddUsersInput, now: number): Promise<TransactItem[]> {
  const items = [ensureOrganizationItem(apiKeyId, input.organizationId, now)];
  if (input.documentId !== undefined) {
    const exists = (await getDocument(apiKeyId, input.organizationId, input.documentId)) !== undefined;
    if (!exists && !input.createDocument) throw new NotFoundError('Document not found.');
    items.push(
      exists
        ? requireDocumentItem(apiKeyId, input.organizationId, input.documentId)
        : upsertDocumentItem(apiKeyId, input.organizationId, input.documentId, {}, now),
    );
  }
  if (input.folderId !== undefined) {
    const exists = await folderExists(apiKeyId, input.organizationId, input.folderId);
    if (!exists && !input.createFolder) throw new NotFoundError('Folder not found.');
    if (!exists) items.push(ensureFolderItem(apiKeyId, input.organizationId, input.folderId, now));
  }
  return items;
}

/** Users' profiles as read (`stored`, absent when none) and as the write leaves them (`after`, with the version). */
interface ProfileReads {
  stored: Map<string, Profile>;
  after: Map<string, Profile>;
}

/** The users' profiles as they will be after the write, read consistently: what their memberships copy. */
async function profilesAfter(apiKeyId: string, users: readonly UserInput[]): Promise<ProfileReads> {
  const stored = await getProfiles(
    apiKeyId,
    users.map((user) => user.userId),
    { consistent: true },
  );
  return { stored, after: new Map(users.map((user) => [user.userId, profileAfter(stored.get(user.userId), user)])) };
}

/** Rounds of read and write while concurrent writes keep changing the profiles in between. */
const PROFILE_ATTEMPTS = 5;

/** A user's write: its profile item (conditional on the profile as read), and what else the level needs. */
type UserWrite = (user: UserInput, stored: Profile | undefined, after: Profile | undefined) => WriteGroup;

/**
 * Writes one group per user (`groupOf`, from the user's profile read consistently just before), `leading` in the
 * first transaction, as writeGroupsGuarded does. When a transaction fails because another write changed a profile
 * after it was read (ProfileChangedError), the users not yet written are read and written again, up to
 * PROFILE_ATTEMPTS rounds. Answers which users (by index) were written, and the profiles they were written with;
 * throws the failure (ProfileChangedError, an ABORTED, after the last round) when none was.
 */
async function writeUsersWithProfiles(
  apiKeyId: string,
  users: readonly UserInput[],
  groupOf: UserWrite,
  leading?: WriteGroup,
): Promise<{ report: WriteReport; profiles: ProfileReads }> {
  const profiles: ProfileReads = { stored: new Map(), after: new Map() };
  const written = new Set<number>();
  let pending = users.map((_, i) => i);
  let first = leading;
  for (let round = 1; ; round += 1) {
    const read = await profilesAfter(
      apiKeyId,
      pending.map((i) => users[i]),
    );
    const groups = pending.map((i) =>
      groupOf(users[i], read.stored.get(users[i].userId), read.after.get(users[i].userId)),
    );
    let failure: unknown;
    let committed: ReadonlySet<number> = new Set(groups.keys());
    try {
      await writeGroupsGuarded(apiKeyId, groups, first);
    } catch (error) {
      failure = error instanceof PartialWriteError ? error.cause : error;
      committed = error instanceof PartialWriteError ? error.committed : new Set();
    }
    for (const j of committed) {
      const { userId } = users[pending[j]];
      written.add(pending[j]);
      const stored = read.stored.get(userId);
      const after = read.after.get(userId);
      if (stored !== undefined) profiles.stored.set(userId, stored);
      if (after !== undefined) profiles.after.set(userId, after);
    }
    if (committed.size > 0) first = undefined;
    if (failure === undefined) return { report: { written: () => true }, profiles };
    pending = pending.filter((i) => !written.has(i));
    if (!(failure instanceof ProfileChangedError) || round >= PROFILE_ATTEMPTS) {
      if (written.size === 0) throw failure instanceof Error ? failure : new Error(String(failure));
      logger.error('a write stopped part way', { partsWritten: written.size, cause: String(failure) });
      return { report: { written: (i) => written.has(i), failure }, profiles };
    }
  }
}

/**
 * After a write that changed users' profiles, brings their other memberships' copies in step, up to
 * COPIES_IN_REQUEST entries a user; the profile-copies worker does the rest and retries what fails here, so a
 * failure is logged, not answered.
 */
async function copyChangedProfiles(
  apiKeyId: string,
  written: readonly string[],
  profiles: ProfileReads,
): Promise<void> {
  const changed = written.filter((userId) => {
    const stored = profiles.stored.get(userId);
    return stored !== undefined && !sameCopy(copyOfProfile(stored), copyOfProfile(profiles.after.get(userId)));
  });
  await Promise.all(
    changed.map(async (userId) => {
      try {
        await syncProfileCopies(apiKeyId, userId, copyOfProfile(profiles.after.get(userId)), COPIES_IN_REQUEST);
      } catch (error) {
        logger.warn('Profile copies not updated; the profile-copies worker will.', { error });
      }
    }),
  );
}

export interface AddUsersInput extends LevelInput {
  createDocument?: boolean;
  createFolder?: boolean;
  users: UserInput[];
}

/**
 * Adds (or updates, idempotently) users at the level. Throws NotFoundError when the document or folder is
 * missing and may not be created; nothing is written then.
 */
export async function addUsers(
  apiKeyId: string,
  input: AddUsersInput,
  now = Date.now(),
): Promise<BatchResult<UserResult | ItemFailure>> {
  const level = levelOf(input);
  await assertDocumentsWritable(apiKeyId, documentsOf(input.organizationId, level));
  const leading = await structureItems(apiKeyId, input, now);
  const userWrite: UserWrite = (user, stored, after) => ({
    items: [
      upsertProfileItem(apiKeyId, stored, user),
      upsertMembershipItem(
        apiKeyId,
        input.organizationId,
        level,
        user.userId,
        user.accessRole,
        copyOfProfile(after),
        now,
      ),
    ],
    documents: documentsOf(input.organizationId, level),
  });
  const { report, profiles } = await writeUsersWithProfiles(apiKeyId, input.users, userWrite, {
    items: leading,
    documents: documentsOf(input.organizationId, level),
  });
  await copyChangedProfiles(
    apiKeyId,
    input.users.filter((_, i) => report.written(i)).map((user) => user.userId),
    profiles,
  );
  return Object.fromEntries(
    input.users.map((user, i) => [
      user.userId,
      report.written(i)
        ? { success: true, id: stableUserId(apiKeyId, user.userId), message: 'User added.' }
        : notWritten(report.failure),
    ]),
  );
}

export interface UpdateUsersInput extends LevelInput {
  users: UserInput[];
}

/** Updates the given fields of users that are members at the level; others get `success:false`. */
export async function updateUsers(
  apiKeyId: string,
  input: UpdateUsersInput,
): Promise<BatchResult<UserResult | ItemFailure>> {
  const level = levelOf(input);
  await assertDocumentsWritable(apiKeyId, documentsOf(input.organizationId, level));
  const members = await getMemberships(
    apiKeyId,
    input.organizationId,
    level,
    input.users.map((user) => user.userId),
  );
  const present = input.users.filter((user) => members.has(user.userId));
  const userWrite: UserWrite = (user, stored, after) => ({
    items: [
      upsertProfileItem(apiKeyId, stored, user),
      updateMemberItem(apiKeyId, input.organizationId, level, user.userId, copyOfProfile(after), user.accessRole),
    ],
    documents: documentsOf(input.organizationId, level),
  });
  const { report, profiles } = await writeUsersWithProfiles(apiKeyId, present, userWrite);
  const written = new Set(present.filter((_, i) => report.written(i)).map((user) => user.userId));
  await copyChangedProfiles(apiKeyId, [...written], profiles);
  return Object.fromEntries(
    input.users.map((user) => [
      user.userId,
      !members.has(user.userId)
        ? { success: false, id: stableUserId(apiKeyId, user.userId), message: 'User does not exist.' }
        : written.has(user.userId)
          ? { success: true, id: stableUserId(apiKeyId, user.userId), message: 'User updated.' }
          : notWritten(report.failure),
    ]),
  );
}

/** Entries of one user per transaction when removing: each may need a lock check, and 2 × 50 fit in 100 items. */
const ENTRIES_PER_TRANSACTION = MAX_TRANSACT_ITEMS / 2;

export interface DeleteUsersInput extends LevelInput {
  userIds: string[];
}

/**
 * Removes users from the level. At organization level (no document or folder) everything the user has in the
 * organization goes: memberships at every level, grants, and group memberships (docs/decisions.md §4). Deletes that
 * concern a document check its migration lock. Throws FailedPreconditionError (nothing written) when a document
 * the request would change is being migrated.
 */
export async function deleteUsers(
  apiKeyId: string,
  input: DeleteUsersInput,
): Promise<BatchResult<{ success: boolean; message: string }>> {
  const level = levelOf(input);
  await assertDocumentsWritable(apiKeyId, documentsOf(input.organizationId, level));
  const entriesByUser = new Map<string, UserEntry[]>();
  if (level.type === 'organization') {
    await Promise.all(
      input.userIds.map(async (userId) => {
        const entries = await userEntriesInOrganization(apiKeyId, input.organizationId, userId);
        entriesByUser.set(userId, entries);
      }),
    );
  } else {
    const members = await getMemberships(apiKeyId, input.organizationId, level, input.userIds);
    for (const userId of members.keys()) {
      entriesByUser.set(userId, [
        {
          ...membershipKey(apiKeyId, input.organizationId, level, userId),
          documentId: documentsOf(input.organizationId, level)[0]?.documentId,
        },
      ]);
    }
  }
  const documentsOfEntry = (entry: UserEntry) => documentsIn(input.organizationId, [entry.documentId]);
  await assertDocumentsWritable(apiKeyId, [...entriesByUser.values()].flat().flatMap(documentsOfEntry));
  // One group per user, so a user is removed whole; a user with more entries than one transaction holds is
  // removed in several, membership of the level last, so a user left part-removed still shows and is removed by
  // sending the request again.
  const groups: WriteGroup[] = [];
  const lastGroupOf = new Map<string, number>();
  for (const [userId, entries] of entriesByUser) {
    const membership = keyString(membershipKey(apiKeyId, input.organizationId, level, userId));
    const ordered = [
      ...entries.filter((entry) => keyString(entry) !== membership),
      ...entries.filter((entry) => keyString(entry) === membership),
    ];
    for (let i = 0; i < ordered.length; i += ENTRIES_PER_TRANSACTION) {
      const chunk = ordered.slice(i, i + ENTRIES_PER_TRANSACTION);
      groups.push({ items: chunk.map(deleteItem), documents: chunk.flatMap(documentsOfEntry) });
    }
    if (ordered.length > 0) lastGroupOf.set(userId, groups.length - 1);
  }
  const report = await reportOf(writeGroupsGuarded(apiKeyId, groups));
  return Object.fromEntries(
    input.userIds.map((userId) => {
      const last = lastGroupOf.get(userId);
      if (last === undefined) return [userId, { success: false, message: 'User does not exist.' }];
      return [userId, report.written(last) ? { success: true, message: 'User removed.' } : notWritten(report.failure)];
    }),
  );
}
