import * as z from 'zod/mini';
import { migrationStatus } from '../../shared/domain/migration';
import { operation } from '../../shared/http/operation';
import { clientId } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  migrationId: clientId(),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const status = await migrationStatus(caller.apiKeyId, data.organizationId, data.migrationId);
    return { message: 'Migration status retrieved successfully.', data: status };
  },
});
