/**
 * Authorize Live Session (decisions §13, `/v2/crdt/live/authorize`): the customer's server asks for a session for
 * one of its users on one editor, and gets what the browser needs to connect with the stock WebsocketProvider.
 */
import { config } from '../../core/config';
import { AlreadyExistsError, NotFoundError, PermissionDeniedError } from '../../core/errors';
import { editorIncarnation, type CrdtType } from '../../db/crdt';
import type { LiveEditorRef } from '../../db/live-connection';
import { createLiveToken } from '../../db/live-token';
import type { Role } from '../../db/membership';
import { getDocument, organizationExists } from '../../db/organization';
import { addCrdtData } from '../crdt/operations';
import { LOCAL_LIVE_PATH } from '../../routes';
import { liveRoleOf } from './access';

export const DEFAULT_EXPIRES_IN_SECONDS = 3600;

export interface AuthorizeInput {
  organizationId: string;
  documentId: string;
  editorId: string;
  userId: string;
  type?: CrdtType;
  contentKey?: string;
  expiresIn?: number;
}

export interface LiveSessionGrant {
  token: string;
  serverUrl: string;
  room: string;
  accessRole: Role;
  expiresAt: number;
}

/**
 * The room name of an editor: what the browser passes to the provider (it becomes the last segment of the URL).
 * URL-safe and opaque; the service checks it against the token, which alone names the editor.
 */
export function roomOf(ref: Omit<LiveEditorRef, 'apiKeyId'>): string {
  return Buffer.from(JSON.stringify([ref.organizationId, ref.documentId, ref.editorId]), 'utf8').toString('base64url');
}

/**
 * A session for `input.userId` on the editor. Throws NotFoundError for an unknown organization or document, or an
 * editor that does not exist without `type`; PermissionDeniedError when the user has no access now; what
 * `/v2/crdt/add` throws when `type` creates the editor (input rules, a migration).
 */
export async function authorizeLiveSession(
  apiKeyId: string,
  input: AuthorizeInput,
  host: string,
  now = Date.now(),
): Promise<LiveSessionGrant> {
  const ref = {
    apiKeyId,
    organizationId: input.organizationId,
    documentId: input.documentId,
    editorId: input.editorId,
  };
  if (!(await organizationExists(apiKeyId, input.organizationId))) throw new NotFoundError('Organization not found.');
  if ((await getDocument(apiKeyId, input.organizationId, input.documentId)) === undefined)
    throw new NotFoundError('Document not found.');
  const role = await liveRoleOf(ref, input.userId, now);
  if (role === null) throw new PermissionDeniedError('User has no access to this document.');
  if ((await editorIncarnation(apiKeyId, ref)) === undefined) {
    if (input.type === undefined) throw new NotFoundError('Editor not found.');
    try {
      await addCrdtData(
        apiKeyId,
        { ...ref, type: input.type, contentKey: input.contentKey, data: emptyData(input.type), userId: input.userId },
        now,
      );
    } catch (error) {
      // Created by another authorize (or an add) meanwhile: that editor is the one to join.
      if (!(error instanceof AlreadyExistsError)) throw error;
    }
  }
  const expiresAt = now + (input.expiresIn ?? DEFAULT_EXPIRES_IN_SECONDS) * 1000;
  return {
    token: await createLiveToken({ ...ref, userId: input.userId, expiresAt }),
    serverUrl: config.liveUrl ?? `ws://${host}${LOCAL_LIVE_PATH}`,
    room: roomOf(ref),
    accessRole: role,
    expiresAt,
  };
}

/** The empty content of each type, as `/v2/crdt/add` takes it. */
function emptyData(type: CrdtType): unknown {
  switch (type) {
    case 'text':
    case 'xml':
      return '';
    case 'map':
      return {};
    case 'array':
      return [];
  }
}
