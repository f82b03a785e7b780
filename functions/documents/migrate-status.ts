import * as z from 'zod/mini';
import { MIGRATION_STATUSES } from '../../shared/db/migration';
import { migrationStatus } from '../../shared/domain/migration';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  migrationId: clientId(),
});

/** `error` only when the migration failed (docs/decisions.md §5). */
export const result = answer(
  z.object({ migrationId: z.string(), status: z.enum(MIGRATION_STATUSES), error: z.optional(z.string()) }),
);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const status = await migrationStatus(caller.apiKeyId, data.organizationId, data.migrationId);
    return { message: 'Migration status retrieved successfully.', data: status };
  },
});
