/**
 * A document with something of every kind that document migration moves, written through the operations: a
 * folder and metadata, document members, grants on it, a notification setting, CRDT editors, notifications in
 * recipients' feeds (one of them read), activities and recordings. Used by the migration tests and its bench.
 */
import type { Invocation } from './invoke';

export type Call = (
  path: string,
  data: unknown,
  headers: Record<string, string>,
) => Promise<Pick<Invocation, 'statusCode' | 'body'>>;

export interface SeedCounts {
  members: number;
  grants: number;
  notifications: number;
  activities: number;
  recordings: number;
  /** CRDT editors (text), each `editorBytes` long. */
  editors: number;
  editorBytes: number;
}

export const SMALL_SEED: SeedCounts = {
  members: 3,
  grants: 2,
  notifications: 3,
  activities: 4,
  recordings: 2,
  editors: 2,
  editorBytes: 400 * 1024,
};

const chunks = <T>(items: T[], size: number) =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, i * size + size));

async function must(
  call: Call,
  path: string,
  data: unknown,
  headers: Record<string, string>,
): Promise<Invocation['body']> {
  const response = await call(path, data, headers);
  if (response.statusCode !== 200) throw new Error(`${path} failed: ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Writes the document `documentId` with `counts` of every kind; the activity config of the key is enabled. */
export async function seedDocument(
  call: Call,
  headers: Record<string, string>,
  organizationId: string,
  documentId: string,
  counts: SeedCounts = SMALL_SEED,
): Promise<void> {
  const range = (n: number, prefix: string) =>
    Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);
  await must(
    call,
    '/v2/organizations/documents/add',
    {
      organizationId,
      createOrganization: true,
      documents: [{ documentId, documentName: 'Quarterly plan', folderId: 'folder-1', accessType: 'restricted' }],
    },
    headers,
  );
  await must(
    call,
    '/v2/organizations/documents/update',
    { organizationId, documents: [{ documentId, metadata: { owner: 'jane' } }] },
    headers,
  );
  for (const users of chunks(range(counts.members, 'member-'), 100)) {
    await must(
      call,
      '/v2/users/add',
      {
        organizationId,
        documentId,
        users: users.map((userId, i) => ({
          userId,
          name: `Member ${userId}`,
          accessRole: i % 2 === 0 ? 'editor' : 'viewer',
        })),
      },
      headers,
    );
  }
  for (const userId of range(counts.grants, 'granted-')) {
    await must(
      call,
      '/v2/auth/permissions/add',
      {
        user: { userId },
        permissions: { resources: [{ type: 'document', id: documentId, organizationId, accessRole: 'viewer' }] },
      },
      headers,
    );
  }
  await must(
    call,
    '/v2/notifications/config/set',
    { organizationId, userIds: ['member-00000'], documentIds: [documentId], config: { inbox: 'MINE' } },
    headers,
  );
  for (const [i, editorId] of range(counts.editors, 'editor-').entries()) {
    await must(
      call,
      '/v2/crdt/add',
      {
        organizationId,
        documentId,
        editorId,
        type: 'text',
        data: `${i}`.padEnd(counts.editorBytes, 'x'),
        userId: 'member-00000',
      },
      headers,
    );
  }
  await must(call, '/v2/workspace/activityconfig/update', { activityServiceConfig: { isEnabled: true } }, headers);
  for (const ids of chunks(range(counts.notifications, 'ntf-'), 20)) {
    await Promise.all(
      ids.map((notificationId) =>
        must(
          call,
          '/v2/notifications/add',
          {
            organizationId,
            documentId,
            notificationId,
            locationId: 'loc-1',
            actionUser: { userId: 'member-00001' },
            displayHeadlineMessageTemplate: `Update ${notificationId}`,
            notifyUsers: [{ userId: 'member-00000' }, { userId: 'member-00002' }],
          },
          headers,
        ),
      ),
    );
  }
  await must(
    call,
    '/v2/notifications/update',
    {
      organizationId,
      notifications: [{ id: 'ntf-00000', readByUserIds: ['member-00002'], persistReadForUsers: true }],
    },
    headers,
  );
  for (const ids of chunks(range(counts.activities, 'act-'), 100)) {
    await must(
      call,
      '/v2/activities/add',
      {
        organizationId,
        documentId,
        activities: ids.map((id) => ({
          id,
          featureType: 'comment',
          actionType: 'comment.add',
          actionUser: { userId: 'member-00000' },
          targetEntityId: 'thread-1',
          entityData: { text: `comment ${id}` },
        })),
      },
      headers,
    );
  }
  for (const ids of chunks(range(counts.recordings, 'rec-'), 100)) {
    await must(
      call,
      '/v2/recordings/add',
      {
        organizationId,
        documentId,
        recordings: ids.map((annotationId) => ({
          annotationId,
          displayName: `Recording ${annotationId}`,
          recordedTime: { duration: 12, display: '00:12' },
        })),
      },
      headers,
    );
  }
}

/** Every value equal to `documentId`, anywhere in `value`, replaced by `<document>`: data read under either id compares equal. */
function withoutDocumentId(value: unknown, documentId: string): unknown {
  if (value === documentId) return '<document>';
  if (Array.isArray(value)) return value.map((v) => withoutDocumentId(v, documentId));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutDocumentId(v, documentId)]));
  }
  return value;
}

/** Reads every page of a paginated operation, following `pageToken` or `nextPageToken`. */
async function allPages(
  call: Call,
  path: string,
  data: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<unknown[]> {
  const items: unknown[] = [];
  let token: string | undefined;
  do {
    const body = await must(call, path, { ...data, ...(token === undefined ? {} : { pageToken: token }) }, headers);
    items.push(...(body.result?.data as unknown[]));
    token = (body.result?.pageToken ?? body.result?.nextPageToken) as string | undefined;
  } while (token !== undefined);
  return items;
}

/**
 * Everything of the document as the API shows it, with the document id itself replaced: the view of a seeded
 * document before a migration equals the view of the new id after it.
 */
export async function readDocument(
  call: Call,
  headers: Record<string, string>,
  organizationId: string,
  documentId: string,
  counts: SeedCounts = SMALL_SEED,
) {
  const byDocument = { organizationId, documentId };
  const grantHolders = Array.from({ length: counts.grants }, (_, i) => `granted-${String(i).padStart(5, '0')}`);
  const view = {
    document: (
      await must(call, '/v2/organizations/documents/get', { organizationId, documentIds: [documentId] }, headers)
    ).result?.data,
    members: await allPages(call, '/v2/users/get', byDocument, headers),
    grants: await Promise.all(
      grantHolders.map(async (userId) => {
        const grants = (await must(call, '/v2/auth/permissions/get', { userId, organizationId }, headers)).result
          ?.data as Array<{ id: string }>;
        return grants.filter((grant) => grant.id === documentId);
      }),
    ),
    settings: (
      await must(
        call,
        '/v2/notifications/config/get',
        { organizationId, userId: 'member-00000', documentIds: [documentId] },
        headers,
      )
    ).result?.data,
    crdt: (await must(call, '/v2/crdt/get', byDocument, headers)).result?.data,
    notifications: await allPages(call, '/v2/notifications/get', byDocument, headers),
    feed: await allPages(call, '/v2/notifications/get', { ...byDocument, userId: 'member-00000' }, headers),
    activities: await allPages(call, '/v2/activities/get', { ...byDocument, order: 'asc' }, headers),
    recordings: await allPages(call, '/v2/recordings/get', byDocument, headers),
  };
  return withoutDocumentId(view, documentId) as typeof view;
}
