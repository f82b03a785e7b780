import * as z from 'zod/mini';
import { createVersion } from '../../shared/domain/crdt/versions';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId, nonEmptyText, versionResult } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  editorId: clientId(),
  /** 1–200 characters. */
  name: z.optional(nonEmptyText(200)),
  /** Who asks for the version: kept on it as `createdBy`. */
  userId: z.optional(clientId()),
});

export const result = answer(versionResult);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Version created.',
    data: await createVersion(caller.apiKeyId, data),
  }),
});
