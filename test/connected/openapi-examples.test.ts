/**
 * The examples of openapi.json (issue 13): one request and one response per operation, recorded here from real
 * calls in one workspace, in an order that makes each meaningful, and committed as docs/openapi-examples.json
 * (which openapi/document.ts puts into the document). Values the server makes up (ids, tokens, page tokens,
 * timestamps) are replaced by fixed placeholders of the same type, so a run records the same file every time.
 *
 * The test fails when the recorded examples differ from the committed file; `UPDATE_OPENAPI_EXAMPLES=1` rewrites
 * the file instead (then `npm run openapi`).
 *
 * @table-stream
 */
import * as Y from 'yjs';
import { RSA_2048_PUBLIC_KEY } from '../support/rsa-keys';
import { readFileSync, writeFileSync } from 'node:fs';
import { EXAMPLES_FILE, type OperationExample } from '../../openapi/document';
import { routes } from '../../shared/routes';
import { invokeRoute } from '../support/invoke';
import { TIME_ORDERED_ID_BODY, timeOrderedId } from '../../shared/core/ids';
import { startPipeline, startReceiver, type Pipeline, type Receiver } from '../support/webhook-pipeline';

/** The size of the example editor's version (its state's bytes), whatever the client id's length. */
const VERSION_EXAMPLE_SIZE = 51;

/** Every timestamp (epoch milliseconds) becomes this one: 2026-01-01T00:00:00Z. */
const EXAMPLE_TIME = 1767225600000;

/** A server-made id: a kind prefix and hex (shared/crypto/tokens.ts `newId`, shared/db/profile.ts user ids). */
const ID = /^([a-z]+_)[0-9a-f]{24,}$/;

/** A time-ordered id (shared/core/ids.ts, the webhook endpoints' `ep_…`): a prefix and 26 Crockford base32 characters. */
const TIME_ORDERED_ID = new RegExp(`^([a-z]+_)${TIME_ORDERED_ID_BODY}$`);

/** Placeholders keep the form of a time-ordered id (request schemas check it): EXAMPLE_TIME, then the number. */
const timeOrderedPlaceholder = (n: number) =>
  `${timeOrderedId('', EXAMPLE_TIME).slice(0, 10)}${String(n).padStart(16, '0')}`;

/** Server-made values, each kind recognized by its form (shared/crypto/tokens.ts) or by the field that holds it. */
const VOLATILE_STRINGS: Array<{
  kind: string;
  matches: (value: string, key: string) => boolean;
  placeholder: (n: number) => string;
}> = [
  {
    kind: 'page token',
    matches: (_, key) => key === 'nextPageToken' || key === 'pageToken',
    placeholder: (n) => `page-token-EXAMPLE${n}`,
  },
  { kind: 'id', matches: (value) => ID.test(value), placeholder: (n) => `EXAMPLE${n}` },
  {
    kind: 'secret token',
    matches: (value) => /^[A-Za-z0-9_-]{43}$/.test(value),
    placeholder: (n) => `token-EXAMPLE${n}`,
  },
  { kind: 'time-ordered id', matches: (value) => TIME_ORDERED_ID.test(value), placeholder: timeOrderedPlaceholder },
  // A webhook signing secret keeps its form: whsec_ and the base64 of 24 bytes.
  {
    kind: 'webhook secret',
    matches: (value) => /^whsec_[A-Za-z0-9+/]{32}$/.test(value),
    placeholder: (n) => `whsec_${Buffer.from(`EXAMPLE-secret-${n}`.padEnd(24, '.')).toString('base64')}`,
  },
  // A comment anchor's relative positions name the random client id of the Y.Doc the server wrote the editor with:
  // shown as positions of client 1 (still base64 of Y.encodeRelativePosition).
  {
    kind: 'relative position',
    matches: (value, key) => (key === 'from' || key === 'to') && /^[A-Za-z0-9+/]+=*$/.test(value),
    placeholder: (n) =>
      Buffer.from(Y.encodeRelativePosition(new Y.RelativePosition(null, null, Y.createID(1, n)))).toString('base64'),
  },
  // What encryption makes fresh for every message (a webhook payload under encryptData).
  {
    kind: 'ciphertext',
    matches: (_, key) => key === 'encryptedData' || key === 'encryptedKey' || key === 'iv',
    placeholder: (n) => Buffer.from(`EXAMPLE-ciphertext-${n}`).toString('base64'),
  },
  // A live-sync session token (shared/db/live-token.ts): a signed payload that names the key and an expiry.
  {
    kind: 'live session token',
    matches: (value, key) => key === 'token' && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(value),
    placeholder: (n) => `live-token-EXAMPLE${n}`,
  },
  {
    kind: 'date',
    matches: (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(value),
    placeholder: () => new Date(EXAMPLE_TIME).toISOString(),
  },
];

const isTimestamp = (value: number) =>
  Number.isInteger(value) && value > 1_500_000_000_000 && value < 3_000_000_000_000;

/**
 * Replaces volatile values by placeholders: the same value by the same placeholder everywhere (an id a response
 * made and a later request sends), each distinct value by its own, numbered in the order first met. An id keeps
 * its prefix (`ws_EXAMPLE1`), a timestamp stays an integer.
 */
function normalizer(): (value: unknown, key?: string) => unknown {
  const seen = new Map<string, string>();
  const counts = new Map<string, number>();
  const replace = (value: string, key: string): string => {
    const known = seen.get(value);
    if (known !== undefined) return known;
    // A backwards iterator is `-` and an id: the same placeholder as the id, after its `-`.
    if (value.startsWith('-') && TIME_ORDERED_ID.test(value.slice(1))) return `-${replace(value.slice(1), key)}`;
    const volatile = VOLATILE_STRINGS.find((candidate) => candidate.matches(value, key));
    // The test's receiver listens on a port of the day: its URL is shown as the example endpoint's host.
    if (/^http:\/\/127\.0\.0\.1:\d+\//.test(value))
      return value.replace(/^http:\/\/127\.0\.0\.1:\d+/, 'https://hooks.example.com');
    if (volatile === undefined) return value;
    const prefix =
      (volatile.kind === 'id'
        ? ID.exec(value)?.[1]
        : volatile.kind === 'time-ordered id'
          ? TIME_ORDERED_ID.exec(value)?.[1]
          : undefined) ?? '';
    const counter = `${volatile.kind} ${prefix}`;
    const n = (counts.get(counter) ?? 0) + 1;
    counts.set(counter, n);
    const placeholder = `${prefix}${volatile.placeholder(n)}`;
    seen.set(value, placeholder);
    return placeholder;
  };
  const normalize = (value: unknown, key = ''): unknown => {
    if (typeof value === 'string') return replace(value, key);
    if (typeof value === 'number') return isTimestamp(value) ? EXAMPLE_TIME : key === 'durationMs' ? 120 : value;
    if (Array.isArray(value)) return value.map((item) => normalize(item, key));
    if (value === null || typeof value !== 'object') return value;
    // A version's size counts the varint of that random client id (1 to 5 bytes): shown as with a 4-byte one.
    const { size } = value as { size?: unknown };
    if ('versionId' in value && typeof size === 'number' && size !== VERSION_EXAMPLE_SIZE)
      return normalize({ ...value, size: VERSION_EXAMPLE_SIZE }, key);
    return Object.fromEntries(
      Object.entries(value).map(([name, inner]) => [replace(name, ''), normalize(inner, name)]),
    );
  };
  return normalize;
}

const valueAt = (body: unknown, path: Array<string | number>): unknown =>
  path.reduce<unknown>(
    (node, key) =>
      node !== null && typeof node === 'object'
        ? Object.entries(node).find(([name]) => name === String(key))?.[1]
        : undefined,
    body,
  );

/** The string at `path` in a response body, or a clear failure. */
function stringAt(body: unknown, ...path: Array<string | number>): string {
  const value = valueAt(body, path);
  if (typeof value !== 'string') throw new Error(`No string at ${path.join('.')} in ${JSON.stringify(body)}`);
  return value;
}

const ORG = 'acme';
const DOC = 'roadmap-2026';
const PROVIDER_KEY = 'sk-example-openai-key';
const MATTER = 'Rename the checkout button to "Pay now"';

// Webhook messages and attempts need the event pipeline (without the migration worker, so the migration example
// stays `pending`) and a receiver that answers.
let pipeline: Pipeline;
let receiver: Receiver;
beforeAll(async () => {
  pipeline = await startPipeline({ migrations: false });
  receiver = await startReceiver(() => 204, '/collab');
});
afterAll(async () => {
  await pipeline.stop();
  await receiver.close();
});

describe('the OpenAPI examples', () => {
  it('are recorded from a real call of every operation, all answered 200, and equal the committed docs/openapi-examples.json', async () => {
    // The first call of each path is its example; a later one only sets up another.
    const recorded = new Map<string, OperationExample>();
    const call = async (path: string, data: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const response = await invokeRoute(path, data, { headers });
      if (response.statusCode !== 200)
        throw new Error(`POST ${path} answered ${response.statusCode}: ${JSON.stringify(response.body)}`);
      if (!recorded.has(path)) recorded.set(path, { request: data, response: response.body });
      return response.body;
    };

    // The workspace, its keys and credentials.
    const workspace = await call('/v2/workspace/create', { ownerEmail: 'owner@example.com', workspaceName: 'Acme' });
    const workspaceHeaders = {
      'x-service-workspace-id': stringAt(workspace, 'result', 'data', 'id'),
      'x-service-workspace-auth-token': stringAt(workspace, 'result', 'data', 'authToken'),
    };
    const created = await call(
      '/v2/workspace/apikey/create',
      { apiKeyName: 'Staging', type: 'testing', createAuthToken: true },
      workspaceHeaders,
    );
    await call('/v2/workspace/apikeys/get', { pageSize: 10 }, workspaceHeaders);
    await call(
      '/v2/workspace/authtoken/reset',
      { apiKey: stringAt(created, 'result', 'data', 'apiKey') },
      workspaceHeaders,
    );
    const apiKey = Object.keys(Object(valueAt(workspace, ['result', 'data', 'apiKeyList'])))[0];
    const tokens = await call('/v2/workspace/authtokens/get', { apiKey }, workspaceHeaders);
    const h = {
      'x-service-api-key': apiKey,
      'x-service-auth-token': stringAt(tokens, 'result', 'data', 'authTokens', 0, 'token'),
    };

    // Workspace configurations.
    await call(
      '/v2/workspace/activityconfig/update',
      { activityServiceConfig: { isEnabled: true, triggers: { comment: { 'comment.reaction_add': false } } } },
      h,
    );
    await call('/v2/workspace/activityconfig/get', {}, h);
    await call(
      '/v2/workspace/emailconfig/update',
      {
        useEmailService: true,
        emailServiceConfig: {
          type: 'sendgrid',
          apiKey: 'SG.example-key',
          fromEmail: 'notifications@example.com',
          fromCompany: 'Acme',
        },
      },
      h,
    );
    await call('/v2/workspace/emailconfig/get', {}, h);
    // Notification emails then go to the local mailbox (this tier's SendGrid address is a closed port), so the email
    // log's example shows one sent.
    await invokeRoute('/v2/workspace/emailconfig/update', { emailServiceConfig: { type: 'default' } }, { headers: h });
    await call(
      '/v2/workspace/apikeyconfig/update',
      { aiModelApiKey: [{ provider: 'openai', customerApiKey: PROVIDER_KEY }] },
      h,
    );
    await call('/v2/workspace/apikeyconfig/get', {}, h);
    await call(
      '/v2/workspace/advancedwebhookconfig/update',
      { isEnabled: true, encryptData: true, publicKey: RSA_2048_PUBLIC_KEY },
      h,
    );
    await call('/v2/workspace/advancedwebhookconfig/get', {}, h);
    const webhookEndpoint = {
      url: 'https://hooks.example.com/collab',
      description: 'Comment events for the support inbox',
      filterTypes: ['comment.add', 'comment_annotation.status_change'],
      channels: [ORG],
      rateLimit: 20,
      uid: 'support-inbox',
      metadata: { team: 'support' },
    };
    const endpointId = stringAt(
      await call('/v2/workspace/advancedwebhook/endpoints/create', webhookEndpoint, h),
      'result',
      'data',
      'id',
    );
    const secondEndpoint = stringAt(
      await call('/v2/workspace/advancedwebhook/endpoints/create', { url: 'https://hooks.example.com/audit' }, h),
      'result',
      'data',
      'id',
    );
    await call('/v2/workspace/advancedwebhook/endpoints/get', { limit: 1, iterator: endpointId }, h);
    await call(
      '/v2/workspace/advancedwebhook/endpoints/update',
      { endpointId, description: 'Every comment event', filterTypes: null },
      h,
    );
    await call('/v2/workspace/advancedwebhook/endpoints/secret/get', { endpointId }, h);
    await call('/v2/workspace/advancedwebhook/endpoints/secret/rotate', { endpointId }, h);
    await call('/v2/workspace/advancedwebhook/endpoints/delete', { endpointId: secondEndpoint }, h);
    // From here on the example endpoint rests, and notifications go to the test's receiver.
    await invokeRoute('/v2/workspace/advancedwebhook/endpoints/update', { endpointId, disabled: true }, { headers: h });
    const created2 = await invokeRoute(
      '/v2/workspace/advancedwebhook/endpoints/create',
      { url: receiver.url, filterTypes: ['notification.add'] },
      { headers: h },
    );
    const receiverEndpoint = stringAt(created2.body, 'result', 'data', 'id');

    // Users, permissions, groups.
    const people = [
      { userId: 'ann', name: 'Ann Lee', email: 'ann@example.com', accessRole: 'editor' },
      { userId: 'bob', name: 'Bob Stone', email: 'bob@example.com', accessRole: 'viewer' },
      { userId: 'cy', name: 'Cy Park', email: 'cy@example.com' },
      { userId: 'dee', name: 'Dee Ray' },
      { userId: 'eve', name: 'Eve Moss' },
    ];
    await call('/v2/users/add', { organizationId: ORG, createOrganization: true, users: people }, h);
    await call(
      '/v2/users/update',
      { organizationId: ORG, users: [{ userId: 'bob', name: 'Bob Stone', accessRole: 'editor' }] },
      h,
    );
    await call('/v2/users/delete', { organizationId: ORG, userIds: ['dee'] }, h);
    await call('/v1/users/delete', { organizationId: ORG, userIds: ['eve'] }, h);
    await call('/v2/users/get', { organizationId: ORG, pageSize: 2 }, h);
    const resources = [{ type: 'document', id: DOC, organizationId: ORG, accessRole: 'editor', expiresAt: 1893456000 }];
    await call('/v2/auth/permissions/add', { user: { userId: 'cy' }, permissions: { resources } }, h);
    await call('/v2/auth/permissions/get', { userId: 'cy', organizationId: ORG }, h);
    await call(
      '/v2/auth/permissions/remove',
      { userId: 'cy', permissions: { resources: [{ type: 'document', id: DOC, organizationId: ORG }] } },
      h,
    );
    await call(
      '/v2/organizations/usergroups/add',
      { organizationId: ORG, organizationUserGroups: [{ groupId: 'design', groupName: 'Design team' }] },
      h,
    );
    await call(
      '/v2/organizations/usergroups/users/add',
      { organizationId: ORG, organizationUserGroupId: 'design', userIds: ['ann', 'bob'] },
      h,
    );
    await call(
      '/v2/organizations/usergroups/users/delete',
      { organizationId: ORG, organizationUserGroupId: 'design', userIds: ['bob'] },
      h,
    );

    // Documents.
    await call(
      '/v2/organizations/documents/add',
      {
        organizationId: ORG,
        documents: [
          { documentId: DOC, documentName: 'Roadmap 2026', accessType: 'organizationPrivate' },
          { documentId: 'draft-2025', documentName: 'Roadmap draft', accessType: 'restricted' },
        ],
      },
      h,
    );
    await call(
      '/v2/organizations/documents/update',
      {
        organizationId: ORG,
        documents: [{ documentId: DOC, documentName: 'Roadmap 2026 (final)', metadata: { owner: 'ann' } }],
      },
      h,
    );
    await call('/v2/organizations/documents/get', { organizationId: ORG, documentIds: [DOC] }, h);
    await call(
      '/v2/organizations/documents/access/disablestate/update',
      { organizationId: ORG, documentIds: ['draft-2025'], disabled: true },
      h,
    );
    await call(
      '/v1/organizations/documents/access/disablestate/update',
      { organizationId: ORG, documentIds: ['draft-2025'], disabled: false },
      h,
    );

    // Notifications.
    const notification = {
      organizationId: ORG,
      documentId: DOC,
      actionUser: { userId: 'ann', name: 'Ann Lee' },
      displayHeadlineMessageTemplate: '{{actionUser}} mentioned you in {{document}}',
      displayHeadlineMessageTemplateData: { actionUser: { name: 'Ann Lee' }, document: 'Roadmap 2026' },
      displayBodyMessage: 'Can you review the Q3 milestones?',
      notifyUsers: [{ userId: 'bob' }],
    };
    const notificationId = stringAt(
      await call('/v2/notifications/add', notification, h),
      'result',
      'data',
      'notificationId',
    );
    const another = stringAt(
      await call('/v2/notifications/add', { ...notification, displayBodyMessage: 'And the Q4 ones?' }, h),
      'result',
      'data',
      'notificationId',
    );
    await call('/v2/notifications/get', { organizationId: ORG, documentId: DOC, userId: 'bob', order: 'desc' }, h);
    // Both notifications' messages delivered: the webhook message and attempt operations.
    await receiver.waitFor(2);
    for (let tries = 0; tries < 200; tries += 1) {
      const attempts = await invokeRoute(
        '/v2/workspace/advancedwebhook/attempts/get',
        { endpointId: receiverEndpoint },
        { headers: h },
      );
      if ((attempts.body.result?.data as unknown[] | undefined)?.length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The newest message, whichever of the two the receiver happened to get last.
    const messageId = stringAt(
      await call('/v2/workspace/advancedwebhook/messages/get', { eventTypes: ['notification.add'], pageSize: 1 }, h),
      'result',
      'data',
      0,
      'id',
    );
    await call('/v2/workspace/advancedwebhook/attempts/get', { messageId }, h);
    await call('/v2/workspace/advancedwebhook/messages/resend', { messageId, endpointId: receiverEndpoint }, h);
    await call(
      '/v2/workspace/advancedwebhook/endpoints/recover',
      { endpointId: receiverEndpoint, since: Date.now() - 60 * 60 * 1000 },
      h,
    );
    // The email log: the email the first notification gave bob, sent into the local mailbox (see below).
    for (let tries = 0; tries < 200; tries += 1) {
      const log = await invokeRoute('/v2/workspace/emails/get', { notificationId }, { headers: h });
      if ((log.body.result?.data as Array<{ status: string }> | undefined)?.[0]?.status === 'sent') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await call('/v2/workspace/emails/get', { notificationId, pageSize: 10 }, h);
    await call(
      '/v2/notifications/update',
      { organizationId: ORG, documentId: DOC, notifications: [{ id: notificationId, readByUserIds: ['bob'] }] },
      h,
    );
    await call(
      '/v2/notifications/config/set',
      { organizationId: ORG, userIds: ['bob'], documentIds: [DOC], config: { inbox: 'MINE', email: 'NONE' } },
      h,
    );
    await call('/v2/notifications/config/get', { organizationId: ORG, userId: 'bob', documentIds: [DOC] }, h);
    await call(
      '/v2/notifications/delete',
      { organizationId: ORG, documentId: DOC, notificationIds: [notificationId] },
      h,
    );
    await call('/v1/notifications/delete', { organizationId: ORG, documentId: DOC, notificationIds: [another] }, h);

    // Activities: judgments on a suggestion, which Suggest Decision reads at the end.
    const judgment = (id: string, userId: string, accepted: boolean) => ({
      id,
      featureType: 'comment',
      actionType: accepted ? 'comment_annotation.suggestion_accept' : 'comment_annotation.suggestion_reject',
      actionUser: { userId },
      targetEntityId: 'comment-42',
      entityTargetData: { suggestion: MATTER },
      entityData: { reason: accepted ? 'Clearer call to action' : 'Too pushy' },
      displayMessageTemplate: `{{actionUser}} ${accepted ? 'accepted' : 'rejected'} a suggestion`,
    });
    await call(
      '/v2/activities/add',
      {
        organizationId: ORG,
        documentId: DOC,
        activities: [judgment('act-1', 'ann', true), judgment('act-2', 'bob', true), judgment('act-3', 'cy', false)],
      },
      h,
    );
    await call('/v2/activities/get', { organizationId: ORG, documentId: DOC, activityIds: ['act-1'] }, h);

    // Editor data.
    await call(
      '/v2/crdt/add',
      { organizationId: ORG, documentId: DOC, editorId: 'title', type: 'text', data: 'Roadmap 2026', userId: 'ann' },
      h,
    );
    await call(
      '/v2/crdt/update',
      {
        organizationId: ORG,
        documentId: DOC,
        editorId: 'title',
        type: 'text',
        data: 'Roadmap 2026: Q3',
        userId: 'ann',
      },
      h,
    );
    await call('/v2/crdt/get', { organizationId: ORG, documentId: DOC, editorId: 'title', format: 'json' }, h);
    // Versions of the title (decisions §14): one kept, listed, restored, deleted.
    const version = await call(
      '/v2/crdt/versions/create',
      { organizationId: ORG, documentId: DOC, editorId: 'title', name: 'Before review', userId: 'ann' },
      h,
    );
    const versionId = stringAt(version, 'result', 'data', 'versionId');
    await call('/v2/crdt/versions/get', { organizationId: ORG, documentId: DOC, editorId: 'title', pageSize: 20 }, h);
    const restored = await call(
      '/v2/crdt/versions/restore',
      { organizationId: ORG, documentId: DOC, editorId: 'title', versionId, userId: 'ann' },
      h,
    );
    await call(
      '/v2/crdt/versions/delete',
      {
        organizationId: ORG,
        documentId: DOC,
        editorId: 'title',
        versionId: stringAt(restored, 'result', 'data', 'versionId'),
      },
      h,
    );
    // A live session for ann on a new editor, created empty by the authorize (`type`).
    await call(
      '/v2/crdt/live/authorize',
      { organizationId: ORG, documentId: DOC, editorId: 'body', userId: 'ann', type: 'xml', expiresIn: 3600 },
      h,
    );

    // Recordings.
    const attachment = {
      attachmentId: 1,
      url: 'https://cdn.example.com/r/1.webm',
      mimeType: 'video/webm',
      name: '1.webm',
      type: 'video',
      size: 204800,
    };
    const recording = {
      annotationId: 'rec-1',
      type: 'recorder',
      recordingType: 'screen',
      recordedTime: { duration: 12500, display: '00:12' },
      displayName: 'Ann Lee',
      attachments: [attachment],
    };
    await call('/v2/recordings/add', { organizationId: ORG, documentId: DOC, recordings: [recording] }, h);
    await call('/v2/recordings/get', { organizationId: ORG, documentId: DOC, recordingIds: ['rec-1'] }, h);

    // Comments (decisions §16): a thread anchored in the title, a reply, its edit, resolution, read state, counts.
    const scope = { organizationId: ORG, documentId: DOC };
    await call(
      '/v2/commentannotations/add',
      {
        ...scope,
        commentAnnotations: [
          {
            annotationId: 'thread-1',
            anchor: { editorId: 'title', index: 0, length: 7 },
            location: { id: 'intro', locationName: 'Introduction' },
            commentData: [
              {
                commentId: 1,
                commentHtml: '<p>Should this say <b>2027</b>? <span data-user-id="ben">@Ben</span></p>',
                from: { userId: 'ann', name: 'Ann Lee' },
                taggedUserContacts: [{ userId: 'ben' }],
              },
            ],
          },
        ],
      },
      h,
    );
    await call(
      '/v2/commentannotations/comments/add',
      { ...scope, annotationId: 'thread-1', commentData: [{ commentText: 'No, 2026.', from: { userId: 'ben' } }] },
      h,
    );
    await call(
      '/v2/commentannotations/comments/update',
      { ...scope, annotationId: 'thread-1', commentIds: [2], updatedData: { commentText: 'No, 2026 is right.' } },
      h,
    );
    await call('/v2/commentannotations/comments/get', { ...scope, annotationId: 'thread-1' }, h);
    await call(
      '/v2/commentannotations/update',
      {
        ...scope,
        annotationIds: ['thread-1'],
        updatedData: { status: { id: 'RESOLVED', name: 'Resolved', type: 'terminal' } },
      },
      h,
    );
    await call('/v2/commentannotations/read', { ...scope, annotationIds: ['thread-1'], userId: 'ann' }, h);
    await call('/v2/commentannotations/count', { organizationId: ORG, documentIds: [DOC], userId: 'carl' }, h);
    await call('/v2/commentannotations/get', { ...scope, pageSize: 10 }, h);
    await call(
      '/v2/commentannotations/add',
      {
        ...scope,
        commentAnnotations: [
          { annotationId: 'thread-2', commentData: [{ commentText: 'Typo?', from: { userId: 'ann' } }] },
        ],
      },
      h,
    );
    await call('/v2/commentannotations/comments/delete', { ...scope, annotationId: 'thread-2', commentIds: [1] }, h);
    await call(
      '/v2/commentannotations/add',
      {
        ...scope,
        commentAnnotations: [
          { annotationId: 'thread-3', commentData: [{ commentText: 'Later.', from: { userId: 'ben' } }] },
        ],
      },
      h,
    );
    await call('/v2/commentannotations/delete', { ...scope, annotationIds: ['thread-3'] }, h);

    // Migration of the draft into a new id (only started here: the migration runs from the table's stream).
    const migration = await call(
      '/v2/organizations/documents/migrate',
      { organizationId: ORG, documentId: 'draft-2025', newDocumentId: 'draft-2026' },
      h,
    );
    await call(
      '/v2/organizations/documents/migrate/status',
      { organizationId: ORG, migrationId: stringAt(migration, 'result', 'data', 'migrationId') },
      h,
    );

    // Ask AI, answered by the fake providers of the connected global setup; Suggest Decision, from the judgments.
    await call(
      '/v2/rewriter/ask-ai',
      { model: 'gpt-4o', prompt: 'Rewrite the text in a friendly tone.', text: 'The meeting moved to 3 pm.' },
      h,
    );
    await call('/v2/memory/suggest', { query: 'rename the checkout button', organizationId: ORG, documentId: DOC }, h);

    const normalize = normalizer();
    const examples = Object.fromEntries(
      routes.map(({ path }) => {
        const example = recorded.get(path);
        if (example === undefined) throw new Error(`No example recorded for POST ${path}: call it in this test.`);
        return [path, { request: normalize(example.request), response: normalize(example.response) }];
      }),
    );
    const text = `${JSON.stringify(examples, null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI_EXAMPLES === '1') writeFileSync(EXAMPLES_FILE, text);
    const committed = readFileSync(EXAMPLES_FILE, 'utf8');
    if (committed !== text) {
      const differing = routes
        .map(({ path }) => path)
        .filter((path) => JSON.stringify(JSON.parse(committed)[path]) !== JSON.stringify(examples[path]));
      throw new Error(
        `docs/openapi-examples.json differs from the recorded examples (${differing.join(', ') || 'formatting'}). ` +
          'If the change is intended: UPDATE_OPENAPI_EXAMPLES=1 npx jest test/connected/openapi-examples.test.ts --selectProjects connected, then npm run openapi.',
      );
    }
    expect(Object.keys(examples)).toHaveLength(routes.length);
  });
});
