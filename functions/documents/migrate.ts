import * as z from 'zod/mini';
import { startMigration } from '../../shared/domain/migration';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  newDocumentId: clientId(),
});

export const result = answer(z.object({ migrationId: z.string() }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const migrationId = await startMigration(caller.apiKeyId, data);
    return { message: 'Document migration started.', data: { migrationId } };
  },
});
