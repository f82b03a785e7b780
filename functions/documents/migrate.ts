import * as z from 'zod/mini';
import { startMigration } from '../../shared/domain/migration';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId, withServerRules } from '../../shared/http/schemas';

// The domain checks the rule (startMigration), for its message; the document states it.
export const schema = withServerRules(
  z.object({
    organizationId: clientId(),
    documentId: clientId(),
    newDocumentId: clientId(),
  }),
  [
    {
      rule: 'differs',
      property: 'newDocumentId',
      other: 'documentId',
      description: 'newDocumentId must differ from documentId.',
    },
  ],
);

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
