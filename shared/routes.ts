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
  /** One line for the OpenAPI document and the README. */
  readonly summary: string;
}

export const routes = [
  {
    path: '/v2/workspace/create',
    entry: 'functions/workspace/create.ts',
    auth: 'none',
    table: 'write',
    kms: ['encrypt'],
    summary: 'Create a workspace with its first testing API key and auth token.',
  },
  {
    path: '/v2/workspace/apikeys/get',
    entry: 'functions/workspace/apikeys-get.ts',
    auth: 'workspace',
    table: 'read',
    summary: 'List the API keys of the workspace.',
  },
  {
    path: '/v2/workspace/apikey/create',
    entry: 'functions/workspace/apikey-create.ts',
    auth: 'workspace',
    table: 'write',
    kms: ['encrypt'],
    summary: 'Create a testing API key in the workspace.',
  },
  {
    path: '/v2/workspace/authtokens/get',
    entry: 'functions/workspace/authtokens-get.ts',
    auth: 'workspace',
    table: 'read',
    kms: ['decrypt'],
    summary: 'Read the auth tokens of one API key of the workspace.',
  },
  {
    path: '/v2/workspace/authtoken/reset',
    entry: 'functions/workspace/authtoken-reset.ts',
    auth: 'workspace',
    table: 'write',
    kms: ['encrypt'],
    summary: 'Replace the auth tokens of one API key with a new one.',
  },
  {
    path: '/v2/workspace/activityconfig/update',
    entry: 'functions/workspace/activityconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Update the activity log configuration (deep merge; defaults seeded on first enable).',
  },
  {
    path: '/v2/workspace/activityconfig/get',
    entry: 'functions/workspace/activityconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: 'Read the activity log configuration.',
  },
  {
    path: '/v2/workspace/advancedwebhookconfig/update',
    entry: 'functions/workspace/advancedwebhookconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Update the advanced webhook configuration (partial; the first update must enable it).',
  },
  {
    path: '/v2/workspace/advancedwebhookconfig/get',
    entry: 'functions/workspace/advancedwebhookconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: 'Read the advanced webhook configuration.',
  },
  {
    path: '/v2/users/add',
    entry: 'functions/users/add.ts',
    auth: 'apiKey',
    table: 'write',
    // A changed profile's copies on the user's other memberships (gsi1, shared/domain/profile-copies.ts).
    indexes: ['gsi1'],
    summary: 'Add users to an organization, a folder or a document.',
  },
  {
    path: '/v2/users/update',
    entry: 'functions/users/update.ts',
    auth: 'apiKey',
    table: 'write',
    // A changed profile's copies on the user's other memberships (gsi1, shared/domain/profile-copies.ts).
    indexes: ['gsi1'],
    summary: 'Update the profile fields and the role of users at one level.',
  },
  {
    path: '/v2/users/get',
    entry: 'functions/users/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1', 'gsi2'],
    summary: 'List users of an organization, folder, document or all documents, with filters.',
  },
  {
    path: '/v2/users/delete',
    entry: 'functions/users/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1'],
    summary: 'Remove users from an organization (everything in it), a folder or a document.',
  },
  {
    path: '/v1/users/delete',
    entry: 'functions/users/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1'],
    summary: 'Same as /v2/users/delete.',
  },
  {
    path: '/v2/auth/permissions/add',
    entry: 'functions/permissions/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Grant a user roles on resources, optionally expiring.',
  },
  {
    path: '/v2/auth/permissions/get',
    entry: 'functions/permissions/get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: 'Read the active grants of a user.',
  },
  {
    path: '/v2/auth/permissions/remove',
    entry: 'functions/permissions/remove.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Remove grants of a user on resources.',
  },
  {
    path: '/v2/organizations/usergroups/add',
    entry: 'functions/usergroups/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Create or rename user groups of an organization.',
  },
  {
    path: '/v2/organizations/usergroups/users/add',
    entry: 'functions/usergroups/users-add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Add users to a user group.',
  },
  {
    path: '/v2/organizations/usergroups/users/delete',
    entry: 'functions/usergroups/users-delete.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Remove users (or all users) from a user group.',
  },
  {
    path: '/v2/organizations/documents/add',
    entry: 'functions/documents/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Add documents to an organization.',
  },
  {
    path: '/v2/organizations/documents/get',
    entry: 'functions/documents/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1'],
    summary: 'List or fetch documents of an organization.',
  },
  {
    path: '/v2/organizations/documents/update',
    entry: 'functions/documents/update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Update document name, folder, access type and metadata.',
  },
  {
    path: '/v1/organizations/documents/access/disablestate/update',
    entry: 'functions/documents/disablestate-update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Disable or enable documents for every user.',
  },
  {
    path: '/v2/organizations/documents/access/disablestate/update',
    entry: 'functions/documents/disablestate-update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Same as the /v1 path.',
  },
  {
    path: '/v2/organizations/documents/migrate',
    entry: 'functions/documents/migrate.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Start moving a document and all its data to a new document id.',
  },
  {
    path: '/v2/organizations/documents/migrate/status',
    entry: 'functions/documents/migrate-status.ts',
    auth: 'apiKey',
    table: 'read',
    summary: 'Read the status of a document migration.',
  },
  {
    path: '/v2/notifications/add',
    entry: 'functions/notifications/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Add (or update) a notification and deliver it to its recipients' feeds.",
  },
  {
    path: '/v2/notifications/get',
    entry: 'functions/notifications/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1', 'gsi2'],
    summary: "Read notifications of an organization, a document or a user's feed.",
  },
  {
    path: '/v2/notifications/update',
    entry: 'functions/notifications/update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Update notifications and mark them read for users.",
  },
  {
    path: '/v2/notifications/delete',
    entry: 'functions/notifications/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1', 'gsi2', 'gsi3'],
    summary: "Delete notifications selected by filters (or remove them from one user's feed).",
  },
  {
    path: '/v1/notifications/delete',
    entry: 'functions/notifications/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1', 'gsi2', 'gsi3'],
    summary: "Same as /v2/notifications/delete.",
  },
  {
    path: '/v2/notifications/config/get',
    entry: 'functions/notifications/config-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: "Read the notification configuration of a user for documents or the organization.",
  },
  {
    path: '/v2/notifications/config/set',
    entry: 'functions/notifications/config-set.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Set the notification configuration of users.",
  },
  {
    path: '/v2/activities/add',
    entry: 'functions/activities/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Add activity log records (all or nothing).",
  },
  {
    path: '/v2/activities/get',
    entry: 'functions/activities/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi6', 'gsi7', 'gsi8', 'gsi9'],
    summary: "Read activity log records with filters, in time order.",
  },
  {
    path: '/v2/workspace/emailconfig/update',
    entry: 'functions/workspace/emailconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
    summary: "Update the email service configuration (deep merge; defaults seeded on first enable).",
  },
  {
    path: '/v2/workspace/emailconfig/get',
    entry: 'functions/workspace/emailconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: "Read the email service configuration (provider key masked).",
  },
  {
    path: '/v2/workspace/apikeyconfig/update',
    entry: 'functions/workspace/apikeyconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
    summary: "Set or remove the AI provider API keys used by Ask AI (stored encrypted, returned masked).",
  },
  {
    path: '/v2/workspace/apikeyconfig/get',
    entry: 'functions/workspace/apikeyconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: "Read the configured AI provider API keys (masked).",
  },
  // Advanced webhook endpoints (docs/decisions.md §11): after the area's other entries (README "Deploy").
  {
    path: '/v2/workspace/advancedwebhook/endpoints/create',
    entry: 'functions/workspace/advancedwebhook-endpoints-create.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
    summary: 'Create an advanced webhook endpoint with a new signing secret.',
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/get',
    entry: 'functions/workspace/advancedwebhook-endpoints-get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: 'List the advanced webhook endpoints in creation order (iterator paging).',
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/update',
    entry: 'functions/workspace/advancedwebhook-endpoints-update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Change fields of an advanced webhook endpoint (null clears an optional field).',
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/delete',
    entry: 'functions/workspace/advancedwebhook-endpoints-delete.ts',
    auth: 'apiKey',
    table: 'write',
    summary: 'Delete an advanced webhook endpoint.',
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/secret/get',
    entry: 'functions/workspace/advancedwebhook-endpoints-secret-get.ts',
    auth: 'apiKey',
    table: 'read',
    kms: ['decrypt'],
    summary: "Read an advanced webhook endpoint's signing secret.",
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/secret/rotate',
    entry: 'functions/workspace/advancedwebhook-endpoints-secret-rotate.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
    summary: "Replace an advanced webhook endpoint's signing secret; the replaced one keeps signing for 24 hours.",
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/recover',
    entry: 'functions/workspace/advancedwebhook-endpoints-recover.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi2'],
    queue: 'send',
    summary: "Attempt again every message that failed for an endpoint since a time (at most 14 days back).",
  },
  {
    path: '/v2/workspace/advancedwebhook/messages/get',
    entry: 'functions/workspace/advancedwebhook-messages-get.ts',
    auth: 'apiKey',
    table: 'read',
    // The tenant's messages (gsi1), an organization's (gsi2), an endpoint's deliveries (gsi1).
    indexes: ['gsi1', 'gsi2'],
    summary: 'List webhook messages, newest first, with their deliveries.',
  },
  {
    path: '/v2/workspace/advancedwebhook/messages/resend',
    entry: 'functions/workspace/advancedwebhook-messages-resend.ts',
    auth: 'apiKey',
    table: 'write',
    queue: 'send',
    summary: 'Send a webhook message to an endpoint again.',
  },
  {
    path: '/v2/workspace/advancedwebhook/attempts/get',
    entry: 'functions/workspace/advancedwebhook-attempts-get.ts',
    auth: 'apiKey',
    table: 'read',
    // A message's attempts are in its partition; an endpoint's in gsi1.
    indexes: ['gsi1'],
    summary: 'List delivery attempts of a message or an endpoint, newest first.',
  },
  // The email log (docs/decisions.md §12): after the area's other entries (README "Deploy").
  {
    path: '/v2/workspace/emails/get',
    entry: 'functions/workspace/emails-get.ts',
    auth: 'apiKey',
    table: 'read',
    // The tenant's emails (gsi1), a notification's (gsi2), a user's (gsi3).
    indexes: ['gsi1', 'gsi2', 'gsi3'],
    summary: 'List the emails of notifications (sent, pending, failed or skipped, and why), newest first.',
  },
  {
    path: '/v2/crdt/add',
    entry: 'functions/crdt/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Create the CRDT (Yjs) data of an editor.",
  },
  {
    path: '/v2/crdt/get',
    entry: 'functions/crdt/get.ts',
    auth: 'apiKey',
    table: 'read',
    summary: "Read the CRDT data of a document or one editor (plain value, or the Yjs state).",
  },
  {
    path: '/v2/crdt/update',
    entry: 'functions/crdt/update.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Replace an editor's content through Yjs operations, or merge a client's Yjs update.",
  },
  {
    path: '/v2/recordings/add',
    entry: 'functions/recordings/add.ts',
    auth: 'apiKey',
    table: 'write',
    summary: "Store recording annotations of a document.",
  },
  {
    path: '/v2/recordings/get',
    entry: 'functions/recordings/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1', 'gsi2'],
    summary: "Read recording annotations of a document or organization.",
  },
  {
    path: '/v2/rewriter/ask-ai',
    entry: 'functions/rewriter/ask-ai.ts',
    auth: 'apiKey',
    table: 'read',
    kms: ['decrypt'],
    calls: ['ai-providers'],
    summary: "Send a prompt and a text to an OpenAI, Anthropic or Gemini model with the tenant's own provider key.",
  },
  {
    path: '/v2/memory/suggest',
    entry: 'functions/memory/suggest.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi5'],
    summary: "Suggest a decision (approve or reject) from past judgments on the same matter.",
  },
] as const satisfies readonly Route[];

export type RoutePath = (typeof routes)[number]['path'];

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
