import * as z from 'zod/mini';
import { startMigration } from '../../shared/domain/migration';
import { operation } from '../../shared/http/operation';
import { clientId } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  newDocumentId: clientId(),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const migrationId = await startMigration(caller.apiKeyId, data);
    return { message: 'Document migration started.', data: { migrationId } };
  },
});
