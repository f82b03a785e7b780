/**
 * Revocation that does not wait for the connection to speak (decisions §13 "Nothing lost, nothing stale"): a REST
 * change that removes or lowers access reaches a SILENT live connection through the table's stream. The socket
 * handlers run under API Gateway's rules with a recording Management API (as in live-handlers.test.ts); the REST
 * changes go through their routes; the changes reader of the stack (functions/workers/stream-changes.ts, every
 * consumer under its own grants, as the local stack runs it) is fed by the local stream poller. No connection sends
 * anything after it opened: only the stream can reach it.
 *
 * @table-stream
 */
import type { DynamoDBStreamEvent } from 'aws-lambda';
import * as Y from 'yjs';
import { consumers as changesConsumers } from '../../functions/workers/stream-changes';
import { runAsWorker } from '../../local/grant-check';
import { startStreamPoller, type StreamPoller } from '../../local/stream-poller';
import { getEditor } from '../../shared/db/crdt';
import { streamHandler } from '../../shared/domain/stream/dispatch';
import { encodeFrames } from '../../shared/domain/live/framing';
import { updateMessage } from '../../shared/domain/live/protocol';
import { streamChangesWorker } from '../../shared/workers';
import { newTenant, type Tenant } from '../support/fixtures';
import { callSocket, closedByService, deleted, lambdaContext, messagesTo, openLiveRoom } from '../support/live-harness';
import { waitFor } from '../support/wait';

/** Revocation is expected within seconds; a ceiling of a minute is for a machine many times slower, not a budget. */
const REVOKED_WITHIN = { ceilingMs: 60_000 };

let poller: StreamPoller;
let tenant: Tenant;

beforeAll(async () => {
  tenant = await newTenant();
  // The changes reader as the local stack runs it: its consumers from its entry, each under its own grants.
  const reader = streamHandler(streamChangesWorker, changesConsumers, (consumer, fn) => runAsWorker(consumer, fn));
  poller = await startStreamPoller({
    endpoint: process.env.DYNAMODB_ENDPOINT as string,
    tableName: process.env.TABLE_NAME as string,
    idleMs: 50,
    workers: [{ worker: streamChangesWorker, handler: (event: DynamoDBStreamEvent) => reader(event, lambdaContext) }],
  });
});

afterAll(async () => {
  await poller.stop();
});

const openRoom = () => openLiveRoom(tenant);

describe("revocation of a silent live connection through the table's stream", () => {
  it('closes the connections of a user removed from the organization, and only theirs', async () => {
    const { ids, rest, open, roomEntry } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');

    await rest('/v2/users/delete', { organizationId: ids.organizationId, userIds: ['bob'] });

    await waitFor(async () => closedByService(bob) && (await roomEntry(bob))?.revoked === true, {
      ...REVOKED_WITHIN,
      what: "Bob's connection closed and its entry revoked",
    });
    expect(messagesTo(bob).map((message) => message.kind)).toEqual(['auth']);
    expect(deleted).not.toContain(ann);
    expect(await roomEntry(ann)).toBeDefined();
  });

  it('closes every connection of a document that is disabled', async () => {
    const { ids, rest, open, roomEntry } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');

    await rest('/v2/organizations/documents/access/disablestate/update', {
      organizationId: ids.organizationId,
      documentIds: [ids.documentId],
      disabled: true,
    });

    await waitFor(
      async () =>
        closedByService(ann) &&
        closedByService(bob) &&
        (await roomEntry(ann))?.revoked === true &&
        (await roomEntry(bob))?.revoked === true,
      {
        ...REVOKED_WITHIN,
        what: 'both connections closed and removed',
      },
    );
  });

  it('closes the connection of a user whose only access, a document permission, is removed', async () => {
    const { ids, rest, open, roomEntry } = await openRoom();
    await rest('/v2/auth/permissions/add', {
      user: { userId: 'cy' },
      permissions: {
        resources: [{ type: 'document', id: ids.documentId, organizationId: ids.organizationId, accessRole: 'editor' }],
      },
    });
    const cy = await open('cy');

    await rest('/v2/auth/permissions/remove', {
      userId: 'cy',
      permissions: { resources: [{ type: 'document', id: ids.documentId, organizationId: ids.organizationId }] },
    });

    await waitFor(async () => closedByService(cy) && (await roomEntry(cy))?.revoked === true, {
      ...REVOKED_WITHIN,
      what: "Cy's connection closed and its entry revoked",
    });
  });

  it('makes the connection of an editor lowered to viewer read-only: its updates are neither stored nor relayed', async () => {
    const { ids, rest, open, roomEntry } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');

    await rest('/v2/users/update', {
      organizationId: ids.organizationId,
      users: [{ userId: 'bob', accessRole: 'viewer' }],
    });

    await waitFor(async () => (await roomEntry(bob))?.role === 'viewer', {
      ...REVOKED_WITHIN,
      what: "Bob's connection recorded as a viewer",
    });
    const doc = new Y.Doc();
    doc.getText('content').insert(0, 'Bob may only read');
    await callSocket('$default', bob, { body: encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), 'm1')[0] });
    expect(deleted).not.toContain(bob);
    expect(messagesTo(ann).filter((message) => message.kind === 'update')).toEqual([]);
    expect((await getEditor(tenant.apiKeyId, ids))?.deltas ?? []).toEqual([]);
  });

  it('lowers an editor whose permission is written again as viewer', async () => {
    const { ids, rest, open, roomEntry } = await openRoom();
    const grant = (accessRole: string) =>
      rest('/v2/auth/permissions/add', {
        user: { userId: 'dee' },
        permissions: {
          resources: [{ type: 'document', id: ids.documentId, organizationId: ids.organizationId, accessRole }],
        },
      });
    await grant('editor');
    const dee = await open('dee');
    expect((await roomEntry(dee))?.role).toBe('editor');

    await grant('viewer');

    await waitFor(async () => (await roomEntry(dee))?.role === 'viewer', {
      ...REVOKED_WITHIN,
      what: "Dee's connection recorded as a viewer",
    });
    expect(deleted).not.toContain(dee);
  });

  it('re-checks the connections of a user taken out of a group (groups grant nothing: it stays open, checked anew)', async () => {
    const { ids, rest, open, roomEntry } = await openRoom();
    await rest('/v2/organizations/usergroups/add', {
      organizationId: ids.organizationId,
      organizationUserGroups: [{ groupId: 'design', groupName: 'Design' }],
    });
    await rest('/v2/organizations/usergroups/users/add', {
      organizationId: ids.organizationId,
      organizationUserGroupId: 'design',
      userIds: ['bob'],
    });
    const bob = await open('bob');
    const openedCheck = Number((await roomEntry(bob))?.checkedAt);

    await rest('/v2/organizations/usergroups/users/delete', {
      organizationId: ids.organizationId,
      organizationUserGroupId: 'design',
      userIds: ['bob'],
    });

    await waitFor(async () => Number((await roomEntry(bob))?.checkedAt) > openedCheck, {
      ...REVOKED_WITHIN,
      what: "Bob's connection checked again",
    });
    expect(deleted).not.toContain(bob);
    expect((await roomEntry(bob))?.role).toBe('editor');
  });
});
