/**
 * Get Users (docs/api-spec.md, docs/decisions.md §4): the members of one level (organization by default, a folder, a document)
 * or all document members of the organization, narrowed by `userIds` and `organizationUserGroupIds`, in pages.
 *
 * Filters intersect; within `organizationUserGroupIds` a user in any of the groups counts. Each page walks one
 * ordered source of candidates — the named users, the groups' members merged in user order, or the level's
 * members — and checks the other filters with BatchGets, so a page costs the candidates it examines, never the
 * size of the organization. A page examines at most filterBudget(pageSize) candidates (docs/project-decisions.md,
 * bounded reads): without filters pages are full except the last; with filters a page may be short, even empty,
 * and still carry a token. The cursor is the sort key of the last user returned, or of the last candidate
 * examined when the budget ended the page, so the next page neither skips nor repeats a user.
 *
 * The members of a level are read strongly consistently, so a Get Users of a level right after an Add or Update
 * Users there answered success shows what was written. `allDocuments` reads indexes (gsi2, or gsi1 with
 * `userIds`), which DynamoDB brings up to date a moment after the table: it may trail a write by that moment.
 */
import { pageTokenAfter, readPageAfter } from '../db/page-token';
import {
  documentMembershipsOfUser,
  documentMemberSortKey,
  getMemberships,
  queryDocumentMembers,
  queryLevelMembers,
  userSortKey,
  type Level,
  type Membership,
  type Role,
} from '../db/membership';
import { cutPage, examinePage, listSource, mapPage, type Page, type Source } from '../db/query';
import { groupMembersAmong, queryGroupMembers } from '../db/user-group';
import { levelOf, type LevelInput } from './users';
import { withoutUndefined } from '../core/objects';

export interface GetUsersInput extends LevelInput {
  userIds?: string[];
  organizationUserGroupIds?: string[];
  allDocuments?: boolean;
  groupByDocumentId?: boolean;
  pageSize: number;
  pageToken?: string;
}

export interface ListedUser {
  userId: string;
  name?: string;
  email?: string;
  initial?: string;
  accessRole: Role;
  documentId?: string;
}

export interface UserListing {
  users: ListedUser[] | Record<string, ListedUser[]>;
  nextPageToken?: string;
}

interface Candidate {
  userId: string;
  sortKey: string;
  membership?: Membership;
}

const sortKeyOf = (candidate: Candidate) => candidate.sortKey;

function namedUsers(userIds: readonly string[]): Source<Candidate> {
  const sorted = [...new Set(userIds)]
    .map((userId) => ({ userId, sortKey: userSortKey(userId) }))
    .sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
  return listSource(sorted, sortKeyOf);
}

function levelMembers(apiKeyId: string, organizationId: string, level: Level): Source<Candidate> {
  return async (after, limit) =>
    mapPage(
      await queryLevelMembers(apiKeyId, organizationId, level, limit, after, { consistent: true }),
      (membership) => ({ userId: membership.userId, sortKey: userSortKey(membership.userId), membership }),
    );
}

/** Members of any of the groups, merged in user order: only keys up to the smallest frontier are certain. */
function groupMembers(apiKeyId: string, organizationId: string, groupIds: readonly string[]): Source<Candidate> {
  return async (after, limit) => {
    const pages = await Promise.all(
      groupIds.map((groupId) => queryGroupMembers(apiKeyId, organizationId, groupId, limit, after)),
    );
    const frontiers = pages.filter((page) => page.more).map((page) => page.sortKeys[page.sortKeys.length - 1]);
    const frontier = frontiers.length > 0 ? frontiers.sort()[0] : undefined;
    const merged = new Map<string, Candidate>();
    for (const page of pages) {
      page.userIds.forEach((userId, i) => {
        const sortKey = page.sortKeys[i];
        if (frontier === undefined || sortKey <= frontier) merged.set(sortKey, { userId, sortKey });
      });
    }
    const candidates = [...merged.values()].sort((a, b) => (a.sortKey < b.sortKey ? -1 : 1));
    const items = candidates.slice(0, limit);
    // Past the frontier a group still has members to read: more follow even when this batch holds every merged one.
    const more = frontier !== undefined || candidates.length > limit;
    return more && items.length > 0 ? { items, after: sortKeyOf(items[items.length - 1]) } : { items };
  };
}

/** Keeps the candidates that pass the filters the source did not apply; fills in their membership. */
async function filterCandidates(
  apiKeyId: string,
  input: GetUsersInput,
  level: Level,
  candidates: Candidate[],
  sourceIsLevel: boolean,
  sourceIsGroups: boolean,
): Promise<Candidate[]> {
  let kept = candidates;
  if (!sourceIsLevel && kept.length > 0) {
    // Consistent, as the level's own listing: a write answered success is read back (shared/domain/profile-copies.ts).
    const members = await getMemberships(
      apiKeyId,
      input.organizationId,
      level,
      kept.map((c) => c.userId),
    );
    kept = kept.filter((c) => members.has(c.userId)).map((c) => ({ ...c, membership: members.get(c.userId) }));
  }
  return sourceIsGroups ? kept : inAnyGroup(apiKeyId, input, kept);
}

/**
 * A page of a level's users: candidates from one source (the named users, the groups' members, or the level's
 * members), checked against the other filters within the read budget.
 */
function pageOfLevel(apiKeyId: string, input: GetUsersInput, after: string | undefined): Promise<Page<Candidate>> {
  const level = levelOf(input);
  const source =
    input.userIds !== undefined
      ? namedUsers(input.userIds)
      : input.organizationUserGroupIds !== undefined
        ? groupMembers(apiKeyId, input.organizationId, input.organizationUserGroupIds)
        : levelMembers(apiKeyId, input.organizationId, level);
  const sourceIsLevel = input.userIds === undefined && input.organizationUserGroupIds === undefined;
  const sourceIsGroups = input.userIds === undefined && input.organizationUserGroupIds !== undefined;
  const keep = (batch: Candidate[]) => filterCandidates(apiKeyId, input, level, batch, sourceIsLevel, sourceIsGroups);
  return examinePage(source, keep, { size: input.pageSize, after, keyOf: sortKeyOf });
}

/**
 * All document members of the organization, ordered by document then user. With `userIds`, the source is those
 * users' own document memberships (one gsi1 query each); otherwise the organization's document members (gsi2),
 * with the group filter checked per batch within the read budget.
 */
async function pageOfAllDocuments(
  apiKeyId: string,
  input: GetUsersInput,
  after: string | undefined,
): Promise<Page<Candidate>> {
  const toCandidate = (membership: Membership): Candidate => ({
    userId: membership.userId,
    sortKey: documentMemberSortKey(String(membership.documentId), membership.userId),
    membership,
  });
  if (input.userIds !== undefined) {
    const lists = await Promise.all(
      [...new Set(input.userIds)].map((userId) => documentMembershipsOfUser(apiKeyId, input.organizationId, userId)),
    );
    const all = lists
      .flat()
      .map(toCandidate)
      .filter((c) => after === undefined || c.sortKey > after);
    return cutPage(
      (await inAnyGroup(apiKeyId, input, all)).sort((a, b) => (a.sortKey < b.sortKey ? -1 : 1)),
      input.pageSize,
      sortKeyOf,
    );
  }
  const source: Source<Candidate> = async (cursor, limit) =>
    mapPage(await queryDocumentMembers(apiKeyId, input.organizationId, limit, cursor), toCandidate);
  return examinePage(source, (batch) => inAnyGroup(apiKeyId, input, batch), {
    size: input.pageSize,
    after,
    keyOf: sortKeyOf,
  });
}

/** The candidates that belong to any of the requested groups (all of them when no group filter is given). */
async function inAnyGroup(apiKeyId: string, input: GetUsersInput, candidates: Candidate[]): Promise<Candidate[]> {
  const groups = input.organizationUserGroupIds;
  if (groups === undefined || candidates.length === 0) return candidates;
  const ids = [...new Set(candidates.map((c) => c.userId))];
  const sets = await Promise.all(groups.map((g) => groupMembersAmong(apiKeyId, input.organizationId, g, ids)));
  return candidates.filter((c) => sets.some((set) => set.has(c.userId)));
}

/** One page of users; throws InvalidArgumentError for a page token of another tenant or query. */
export async function getUsers(apiKeyId: string, input: GetUsersInput): Promise<UserListing> {
  const { pageToken, pageSize: _pageSize, ...query } = input;
  const scope = {
    tenant: apiKeyId,
    query: {
      operation: 'users/get',
      ...query,
      userIds: query.userIds ? [...query.userIds].sort() : undefined,
      organizationUserGroupIds: query.organizationUserGroupIds ? [...query.organizationUserGroupIds].sort() : undefined,
    },
  };
  const after = await readPageAfter(pageToken, scope);
  const { items: page, after: next } = input.allDocuments
    ? await pageOfAllDocuments(apiKeyId, input, after)
    : await pageOfLevel(apiKeyId, input, after);
  // Name, email and initial are the membership's copy of the profile (shared/domain/profile-copies.ts).
  const users: ListedUser[] = page.map((c) => {
    return withoutUndefined({
      userId: c.userId,
      name: c.membership?.name,
      email: c.membership?.email,
      initial: c.membership?.initial,
      accessRole: c.membership?.accessRole ?? 'editor',
      documentId: input.allDocuments ? c.membership?.documentId : undefined,
    });
  });
  const nextPageToken = await pageTokenAfter(scope, next);
  if (!input.groupByDocumentId) return { users, nextPageToken };
  const grouped: Record<string, ListedUser[]> = {};
  for (const user of users) {
    const { documentId, ...rest } = user;
    (grouped[String(documentId)] ??= []).push(rest);
  }
  return { users: grouped, nextPageToken };
}
