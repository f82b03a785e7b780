/**
 * The one route table. Every operation of the API is one entry: its POST path, the handler file that serves it,
 * the authentication level, and what the function may touch (used by the CDK stack for least-privilege grants).
 *
 * The CDK stack makes one function and one route per entry, the local gateway serves the same entries, the
 * OpenAPI document is generated from them, and a test fails when a handler file has no entry or an entry no file.
 * This module imports nothing at runtime so that `infra/` can read it without pulling in handler code.
 *
 * What each operation is, in words (its OpenAPI summary and description), is beside the table in route-docs.ts. The
 * nested stack each route's function lives in is recorded in infra/route-stacks.json (`npm run route-stacks`), so a
 * route may be added anywhere in the table.
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
  },
  {
    path: '/v2/workspace/apikeys/get',
    entry: 'functions/workspace/apikeys-get.ts',
    auth: 'workspace',
    table: 'read',
  },
  {
    path: '/v2/workspace/apikey/create',
    entry: 'functions/workspace/apikey-create.ts',
    auth: 'workspace',
    table: 'write',
    kms: ['encrypt'],
    extension: true,
  },
  {
    path: '/v2/workspace/authtokens/get',
    entry: 'functions/workspace/authtokens-get.ts',
    auth: 'workspace',
    table: 'read',
    kms: ['decrypt'],
    extension: true,
  },
  {
    path: '/v2/workspace/authtoken/reset',
    entry: 'functions/workspace/authtoken-reset.ts',
    auth: 'workspace',
    table: 'write',
    kms: ['encrypt'],
    extension: true,
  },
  {
    path: '/v2/workspace/activityconfig/update',
    entry: 'functions/workspace/activityconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
  },
  {
    path: '/v2/workspace/activityconfig/get',
    entry: 'functions/workspace/activityconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhookconfig/update',
    entry: 'functions/workspace/advancedwebhookconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
  },
  {
    path: '/v2/workspace/advancedwebhookconfig/get',
    entry: 'functions/workspace/advancedwebhookconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    extension: true,
  },
  {
    path: '/v2/users/add',
    entry: 'functions/users/add.ts',
    auth: 'apiKey',
    table: 'write',
    // A changed profile's copies on the user's other memberships (gsi1, shared/domain/profile-copies.ts).
    indexes: ['gsi1'],
  },
  {
    path: '/v2/users/update',
    entry: 'functions/users/update.ts',
    auth: 'apiKey',
    table: 'write',
    // A changed profile's copies on the user's other memberships (gsi1, shared/domain/profile-copies.ts).
    indexes: ['gsi1'],
  },
  {
    path: '/v2/users/get',
    entry: 'functions/users/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1', 'gsi2'],
  },
  {
    path: '/v2/users/delete',
    entry: 'functions/users/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1'],
  },
  {
    path: '/v1/users/delete',
    entry: 'functions/users/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1'],
  },
  {
    path: '/v2/auth/permissions/add',
    entry: 'functions/permissions/add.ts',
    auth: 'apiKey',
    table: 'write',
  },
  {
    path: '/v2/auth/permissions/get',
    entry: 'functions/permissions/get.ts',
    auth: 'apiKey',
    table: 'read',
    extension: true,
  },
  {
    path: '/v2/auth/permissions/remove',
    entry: 'functions/permissions/remove.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/organizations/usergroups/add',
    entry: 'functions/usergroups/add.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/organizations/usergroups/users/add',
    entry: 'functions/usergroups/users-add.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/organizations/usergroups/users/delete',
    entry: 'functions/usergroups/users-delete.ts',
    auth: 'apiKey',
    table: 'write',
  },
  {
    path: '/v2/organizations/documents/add',
    entry: 'functions/documents/add.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/organizations/documents/get',
    entry: 'functions/documents/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1'],
    extension: true,
  },
  {
    path: '/v2/organizations/documents/update',
    entry: 'functions/documents/update.ts',
    auth: 'apiKey',
    table: 'write',
  },
  {
    path: '/v1/organizations/documents/access/disablestate/update',
    entry: 'functions/documents/disablestate-update.ts',
    auth: 'apiKey',
    table: 'write',
  },
  {
    path: '/v2/organizations/documents/access/disablestate/update',
    entry: 'functions/documents/disablestate-update.ts',
    auth: 'apiKey',
    table: 'write',
  },
  {
    path: '/v2/organizations/documents/migrate',
    entry: 'functions/documents/migrate.ts',
    auth: 'apiKey',
    table: 'write',
  },
  {
    path: '/v2/organizations/documents/migrate/status',
    entry: 'functions/documents/migrate-status.ts',
    auth: 'apiKey',
    table: 'read',
  },
  {
    path: '/v2/notifications/add',
    entry: 'functions/notifications/add.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/notifications/get',
    entry: 'functions/notifications/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1', 'gsi2'],
    extension: true,
  },
  {
    path: '/v2/notifications/update',
    entry: 'functions/notifications/update.ts',
    auth: 'apiKey',
    table: 'write',
  },
  {
    path: '/v2/notifications/delete',
    entry: 'functions/notifications/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1', 'gsi2', 'gsi3'],
  },
  {
    path: '/v1/notifications/delete',
    entry: 'functions/notifications/delete.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi1', 'gsi2', 'gsi3'],
  },
  {
    path: '/v2/notifications/config/get',
    entry: 'functions/notifications/config-get.ts',
    auth: 'apiKey',
    table: 'read',
  },
  {
    path: '/v2/notifications/config/set',
    entry: 'functions/notifications/config-set.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/activities/add',
    entry: 'functions/activities/add.ts',
    auth: 'apiKey',
    table: 'write',
  },
  {
    path: '/v2/activities/get',
    entry: 'functions/activities/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi6', 'gsi7', 'gsi8', 'gsi9'],
  },
  {
    path: '/v2/workspace/emailconfig/update',
    entry: 'functions/workspace/emailconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
  },
  {
    path: '/v2/workspace/emailconfig/get',
    entry: 'functions/workspace/emailconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    extension: true,
  },
  {
    path: '/v2/workspace/apikeyconfig/update',
    entry: 'functions/workspace/apikeyconfig-update.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
    extension: true,
  },
  {
    path: '/v2/workspace/apikeyconfig/get',
    entry: 'functions/workspace/apikeyconfig-get.ts',
    auth: 'apiKey',
    table: 'read',
    extension: true,
  },
  // Advanced webhook endpoints (docs/decisions.md §11): after the area's other entries (docs/operating.md, "Deploy").
  {
    path: '/v2/workspace/advancedwebhook/endpoints/create',
    entry: 'functions/workspace/advancedwebhook-endpoints-create.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/get',
    entry: 'functions/workspace/advancedwebhook-endpoints-get.ts',
    auth: 'apiKey',
    table: 'read',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/update',
    entry: 'functions/workspace/advancedwebhook-endpoints-update.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/delete',
    entry: 'functions/workspace/advancedwebhook-endpoints-delete.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/secret/get',
    entry: 'functions/workspace/advancedwebhook-endpoints-secret-get.ts',
    auth: 'apiKey',
    table: 'read',
    kms: ['decrypt'],
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/secret/rotate',
    entry: 'functions/workspace/advancedwebhook-endpoints-secret-rotate.ts',
    auth: 'apiKey',
    table: 'write',
    kms: ['encrypt'],
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/endpoints/recover',
    entry: 'functions/workspace/advancedwebhook-endpoints-recover.ts',
    auth: 'apiKey',
    table: 'write',
    indexes: ['gsi2'],
    queue: 'send',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/messages/get',
    entry: 'functions/workspace/advancedwebhook-messages-get.ts',
    auth: 'apiKey',
    table: 'read',
    // The tenant's messages (gsi1), an organization's (gsi2), an endpoint's deliveries (gsi1).
    indexes: ['gsi1', 'gsi2'],
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/messages/resend',
    entry: 'functions/workspace/advancedwebhook-messages-resend.ts',
    auth: 'apiKey',
    table: 'write',
    queue: 'send',
    extension: true,
  },
  {
    path: '/v2/workspace/advancedwebhook/attempts/get',
    entry: 'functions/workspace/advancedwebhook-attempts-get.ts',
    auth: 'apiKey',
    table: 'read',
    // A message's attempts are in its partition; an endpoint's in gsi1.
    indexes: ['gsi1'],
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
    extension: true,
  },
  {
    path: '/v2/crdt/add',
    entry: 'functions/crdt/add.ts',
    auth: 'apiKey',
    table: 'write',
    // Sends the new editor's content to live connections already open on it (decisions §13).
    connections: 'manage',
  },
  {
    path: '/v2/crdt/get',
    entry: 'functions/crdt/get.ts',
    auth: 'apiKey',
    table: 'read',
  },
  {
    path: '/v2/crdt/update',
    entry: 'functions/crdt/update.ts',
    auth: 'apiKey',
    table: 'write',
    // Sends the change to the editor's open live connections (decisions §13).
    connections: 'manage',
    extension: true,
  },
  {
    path: '/v2/crdt/versions/create',
    entry: 'functions/crdt/versions-create.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/crdt/versions/get',
    entry: 'functions/crdt/versions-get.ts',
    auth: 'apiKey',
    table: 'read',
    extension: true,
  },
  {
    path: '/v2/crdt/versions/restore',
    entry: 'functions/crdt/versions-restore.ts',
    auth: 'apiKey',
    table: 'write',
    // The restore is an edit: sent to the editor's open live connections (decisions §14).
    connections: 'manage',
    extension: true,
  },
  {
    path: '/v2/crdt/versions/delete',
    entry: 'functions/crdt/versions-delete.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/crdt/live/authorize',
    entry: 'functions/crdt/live-authorize.ts',
    auth: 'apiKey',
    // Creates the editor empty when it does not exist and `type` is sent.
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/recordings/add',
    entry: 'functions/recordings/add.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/recordings/get',
    entry: 'functions/recordings/get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1', 'gsi2'],
  },
  {
    path: '/v2/commentannotations/add',
    entry: 'functions/comments/annotations-add.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/commentannotations/get',
    entry: 'functions/comments/annotations-get.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi1', 'gsi2', 'gsi3'],
    extension: true,
  },
  {
    path: '/v2/commentannotations/update',
    entry: 'functions/comments/annotations-update.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/commentannotations/delete',
    entry: 'functions/comments/annotations-delete.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/commentannotations/count',
    entry: 'functions/comments/annotations-count.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi3', 'gsi10'],
    extension: true,
  },
  {
    path: '/v2/commentannotations/read',
    entry: 'functions/comments/annotations-read.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/commentannotations/comments/add',
    entry: 'functions/comments/comments-add.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/commentannotations/comments/get',
    entry: 'functions/comments/comments-get.ts',
    auth: 'apiKey',
    table: 'read',
    extension: true,
  },
  {
    path: '/v2/commentannotations/comments/update',
    entry: 'functions/comments/comments-update.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/commentannotations/comments/delete',
    entry: 'functions/comments/comments-delete.ts',
    auth: 'apiKey',
    table: 'write',
    extension: true,
  },
  {
    path: '/v2/rewriter/ask-ai',
    entry: 'functions/rewriter/ask-ai.ts',
    auth: 'apiKey',
    table: 'read',
    kms: ['decrypt'],
    calls: ['ai-providers'],
  },
  {
    path: '/v2/memory/suggest',
    entry: 'functions/memory/suggest.ts',
    auth: 'apiKey',
    table: 'read',
    indexes: ['gsi5'],
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
    summary:
      "Opens a live connection: checks the session token and the user's access, records the connection in its room.",
  },
  {
    routeKey: '$default',
    id: 'LiveMessage',
    entry: 'functions/live/message.ts',
    table: 'write',
    connections: 'manage',
    summary:
      'Handles one frame of a live connection: sync, updates (stored, then relayed), presence, access re-checks.',
  },
  {
    routeKey: '$disconnect',
    id: 'LiveDisconnect',
    entry: 'functions/live/disconnect.ts',
    table: 'write',
    connections: 'manage',
    summary: "Closes a live connection: removes it from its room and its clients' presence for everyone else.",
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
