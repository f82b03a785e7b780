import { addPermissions } from '../../shared/domain/permissions';
import { operation } from '../../shared/http/operation';
import { messageOnly } from '../../shared/http/results';
import {
  accessRole,
  clientId,
  documentedRules,
  nonEmptyListOf,
  RESOURCE_ORGANIZATION_RULE,
  withServerRules,
} from '../../shared/http/schemas';
import * as z from 'zod/mini';

/** 9999-12-31T23:59:59Z: a larger value is almost surely milliseconds, which would never expire. */
const LATEST_EXPIRY_SECONDS = 253402300799;

const resource = documentedRules(
  withServerRules(
    z.object({
      type: z.enum(['organization', 'document', 'folder']),
      id: clientId(),
      organizationId: z.optional(clientId()),
      accessRole: z.optional(accessRole()),
      expiresAt: z.optional(
        z.int().check(z.maximum(LATEST_EXPIRY_SECONDS, `Must be Unix seconds (at most ${LATEST_EXPIRY_SECONDS}).`)),
      ),
    }),
    [{ rule: 'future', property: 'expiresAt', unit: 'seconds', description: 'expiresAt must lie in the future.' }],
  ),
  RESOURCE_ORGANIZATION_RULE,
);

export const schema = z.object({
  user: z.object({ userId: clientId() }),
  permissions: z.object({
    // The domain checks repeats (resolveResources), for its message; the document states the rule. An organization
    // has no organizationId here (RESOURCE_ORGANIZATION_RULE), so the three properties name a resource.
    resources: documentedRules(nonEmptyListOf(resource), {
      uniqueItems: true,
      'x-uniqueItemsBy': ['type', 'organizationId', 'id'],
      description: 'No two items name the same resource (type, organizationId and id).',
    }),
  }),
});

/** All or nothing: the message only (docs/api-spec.md "Add Permissions"). */
export const result = messageOnly();

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    // Organization defaults, future expiry and repeated resources are checked there; nothing is written on failure.
    await addPermissions(caller.apiKeyId, data.user.userId, data.permissions.resources);
    return { message: 'Permissions added successfully.' };
  },
});
