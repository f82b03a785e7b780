/**
 * What each operation of the route table (shared/routes.ts) is, in words: its OpenAPI `summary` (one line) and
 * `description` (what it does, its main fields and limits), which is also the "What" of its row in the endpoint
 * table (docs/endpoints.md, written by `npm run openapi`). Beside the table rather than in it, so that the table reads
 * as what it is (a path, its handler, its credentials and grants). Keyed by the table's paths: a path missing here, or
 * one the table does not have, fails the type check.
 */
import type { RoutePath } from './routes';

/** The words for one operation. */
export interface RouteDoc {
  /** One line: the operation's OpenAPI `summary`. */
  readonly summary: string;
  /** What the operation does, its main fields and limits: its OpenAPI `description` and its endpoint-table row. */
  readonly description: string;
}

export const routeDocs: Readonly<Record<RoutePath, RouteDoc>> = {
  '/v2/workspace/create': {
    summary: 'Create a workspace with its first testing API key and auth token.',
    description: "create a workspace, its first testing key and that key's token",
  },
  '/v2/workspace/apikeys/get': {
    summary: 'List the API keys of the workspace.',
    description: "list the workspace's keys (`apiKeys` filter, `pageSize` ≤ 100, `result.nextPageToken`)",
  },
  '/v2/workspace/apikey/create': {
    summary: 'Create a testing API key in the workspace.',
    description: 'create a testing key (`type: "production"` → PERMISSION_DENIED)',
  },
  '/v2/workspace/authtokens/get': {
    summary: 'Read the auth tokens of one API key of the workspace.',
    description: "read a key's tokens",
  },
  '/v2/workspace/authtoken/reset': {
    summary: 'Replace the auth tokens of one API key with a new one.',
    description: "replace a key's tokens with one new token",
  },
  '/v2/workspace/activityconfig/update': {
    summary: 'Update the activity log configuration (deep merge; defaults seeded on first enable).',
    description: 'deep-merge the activity config; seed defaults on first enable',
  },
  '/v2/workspace/activityconfig/get': {
    summary: 'Read the activity log configuration.',
    description: 'read the activity config (`isEnabled:false` when never set)',
  },
  '/v2/workspace/advancedwebhookconfig/update': {
    summary: 'Update the advanced webhook configuration (partial; the first update must enable it).',
    description:
      'partial update of the advanced webhook configuration (`isEnabled`, `encodeData`, `encryptData`, `publicKey`, `enableDataProtection`); the first update must enable it; `encryptData` needs an RSA public key of ≥ 2048 bits',
  },
  '/v2/workspace/advancedwebhookconfig/get': {
    summary: 'Read the advanced webhook configuration.',
    description: 'the advanced webhook configuration, defaults when never set',
  },
  '/v2/users/add': {
    summary: 'Add users to an organization, a folder or a document.',
    description:
      'add users at organization, folder or document level (≤ 100; creates a missing organization; `createDocument` / `createFolder`)',
  },
  '/v2/users/update': {
    summary: 'Update the profile fields and the role of users at one level.',
    description: 'update profile fields and role of users at one level; non-members `success:false`',
  },
  '/v2/users/get': {
    summary: 'List users of an organization, folder, document or all documents, with filters.',
    description:
      'users of a level or of all documents, filtered by `userIds` / `organizationUserGroupIds` (≤ 30 each), `result.nextPageToken`',
  },
  '/v2/users/delete': {
    summary: 'Remove users from an organization (everything in it), a folder or a document.',
    description: 'remove users from a document or folder, or from the organization with everything they have in it',
  },
  '/v1/users/delete': {
    summary: 'Same as /v2/users/delete.',
    description: 'remove users from a document or folder, or from the organization with everything they have in it',
  },
  '/v2/auth/permissions/add': {
    summary: 'Grant a user roles on resources, optionally expiring.',
    description: 'grant roles on resources, optionally expiring (`expiresAt`, seconds)',
  },
  '/v2/auth/permissions/get': {
    summary: 'Read the active grants of a user.',
    description: "a user's active grants",
  },
  '/v2/auth/permissions/remove': {
    summary: 'Remove grants of a user on resources.',
    description: 'remove grants',
  },
  '/v2/organizations/usergroups/add': {
    summary: 'Create or rename user groups of an organization.',
    description: 'create or rename user groups',
  },
  '/v2/organizations/usergroups/users/add': {
    summary: 'Add users to a user group.',
    description: 'add users to a group',
  },
  '/v2/organizations/usergroups/users/delete': {
    summary: 'Remove users (or all users) from a user group.',
    description: 'remove `userIds`, or all users (`deleteAll`), from a group',
  },
  '/v2/organizations/documents/add': {
    summary: 'Add documents to an organization.',
    description: 'add documents (name, folder, access type)',
  },
  '/v2/organizations/documents/get': {
    summary: 'List or fetch documents of an organization.',
    description: 'documents of an organization, a folder, or by id; `result.pageToken`',
  },
  '/v2/organizations/documents/update': {
    summary: 'Update document name, folder, access type and metadata.',
    description: 'update name, folder, access type, metadata; unknown `success:false`',
  },
  '/v1/organizations/documents/access/disablestate/update': {
    summary: 'Disable or enable documents for every user.',
    description: 'disable or enable documents for every user',
  },
  '/v2/organizations/documents/access/disablestate/update': {
    summary: 'Same as the /v1 path.',
    description: 'disable or enable documents for every user',
  },
  '/v2/organizations/documents/migrate': {
    summary: 'Start moving a document and all its data to a new document id.',
    description:
      'move a document and everything of it to a new id (`result.data.migrationId`); the stream worker does the move',
  },
  '/v2/organizations/documents/migrate/status': {
    summary: 'Read the status of a document migration.',
    description: '`{migrationId, status}` (`pending`, `in_progress`, `completed`, `failed` with `error`)',
  },
  '/v2/notifications/add': {
    summary: "Add (or update) a notification and deliver it to its recipients' feeds.",
    description:
      "add or update a notification; deliver to `notifyUsers` and, with `notifyAll`, the organization's members; (ext) `eventType` (`<group>.<action>`): its email trigger decides whether the notification is emailed",
  },
  '/v2/notifications/get': {
    summary: "Read notifications of an organization, a document or a user's feed.",
    description:
      "a user's feed, a document's or the organization's notifications, or named ones; `order`; `result.pageToken`",
  },
  '/v2/notifications/update': {
    summary: 'Update notifications and mark them read for users.',
    description: 'update content, mark read (`readByUserIds`, `persistReadForUsers`); unknown `success:false`',
  },
  '/v2/notifications/delete': {
    summary: "Delete notifications selected by filters (or remove them from one user's feed).",
    description: "delete by filters, or (with `userId`) remove from one user's feed",
  },
  '/v1/notifications/delete': {
    summary: 'Same as /v2/notifications/delete.',
    description: "delete by filters, or (with `userId`) remove from one user's feed",
  },
  '/v2/notifications/config/get': {
    summary: 'Read the notification configuration of a user for documents or the organization.',
    description: "a user's inbox/email levels for documents and/or the organization",
  },
  '/v2/notifications/config/set': {
    summary: 'Set the notification configuration of users.',
    description: "set users' levels at the organization or at documents",
  },
  '/v2/activities/add': {
    summary: 'Add activity log records (all or nothing).',
    description: 'add activity records (≤ 100, all or nothing; needs the activity config enabled)',
  },
  '/v2/activities/get': {
    summary: 'Read activity log records with filters, in time order.',
    description:
      'activity records by organization, document, target entity, user, types, ids; `order`; `result.pageToken`',
  },
  '/v2/workspace/emailconfig/update': {
    summary: 'Update the email service configuration (deep merge; defaults seeded on first enable).',
    description: 'deep-merge the email config; seed defaults on first enable; provider key encrypted, returned masked',
  },
  '/v2/workspace/emailconfig/get': {
    summary: 'Read the email service configuration (provider key masked).',
    description: 'read the email config (`{useEmailService:false, emailServiceConfig:{}}` when never set)',
  },
  '/v2/workspace/apikeyconfig/update': {
    summary: 'Set or remove the AI provider API keys used by Ask AI (stored encrypted, returned masked).',
    description:
      'set or remove AI provider keys (`openai`, `anthropic`, `gemini`), merged per provider; encrypted, returned masked',
  },
  '/v2/workspace/apikeyconfig/get': {
    summary: 'Read the configured AI provider API keys (masked).',
    description: 'the configured AI provider keys, masked (`{aiModelApiKey: []}` when none)',
  },
  '/v2/workspace/advancedwebhook/endpoints/create': {
    summary: 'Create an advanced webhook endpoint with a new signing secret.',
    description:
      'create an endpoint (`url`; `description`, `filterTypes`, `channels`, `disabled`, `rateLimit`, `uid`, `metadata`); the server makes its signing secret, never answered here (a `secret` sent is ignored); ≤ 50 per API key, past that RESOURCE_EXHAUSTED; `uid` taken → ALREADY_EXISTS',
  },
  '/v2/workspace/advancedwebhook/endpoints/get': {
    summary: 'List the advanced webhook endpoints in creation order (iterator paging).',
    description:
      'the endpoints in creation order: `{limit? (1–250, default 50), iterator?}` → `{endpoints, iterator, prevIterator, done}`; an iterator `-<id>` pages backwards',
  },
  '/v2/workspace/advancedwebhook/endpoints/update': {
    summary: 'Change fields of an advanced webhook endpoint (null clears an optional field).',
    description:
      'change the fields sent (at least one besides `endpointId`); `null` clears `description`, `filterTypes`, `channels`, `rateLimit`, `metadata`; `disabled: false` also ends a run of failures; answers the endpoint',
  },
  '/v2/workspace/advancedwebhook/endpoints/delete': {
    summary: 'Delete an advanced webhook endpoint.',
    description: '`{endpointId}` → `{endpointId, deleted: true}`',
  },
  '/v2/workspace/advancedwebhook/endpoints/secret/get': {
    summary: "Read an advanced webhook endpoint's signing secret.",
    description: '`{endpointId}` → `{endpointId, secret}`: the current signing secret (`whsec_…`)',
  },
  '/v2/workspace/advancedwebhook/endpoints/secret/rotate': {
    summary: "Replace an advanced webhook endpoint's signing secret; the replaced one keeps signing for 24 hours.",
    description:
      '`{endpointId}` → `{endpointId, secret}`: a new signing secret; the replaced one keeps signing for 24 h',
  },
  '/v2/workspace/advancedwebhook/endpoints/recover': {
    summary: 'Attempt again every message that failed for an endpoint since a time (at most 14 days back).',
    description:
      '`{endpointId, since, until?}` (ms, at most 14 days back) → `{endpointId, recovered}`: every message that failed for the endpoint in the window is attempted again, in a new round of the schedule',
  },
  '/v2/workspace/advancedwebhook/messages/get': {
    summary: 'List webhook messages, newest first, with their deliveries.',
    description:
      'webhook messages, newest first, each with its deliveries (`pending`/`success`/`failed`, attempts, next attempt); filters `endpointId`, `eventTypes`, `organizationId`, `since`; `pageSize` ≤ 250 (default 50), `pageToken`',
  },
  '/v2/workspace/advancedwebhook/messages/resend': {
    summary: 'Send a webhook message to an endpoint again.',
    description:
      '`{messageId, endpointId}` → `{messageId, endpointId, status: "pending"}`: the message is sent to the endpoint again (or for the first time)',
  },
  '/v2/workspace/advancedwebhook/attempts/get': {
    summary: 'List delivery attempts of a message or an endpoint, newest first.',
    description:
      'delivery attempts of a message and/or an endpoint, newest first: status, response status code (0 without one), first 1 KB of the answer, error, duration',
  },
  '/v2/workspace/emails/get': {
    summary: 'List the emails of notifications (sent, pending, failed or skipped, and why), newest first.',
    description:
      "the key's notification emails, newest first: `{id, notificationId, userId, to, subject, status, reason?, transport, attempts, timestamp}`, `status` `pending`/`sent`/`failed`/`skipped` with the `reason` of a skip, failure or retry; filters `notificationId`, `userId` (both: that notification's email to that user); `pageSize` ≤ 250 (default 50), `result.pageToken`; kept 30 days",
  },
  '/v2/crdt/add': {
    summary: 'Create the CRDT (Yjs) data of an editor.',
    description: "create an editor's data as a Yjs document (`text`, `map`, `array`, `xml`)",
  },
  '/v2/crdt/get': {
    summary: 'Read the CRDT data of a document or one editor (plain value, or the Yjs state).',
    description:
      'a document\'s or an editor\'s data as plain values (`format: "yjs"` adds the base64 state); with `versionId` (and `editorId`) the editor as it was at that version',
  },
  '/v2/crdt/update': {
    summary: "Replace an editor's content through Yjs operations, or merge a client's Yjs update.",
    description: "replace the content through Yjs operations, or merge a client's `yjsUpdate`",
  },
  '/v2/crdt/versions/create': {
    summary: "Keep a version of an editor's current content.",
    description:
      'a `manual` version of the editor now: `{name? (1–200 characters), userId?}` → `{versionId, editorId, kind, name?, createdAt, authors, size}`; at most 1,000 per editor (the oldest automatic one goes first)',
  },
  '/v2/crdt/versions/get': {
    summary: "List an editor's versions, newest first.",
    description:
      "the editor's versions, newest first (summaries, never states): `pageSize` 1–100 (default 20), `result.pageToken`; read one with `/v2/crdt/get` `versionId`",
  },
  '/v2/crdt/versions/restore': {
    summary: "Make an editor's content equal to a version's, as one ordinary edit.",
    description:
      'one Yjs update applied to the current state (live connections receive it), after keeping the state before as a `restore` version: `{versionId, userId?}` → `{versionId, restoredVersionId}`',
  },
  '/v2/crdt/versions/delete': {
    summary: 'Delete a version of an editor.',
    description: 'delete one version and its state: `{versionId}` → `{versionId, deleted: true}`',
  },
  '/v2/crdt/live/authorize': {
    summary: 'Authorize one of your users to edit (or view) one editor live, over the y-websocket protocol.',
    description:
      'a live session for a user on one editor: `{organizationId, documentId, editorId, userId, type?, contentKey?, expiresIn?}` → `{token, serverUrl, room, accessRole, expiresAt}`; the browser connects with the stock `WebsocketProvider` (docs/live-sync.md)',
  },
  '/v2/recordings/add': {
    summary: 'Store recording annotations of a document.',
    description: 'store recording annotations',
  },
  '/v2/recordings/get': {
    summary: 'Read recording annotations of a document or organization.',
    description: 'recording annotations of a document or organization, `recordingIds` filter, `result.pageToken`',
  },
  '/v2/commentannotations/add': {
    summary: 'Add comment threads to a document, each with its first comments.',
    description:
      '1–50 threads `{annotationId?, from?, status?, priority?, assignedTo?, context?, location?, visibility?, anchor?, commentData}` (`anchor`: `{editorId, from, to}` base64 relative positions, or `{editorId, index, length}` in the plain text); batch keyed by `annotationId`: `{success, annotationId, commentIds, message}`; `verifyUserPermissions`, `createOrganization`, `createDocument`',
  },
  '/v2/commentannotations/get': {
    summary: 'Read comment threads, newest lastUpdated first.',
    description:
      "threads of `documentId`/`documentIds` (≤ 30) or `annotationIds`; filters `userIds`, `mentionedUserIds`, `statusIds`, `locationIds`, `createdAfter/Before`, `updatedAfter/Before`, `viewerUserId`; `pageSize` ≤ 1,000 (100); `result.nextPageToken`; each `anchor` resolved against its editor's current state: `{editorId, from, to, start, end, quotedText, orphaned}` (no `start`/`end` when orphaned)",
  },
  '/v2/commentannotations/update': {
    summary: 'Change the status, priority, assignee, context, location, visibility or anchor of threads.',
    description: '`{annotationIds (1–30), updatedData}`; batch keyed by `annotationId`',
  },
  '/v2/commentannotations/delete': {
    summary: 'Delete comment threads with their comments.',
    description: '`{annotationIds (1–30)}`; batch keyed by `annotationId`',
  },
  '/v2/commentannotations/count': {
    summary: 'Count the threads of documents, and those unread by a user.',
    description: '`{documentIds (1–30), userId?}` → `{<documentId>: {total, unread?}}`',
  },
  '/v2/commentannotations/read': {
    summary: 'Mark threads read by a user.',
    description: '`{annotationIds (1–30), userId}`; batch keyed by `annotationId`',
  },
  '/v2/commentannotations/comments/add': {
    summary: 'Add comments to a thread.',
    description: '`{annotationId, commentData (1–50)}` → the comment ids',
  },
  '/v2/commentannotations/comments/get': {
    summary: "Read a thread's comments, oldest first.",
    description: '`{annotationId, commentIds?}` → comments, oldest first',
  },
  '/v2/commentannotations/comments/update': {
    summary: 'Edit comments of a thread.',
    description:
      '`{annotationId, commentIds (1–30), updatedData: {commentText?, commentHtml?, taggedUserContacts?, context?}}`; batch keyed by `commentId`',
  },
  '/v2/commentannotations/comments/delete': {
    summary: 'Delete comments of a thread; its last comment takes the thread with it.',
    description: '`{annotationId, commentIds (1–30)}`; batch keyed by `commentId`',
  },
  '/v2/rewriter/ask-ai': {
    summary: "Send a prompt and a text to an OpenAI, Anthropic or Gemini model with the tenant's own provider key.",
    description:
      '`{model, prompt, text}` to OpenAI, Anthropic or Gemini with the tenant\'s key; `{"result":{"success":true,"text"}}` or `{"result":{"success":false,"error"}}`',
  },
  '/v2/memory/suggest': {
    summary: 'Suggest a decision (approve or reject) from past judgments on the same matter.',
    description:
      '`{query, organizationId?, documentId?}` → `{result: {primary, conflict}}`: approve or reject, from past judgments on the same matter (see Suggest Decision in docs/project-decisions.md)',
  },
};
