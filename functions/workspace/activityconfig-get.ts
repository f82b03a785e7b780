import { readActivityConfig } from '../../shared/domain/activity-config';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { activityConfigData } from '../../shared/http/workspace-results';
import * as z from 'zod/mini';

export const schema = z.object({});

export const result = answer(activityConfigData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ caller }) => {
    const activityServiceConfig = await readActivityConfig(caller.apiKeyId);
    return { message: 'Activity config retrieved successfully.', data: { activityServiceConfig } };
  },
});
