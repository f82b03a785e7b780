import { readActivityConfig } from '../../shared/domain/activity-config';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';

export const schema = z.object({});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ caller }) => {
    const activityServiceConfig = await readActivityConfig(caller.apiKeyId);
    return { message: 'Activity config retrieved successfully.', data: { activityServiceConfig } };
  },
});
