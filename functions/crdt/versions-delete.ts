import * as z from 'zod/mini';
import { removeVersion } from '../../shared/domain/crdt/versions';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  editorId: clientId(),
  versionId: clientId(),
});

export const result = answer(z.object({ versionId: z.string(), deleted: z.literal(true) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    await removeVersion(caller.apiKeyId, data);
    return { message: 'Version deleted.', data: { versionId: data.versionId, deleted: true as const } };
  },
});
