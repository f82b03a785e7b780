/**
 * The one route table. Every operation of the API is one entry: its POST path, the handler file that serves it,
 * the authentication level, and what the function may touch (used by the CDK stack for least-privilege grants).
 *
 * The CDK stack makes one function and one route per entry, the local gateway serves the same entries, the
 * OpenAPI document is generated from them, and a test fails when a handler file has no entry or an entry no file.
 * This module imports nothing at runtime so that `infra/` can read it without pulling in handler code.
 *
 * Add a route after its area's last entry, never before it: the CDK stack puts an area's routes into nested stacks
 * of ROUTES_PER_STACK in table order (infra/route-stack.ts), and an entry inserted earlier shifts later routes into
 * the next nested stack, which API Gateway refuses while the old stack still holds their route keys.
 */

import type { AccessDeclaration, TableAccess } from './grants';

export type AuthLevel = 'none' | 'workspace' | 'apiKey';

/** Services outside AWS that a handler calls: the stack passes their settings (base URLs) to that function only. */
export type OutboundService = 'ai-providers';

/** What the function may touch (table, indexes, KMS): see shared/grants.ts, which turns it into IAM actions. */
export interface Route extends AccessDeclaration {
  /** The POST path, exactly as served. */
  readonly path: string;
  /** Handler file relative to the project root; it exports `handler`. Several paths may share one file. */
  readonly entry: string;
  readonly auth: AuthLevel;
  readonly table: TableAccess;
  /** Services outside AWS the handler calls; none when omitted. */
  readonly calls?: readonly OutboundService[];
  /** One line: the operation's OpenAPI `summary`. */
  readonly summary: string;
  /**
   * What the operation does, its main fields and limits: the operation's OpenAPI `description`, and the "What" of
   * its row in the endpoint table (docs/endpoints.md, written by `npm run openapi`). Every entry has one (the
   * OpenAPI build fails without it); optional only for the placeholder route the middleware makes for an unserved path.
   */
  readonly description?: string;
  /** Not in docs/api-spec.md: an operation docs/decisions.md adds, marked (ext) there and in the endpoint table. */
  readonly extension?: true;
}

export const routes = [
  {
    path: '/v2/workspace/create',
    entry: 'functions/workspace/create.ts',
    auth: 'none',
    table: 'write',
    kms: ['encrypt'],
    summary: 'Create a workspace with its first testing API key and auth token.',
    description: "create a workspace, its first testing key and that key's token",
  },
  {
    path: '/v2/workspace/apikeys/get',
    entry: 'functions/workspace/apikeys-get.ts',
    auth: 'workspace',
    table: 'read',
    summary: 'List the API keys of the workspace.',
    description: "list the workspace's keys (`apiKeys` filter, `pageSize` ≤ 100, `result.nextPageToken`)",
  },
  {
    path: '/v2/workspace/apikey/create',
    entry: 'functions/workspace/apikey-create.ts',
    auth: 'workspace',
    table: 'write',
    kms: ['encrypt'],
    summary: 'Create a testing API key in the workspace.',
    description: 'create a testing key (`type: "production"` → PERMISSION_DENIED)',
    extension: true,
  },
  {
    path: '/v2/workspace/authtokens/get',
    entry: 'functions/workspace/authtokens-get.ts',
    auth: 'workspace',
    table: 'read',
    kms: ['decrypt'],
    summary: 'Read the auth tokens of one API key of the workspace.',
    description: "read a key's tokens",
    extension: true,
  },
  {
    path: '/v2/workspace/authtoken/reset',
    entry: 'functions/workspace/authtoken-reset.ts',
    auth: 'workspace',
    table: 'write',
    kms: ['encrypt'],
    summary: 'Replace the auth tokens of one API key with a new one.',
    description: "replace a key's tokens with one new token",
    extension: true,
  },
  {
    path: '/v2/workspace/activityconfig/update',
    entry: 'functions/workspace/activityconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Update the activity log configuration (deep merge; defaults seeded on first enable).',
    description: 'deep-merge the activity config; seed defaults on first enable',
  },
  {
    path: '/v2/workspace/activityconfig/get',
    entry: 'functions/workspace/activityconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: 'Read the activity log configuration.',
    description: 'read the activity config (`isEnabled:false` when never set)',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhookconfig/update',
    entry: 'functions/workspace/advancedwebhookconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Update the advanced webhook configuration (partial; the first update must enable it).',
    description: 'partial update of the advanced webhook configuration (`isEnabled`, `encodeData`, `encryptData`, `publicKey`, `enableDataProtection`); the first update must enable it; `encryptData` needs an RSA public key of ≥ 2048 bits',
  },
  {
    path: '/v2/workspace/advancedwebhookconfig/get',
    entry: 'functions/workspace/advancedwebhookconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: 'Read the advanced webhook configuration.',
    description: 'the advanced webhook configuration, defaults when never set',
    extension: true,
  },
  {
    path: '/v2/users/add',
    entry: 'functions/users/add.ts',
    auth: 'apiKey',
    table: 'write',
    // A changed profile's copies on the user's other memberships (gsi1, shared/domain/profile-copies.ts).
    indexes: ['gsi1'],
    summary: 'Add users to an organization, a folder or a document.',
    description: 'add users at organization, folder or document level (≤ 100; creates a missing organization; `createDocument` / `createFolder`)',
  },
  {
    path: '/v2/users/update',
    entry: 'functions/users/update.ts',
    auth: 'apiKey',
    table: 'write',
    // A changed profile's copies on the user's other memberships (gsi1, shared/domain/profile-copies.ts).
    indexes: ['gsi1'],
    summary: 'Update the profile fields and the role of users at one level.',
    description: 'update profile fields and role of users at one level; non-members `success:false`',
  },
  {
    path: '/v2/users/get',
    entry: 'functions/users/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1', 'gsi2'],
    summary: 'List users of an organization, folder, document or all documents, with filters.',
    description: 'users of a level or of all documents, filtered by `userIds` / `organizationUserGroupIds` (≤ 30 each), `result.nextPageToken`',
  },
  {
    path: '/v2/users/delete',
    entry: 'functions/users/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1'],
    summary: 'Remove users from an organization (everything in it), a folder or a document.',
    description: 'remove users from a document or folder, or from the organization with everything they have in it',
  },
  {
    path: '/v1/users/delete',
    entry: 'functions/users/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1'],
    summary: 'Same as /v2/users/delete.',
    description: 'remove users from a document or folder, or from the organization with everything they have in it',
  },
  {
    path: '/v2/auth/permissions/add',
    entry: 'functions/permissions/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Grant a user roles on resources, optionally expiring.',
    description: 'grant roles on resources, optionally expiring (`expiresAt`, seconds)',
  },
  {
    path: '/v2/auth/permissions/get',
    entry: 'functions/permissions/get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: 'Read the active grants of a user.',
    description: "a user's active grants",
    extension: true,
  },
  {
    path: '/v2/auth/permissions/remove',
    entry: 'functions/permissions/remove.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Remove grants of a user on resources.',
    description: 'remove grants',
    extension: true,
  },
  {
    path: '/v2/organizations/usergroups/add',
    entry: 'functions/usergroups/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Create or rename user groups of an organization.',
    description: 'create or rename user groups',
    extension: true,
  },
  {
    path: '/v2/organizations/usergroups/users/add',
    entry: 'functions/usergroups/users-add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Add users to a user group.',
    description: 'add users to a group',
    extension: true,
  },
  {
    path: '/v2/organizations/usergroups/users/delete',
    entry: 'functions/usergroups/users-delete.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Remove users (or all users) from a user group.',
    description: 'remove `userIds`, or all users (`deleteAll`), from a group',
  },
  {
    path: '/v2/organizations/documents/add',
    entry: 'functions/documents/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Add documents to an organization.',
    description: 'add documents (name, folder, access type)',
    extension: true,
  },
  {
    path: '/v2/organizations/documents/get',
    entry: 'functions/documents/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1'],
    summary: 'List or fetch documents of an organization.',
    description: 'documents of an organization, a folder, or by id; `result.pageToken`',
    extension: true,
  },
  {
    path: '/v2/organizations/documents/update',
    entry: 'functions/documents/update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Update document name, folder, access type and metadata.',
    description: 'update name, folder, access type, metadata; unknown `success:false`',
  },
  {
    path: '/v1/organizations/documents/access/disablestate/update',
    entry: 'functions/documents/disablestate-update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Disable or enable documents for every user.',
    description: 'disable or enable documents for every user',
  },
  {
    path: '/v2/organizations/documents/access/disablestate/update',
    entry: 'functions/documents/disablestate-update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Same as the /v1 path.',
    description: 'disable or enable documents for every user',
  },
  {
    path: '/v2/organizations/documents/migrate',
    entry: 'functions/documents/migrate.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Start moving a document and all its data to a new document id.',
    description: 'move a document and everything of it to a new id (`result.data.migrationId`); the stream worker does the move',
  },
  {
    path: '/v2/organizations/documents/migrate/status',
    entry: 'functions/documents/migrate-status.ts',
    auth: 'apiKey',
    table: 'read',
    summary: 'Read the status of a document migration.',
    description: '`{migrationId, status}` (`pending`, `in_progress`, `completed`, `failed` with `error`)',
  },
  {
    path: '/v2/notifications/add',
    entry: 'functions/notifications/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Add (or update) a notification and deliver it to its recipients' feeds.",
    description: "add or update a notification; deliver to `notifyUsers` and, with `notifyAll`, the organization's members; (ext) `eventType` (`<group>.<action>`): its email trigger decides whether the notification is emailed",
    extension: true,
  },
  {
    path: '/v2/notifications/get',
    entry: 'functions/notifications/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1', 'gsi2'],
    summary: "Read notifications of an organization, a document or a user's feed.",
    description: "a user's feed, a document's or the organization's notifications, or named ones; `order`; `result.pageToken`",
    extension: true,
  },
  {
    path: '/v2/notifications/update',
    entry: 'functions/notifications/update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Update notifications and mark them read for users.",
    description: 'update content, mark read (`readByUserIds`, `persistReadForUsers`); unknown `success:false`',
  },
  {
    path: '/v2/notifications/delete',
    entry: 'functions/notifications/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1', 'gsi2', 'gsi3'],
    summary: "Delete notifications selected by filters (or remove them from one user's feed).",
    description: "delete by filters, or (with `userId`) remove from one user's feed",
  },
  {
    path: '/v1/notifications/delete',
    entry: 'functions/notifications/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1', 'gsi2', 'gsi3'],
    summary: "Same as /v2/notifications/delete.",
    description: "delete by filters, or (with `userId`) remove from one user's feed",
  },
  {
    path: '/v2/notifications/config/get',
    entry: 'functions/notifications/config-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: "Read the notification configuration of a user for documents or the organization.",
    description: "a user's inbox/email levels for documents and/or the organization",
  },
  {
    path: '/v2/notifications/config/set',
    entry: 'functions/notifications/config-set.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Set the notification configuration of users.",
    description: "set users' levels at the organization or at documents",
    extension: true,
  },
  {
    path: '/v2/activities/add',
    entry: 'functions/activities/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Add activity log records (all or nothing).",
    description: 'add activity records (≤ 100, all or nothing; needs the activity config enabled)',
  },
  {
    path: '/v2/activities/get',
    entry: 'functions/activities/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi6', 'gsi7', 'gsi8', 'gsi9'],
    summary: "Read activity log records with filters, in time order.",
    description: 'activity records by organization, document, target entity, user, types, ids; `order`; `result.pageToken`',
  },
  {
    path: '/v2/workspace/emailconfig/update',
    entry: 'functions/workspace/emailconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
    summary: "Update the email service configuration (deep merge; defaults seeded on first enable).",
    description: 'deep-merge the email config; seed defaults on first enable; provider key encrypted, returned masked',
  },
  {
    path: '/v2/workspace/emailconfig/get',
    entry: 'functions/workspace/emailconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: "Read the email service configuration (provider key masked).",
    description: 'read the email config (`{useEmailService:false, emailServiceConfig:{}}` when never set)',
    extension: true,
  },
  {
    path: '/v2/workspace/apikeyconfig/update',
    entry: 'functions/workspace/apikeyconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
    summary: "Set or remove the AI provider API keys used by Ask AI (stored encrypted, returned masked).",
    description: 'set or remove AI provider keys (`openai`, `anthropic`, `gemini`), merged per provider; encrypted, returned masked',
    extension: true,
  },
  {
    path: '/v2/workspace/apikeyconfig/get',
    entry: 'functions/workspace/apikeyconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: "Read the configured AI provider API keys (masked).",
    description: 'the configured AI provider keys, masked (`{aiModelApiKey: []}` when none)',
    extension: true,
  },
  // Advanced webhook endpoints (docs/decisions.md §11): after the area's other entries (docs/operating.md, "Deploy").
  {
    path: '/v2/workspace/advancedwebhook/endpoints/create',
    entry: 'functions/workspace/advancedwebhook-endpoints-create.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
    summary: 'Create an advanced webhook endpoint with a new signing secret.',
    description: 'create an endpoint (`url`; `description`, `filterTypes`, `channels`, `disabled`, `rateLimit`, `uid`, `metadata`); the server makes its signing secret, never answered here (a `secret` sent is ignored); ≤ 50 per API key, past that RESOURCE_EXHAUSTED; `uid` taken → ALREADY_EXISTS',
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/get',
    entry: 'functions/workspace/advancedwebhook-endpoints-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: 'List the advanced webhook endpoints in creation order (iterator paging).',
    description: 'the endpoints in creation order: `{limit? (1–250, default 50), iterator?}` → `{endpoints, iterator, prevIterator, done}`; an iterator `-<id>` pages backwards',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/update',
    entry: 'functions/workspace/advancedwebhook-endpoints-update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Change fields of an advanced webhook endpoint (null clears an optional field).',
    description: 'change the fields sent (at least one besides `endpointId`); `null` clears `description`, `filterTypes`, `channels`, `rateLimit`, `metadata`; `disabled: false` also ends a run of failures; answers the endpoint',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/delete',
    entry: 'functions/workspace/advancedwebhook-endpoints-delete.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Delete an advanced webhook endpoint.',
    description: '`{endpointId}` → `{endpointId, deleted: true}`',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/secret/get',
    entry: 'functions/workspace/advancedwebhook-endpoints-secret-get.ts',
    auth: 'apiKey',
    table: 'read',
    kms: ['decrypt'],
    summary: "Read an advanced webhook endpoint's signing secret.",
    description: '`{endpointId}` → `{endpointId, secret}`: the current signing secret (`whsec_…`)',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/secret/rotate',
    entry: 'functions/workspace/advancedwebhook-endpoints-secret-rotate.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
    summary: "Replace an advanced webhook endpoint's signing secret; the replaced one keeps signing for 24 hours.",
    description: '`{endpointId}` → `{endpointId, secret}`: a new signing secret; the replaced one keeps signing for 24 h',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/recover',
    entry: 'functions/workspace/advancedwebhook-endpoints-recover.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi2'],
    queue: 'send',
    summary: "Attempt again every message that failed for an endpoint since a time (at most 14 days back).",
    description: '`{endpointId, since, until?}` (ms, at most 14 days back) → `{endpointId, recovered}`: every message that failed for the endpoint in the window is attempted again, in a new round of the schedule',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/messages/get',
    entry: 'functions/workspace/advancedwebhook-messages-get.ts',
    auth: 'apiKey',
    table: 'read',
    // The tenant's messages (gsi1), an organization's (gsi2), an endpoint's deliveries (gsi1).
    indexes: ['gsi1', 'gsi2'],
    summary: 'List webhook messages, newest first, with their deliveries.',
    description: 'webhook messages, newest first, each with its deliveries (`pending`/`success`/`failed`, attempts, next attempt); filters `endpointId`, `eventTypes`, `organizationId`, `since`; `pageSize` ≤ 250 (default 50), `pageToken`',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/messages/resend',
    entry: 'functions/workspace/advancedwebhook-messages-resend.ts',
    auth: 'apiKey',
    table: 'write',
    queue: 'send',
    summary: 'Send a webhook message to an endpoint again.',
    description: '`{messageId, endpointId}` → `{messageId, endpointId, status: "pending"}`: the message is sent to the endpoint again (or for the first time)',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/attempts/get',
    entry: 'functions/workspace/advancedwebhook-attempts-get.ts',
    auth: 'apiKey',
    table: 'read',
    // A message's attempts are in its partition; an endpoint's in gsi1.
    indexes: ['gsi1'],
    summary: 'List delivery attempts of a message or an endpoint, newest first.',
    description: 'delivery attempts of a message and/or an endpoint, newest first: status, response status code (0 without one), first 1 KB of the answer, error, duration',
    extension: true,
  },
  // The email log (docs/decisions.md §12): after the area's other entries (docs/operating.md, "Deploy").
  {
    path: '/v2/workspace/emails/get',
    entry: 'functions/workspace/emails-get.ts',
    auth: 'apiKey',
    table: 'read',
    // The tenant's emails (gsi1), a notification's (gsi2), a user's (gsi3).
    indexes: ['gsi1', 'gsi2', 'gsi3'],
    summary: 'List the emails of notifications (sent, pending, failed or skipped, and why), newest first.',
    description: "the key's notification emails, newest first: `{id, notificationId, userId, to, subject, status, reason?, transport, attempts, timestamp}`, `status` `pending`/`sent`/`failed`/`skipped` with the `reason` of a skip, failure or retry; filters `notificationId`, `userId` (both: that notification's email to that user); `pageSize` ≤ 250 (default 50), `result.pageToken`; kept 30 days",
    extension: true,
  },
  {
    path: '/v2/crdt/add',
    entry: 'functions/crdt/add.ts',
    auth: 'apiKey',
    table: 'write',
    // Sends the new editor's content to live connections already open on it (decisions §13).
    connections: 'manage',
    summary: "Create the CRDT (Yjs) data of an editor.",
    description: "create an editor's data as a Yjs document (`text`, `map`, `array`, `xml`)",
  },
  {
    path: '/v2/crdt/get',
    entry: 'functions/crdt/get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: "Read the CRDT data of a document or one editor (plain value, or the Yjs state).",
    description: 'a document\'s or an editor\'s data as plain values (`format: "yjs"` adds the base64 state)',
  },
  {
    path: '/v2/crdt/update',
    entry: 'functions/crdt/update.ts',
    auth: 'apiKey',
    table: 'write',
    // Sends the change to the editor's open live connections (decisions §13).
    connections: 'manage',
    summary: "Replace an editor's content through Yjs operations, or merge a client's Yjs update.",
    description: "replace the content through Yjs operations, or merge a client's `yjsUpdate`",
    extension: true,
  },
  {
    path: '/v2/crdt/live/authorize',
    entry: 'functions/crdt/live-authorize.ts',
    auth: 'apiKey',
    // Creates the editor empty when it does not exist and `type` is sent.
    table: 'write',
    summary: "Authorize one of your users to edit (or view) one editor live, over the y-websocket protocol.",
    description: "a live session for a user on one editor: `{organizationId, documentId, editorId, userId, type?, contentKey?, expiresIn?}` → `{token, serverUrl, room, accessRole, expiresAt}`; the browser connects with the stock `WebsocketProvider` (docs/live-sync.md)",
    extension: true,
  },
  {
    path: '/v2/recordings/add',
    entry: 'functions/recordings/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Store recording annotations of a document.",
    description: 'store recording annotations',
    extension: true,
  },
  {
    path: '/v2/recordings/get',
    entry: 'functions/recordings/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1', 'gsi2'],
    summary: "Read recording annotations of a document or organization.",
    description: 'recording annotations of a document or organization, `recordingIds` filter, `result.pageToken`',
  },
  {
    path: '/v2/rewriter/ask-ai',
    entry: 'functions/rewriter/ask-ai.ts',
    auth: 'apiKey',
    table: 'read',
    kms: ['decrypt'],
    calls: ['ai-providers'],
    summary: "Send a prompt and a text to an OpenAI, Anthropic or Gemini model with the tenant's own provider key.",
    description: '`{model, prompt, text}` to OpenAI, Anthropic or Gemini with the tenant\'s key; `{"result":{"success":true,"text"}}` or `{"result":{"success":false,"error"}}`',
  },
  {
    path: '/v2/memory/suggest',
    entry: 'functions/memory/suggest.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi5'],
    summary: "Suggest a decision (approve or reject) from past judgments on the same matter.",
    description: '`{query, organizationId?, documentId?}` → `{result: {primary, conflict}}`: approve or reject, from past judgments on the same matter (see Suggest Decision in docs/project-decisions.md)',
  },
] as const satisfies readonly Route[];

export type RoutePath = (typeof routes)[number]['path'];

/**
 * Where the local stack's gateway accepts the live-sync WebSocket upgrades (`<path>` and `<path>/<room>`); in AWS the
 * WebSocket API's stage URL takes its place.
 */
export const LOCAL_LIVE_PATH = '/v2/crdt/live';

/** The live-sync WebSocket API's routes (decisions §13): API Gateway's three route keys, one function each. */
export type SocketRouteKey = '$connect' | '$disconnect' | '$default';

/**
 * A route of the live-sync WebSocket API. The CDK stack makes one function per entry and one route of the WebSocket
 * API for it; the local gateway serves the same handlers on its WebSocket upgrades; grants come from the declaration
 * as for every route, and the grant check holds the handlers to them.
 */
export interface SocketRoute extends AccessDeclaration {
  readonly routeKey: SocketRouteKey;
  /** Construct id in the stack. */
  readonly id: string;
  /** Handler file relative to the project root; it exports `handler` (an APIGatewayProxyWebsocketHandlerV2). */
  readonly entry: string;
  readonly summary: string;
}

export const socketRoutes = [
  {
    routeKey: '$connect',
    id: 'LiveConnect',
    entry: 'functions/live/connect.ts',
    // Reads the user's access (memberships and grants), writes the connection's items; asks the Management API
    // whether the entries of a room that looks full are still open (GetConnection) and removes those that are not.
    table: 'write',
    connections: 'manage',
    summary: 'Opens a live connection: checks the session token and the user\'s access, records the connection in its room.',
  },
  {
    routeKey: '$default',
    id: 'LiveMessage',
    entry: 'functions/live/message.ts',
    table: 'write',
    connections: 'manage',
    summary: 'Handles one frame of a live connection: sync, updates (stored, then relayed), presence, access re-checks.',
  },
  {
    routeKey: '$disconnect',
    id: 'LiveDisconnect',
    entry: 'functions/live/disconnect.ts',
    table: 'write',
    connections: 'manage',
    summary: 'Closes a live connection: removes it from its room and its clients\' presence for everyone else.',
  },
] as const satisfies readonly SocketRoute[];

const byPath = new Map<string, Route>(routes.map((route) => [route.path, route]));

/** The route served at `path`, or undefined when no operation has that path. */
export function findRoute(path: string): Route | undefined {
  return byPath.get(path);
}

/** Turns an entry file into a stable identifier (CDK construct ids, bundle names): `functions/users/add.ts` → `UsersAdd`. */
export function entryId(entry: string): string {
  return entry
    .replace(/^functions\//, '')
    .replace(/\.ts$/, '')
    .split(/[/-]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** Identifier of a route (one function per path): `/v2/users/delete` → `V2UsersDelete`. */
export function routeId(path: string): string {
  return path
    .split(/[/-]/)
    .filter(Boolean)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
