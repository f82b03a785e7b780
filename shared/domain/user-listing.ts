/**
 * Get Users (api-spec, decisions §4): the members of one level (organization by default, a folder, a document)
 * or all document members of the organization, narrowed by `userIds` and `organizationUserGroupIds`, in pages.
 *
 * Filters intersect; within `organizationUserGroupIds` a user in any of the groups counts. Each page walks one
 * ordered source of candidates — the named users, the groups' members merged in user order, or the level's
 * members — and checks the other filters with BatchGets, so a page costs the candidates it examines, never the
 * size of the organization. A page examines at most filterBudget(pageSize) candidates (README "Decisions",
 * bounded reads): without filters pages are full except the last; with filters a page may be short, even empty,
 * and still carry a token. The cursor is the sort key of the last user returned, or of the last candidate
 * examined when the budget ended the page, so the next page neither skips nor repeats a user.
 */
import { createPageToken, readPageToken } from '../crypto/page-token';
import { filterBudget } from '../db/bounded-query';
import {
  documentMembershipsOfUser,
  documentMemberSortKey,
  getMemberships,
  queryDocumentMembers,
  queryLevelMembers,
  userSortKey,
  type Level,
  type Membership,
} from '../db/membership';
import { getProfiles } from '../db/profile';
import { groupMembersAmong, queryGroupMembers } from '../db/user-group';
import { levelOf, type LevelInput } from './users';

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
  accessRole: string;
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

/** An ordered source of candidates after a sort key; `next` returns up to `limit` and whether more remain. */
type Source = (after: string | undefined, limit: number) => Promise<{ candidates: Candidate[]; more: boolean }>;

function namedUsers(userIds: readonly string[]): Source {
  const sorted = [...new Set(userIds)].map((userId) => ({ userId, sortKey: userSortKey(userId) }))
    .sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
  return async (after, limit) => {
    const remaining = sorted.filter((c) => after === undefined || c.sortKey > after);
    return { candidates: remaining.slice(0, limit), more: remaining.length > limit };
  };
}

function levelMembers(apiKeyId: string, organizationId: string, level: Level): Source {
  return async (after, limit) => {
    const page = await queryLevelMembers(apiKeyId, organizationId, level, limit, after);
    return {
      candidates: page.members.map((membership) => ({ userId: membership.userId, sortKey: userSortKey(membership.userId), membership })),
      more: page.after !== undefined,
    };
  };
}

/** Members of any of the groups, merged in user order: only keys up to the smallest frontier are certain. */
function groupMembers(apiKeyId: string, organizationId: string, groupIds: readonly string[]): Source {
  return async (after, limit) => {
    const pages = await Promise.all(groupIds.map((groupId) => queryGroupMembers(apiKeyId, organizationId, groupId, limit, after)));
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
    return { candidates: candidates.slice(0, limit), more: frontier !== undefined || candidates.length > limit };
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
    const members = await getMemberships(apiKeyId, input.organizationId, level, kept.map((c) => c.userId), { consistent: false });
    kept = kept.filter((c) => members.has(c.userId)).map((c) => ({ ...c, membership: members.get(c.userId) }));
  }
  return sourceIsGroups ? kept : inAnyGroup(apiKeyId, input, kept);
}

async function pageOfLevel(apiKeyId: string, input: GetUsersInput, after: string | undefined) {
  const level = levelOf(input);
  const source = input.userIds !== undefined
    ? namedUsers(input.userIds)
    : input.organizationUserGroupIds !== undefined
      ? groupMembers(apiKeyId, input.organizationId, input.organizationUserGroupIds)
      : levelMembers(apiKeyId, input.organizationId, level);
  const sourceIsLevel = input.userIds === undefined && input.organizationUserGroupIds === undefined;
  const sourceIsGroups = input.userIds === undefined && input.organizationUserGroupIds !== undefined;
  const budget = filterBudget(input.pageSize);
  const found: Candidate[] = [];
  let cursor = after;
  let examined = 0;
  let more = true;
  while (found.length <= input.pageSize && more && examined < budget) {
    const batch = await source(cursor, Math.min(input.pageSize + 1 - found.length, budget - examined));
    more = batch.more;
    if (batch.candidates.length === 0) break;
    examined += batch.candidates.length;
    cursor = batch.candidates[batch.candidates.length - 1].sortKey;
    found.push(...(await filterCandidates(apiKeyId, input, level, batch.candidates, sourceIsLevel, sourceIsGroups)));
  }
  return cutPage(found, input.pageSize, more && examined >= budget ? cursor : undefined);
}

/**
 * The page of `found` (in order): past `pageSize` the next page starts after its last user; when the read budget
 * ended the read first, after `lastExamined`, the last candidate examined.
 */
function cutPage(found: Candidate[], pageSize: number, lastExamined: string | undefined) {
  const page = found.slice(0, pageSize);
  if (found.length > pageSize) return { page, after: page[page.length - 1].sortKey };
  return { page, after: lastExamined };
}

/**
 * All document members of the organization, ordered by document then user. With `userIds`, the source is those
 * users' own document memberships (one gsi1 query each); otherwise the organization's document members (gsi2),
 * with the group filter checked per batch.
 */
async function pageOfAllDocuments(apiKeyId: string, input: GetUsersInput, after: string | undefined) {
  const toCandidate = (membership: Membership): Candidate => ({
    userId: membership.userId,
    sortKey: documentMemberSortKey(String(membership.documentId), membership.userId),
    membership,
  });
  const found: Candidate[] = [];
  if (input.userIds !== undefined) {
    const lists = await Promise.all(
      [...new Set(input.userIds)].map((userId) => documentMembershipsOfUser(apiKeyId, input.organizationId, userId)),
    );
    const all = lists.flat().map(toCandidate).filter((c) => after === undefined || c.sortKey > after);
    found.push(...(await inAnyGroup(apiKeyId, input, all)).sort((a, b) => (a.sortKey < b.sortKey ? -1 : 1)));
    return cutPage(found, input.pageSize, undefined);
  }
  const budget = filterBudget(input.pageSize);
  let cursor = after;
  let examined = 0;
  let more = true;
  while (found.length <= input.pageSize && more && examined < budget) {
    const page = await queryDocumentMembers(apiKeyId, input.organizationId, Math.min(input.pageSize + 1 - found.length, budget - examined), cursor);
    more = page.after !== undefined;
    cursor = page.after;
    examined += page.members.length;
    found.push(...(await inAnyGroup(apiKeyId, input, page.members.map(toCandidate))));
  }
  return cutPage(found, input.pageSize, more && examined >= budget ? cursor : undefined);
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
  const cursor = pageToken === undefined ? undefined : await readPageToken(pageToken, scope);
  const after = typeof cursor?.after === 'string' ? cursor.after : undefined;
  const { page, after: next } = input.allDocuments
    ? await pageOfAllDocuments(apiKeyId, input, after)
    : await pageOfLevel(apiKeyId, input, after);
  const profiles = await getProfiles(apiKeyId, [...new Set(page.map((c) => c.userId))]);
  const users: ListedUser[] = page.map((c) => {
    const profile = profiles.get(c.userId);
    return stripUndefined({
      userId: c.userId,
      name: profile?.name,
      email: profile?.email,
      initial: profile?.initial,
      accessRole: c.membership?.accessRole ?? 'editor',
      documentId: input.allDocuments ? c.membership?.documentId : undefined,
    });
  });
  const nextPageToken = next === undefined ? undefined : await createPageToken(scope, { after: next });
  if (!input.groupByDocumentId) return { users, nextPageToken };
  const grouped: Record<string, ListedUser[]> = {};
  for (const user of users) {
    const { documentId, ...rest } = user;
    (grouped[String(documentId)] ??= []).push(rest);
  }
  return { users: grouped, nextPageToken };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
