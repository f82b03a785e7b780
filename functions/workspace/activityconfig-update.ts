import { updateActivityConfig } from '../../shared/domain/activity-config';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { activityConfigData } from '../../shared/http/workspace-results';
import * as z from 'zod/mini';
import { atLeastOneOf, triggerMap } from '../../shared/http/schemas';

export const schema = z.object({
  activityServiceConfig: atLeastOneOf(
    z.object({
      isEnabled: z.optional(z.boolean()),
      enabledTime: z.optional(z.int().check(z.nonnegative('Must not be negative.'))),
      immutable: z.optional(z.boolean()),
      triggers: z.optional(z.object({ comment: z.optional(triggerMap()) })),
    }),
    ['isEnabled', 'enabledTime', 'immutable', 'triggers'],
    'Must contain at least one field.',
  ),
});

export const result = answer(activityConfigData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const activityServiceConfig = await updateActivityConfig(caller.apiKeyId, data.activityServiceConfig);
    return { message: 'Activity config updated successfully.', data: { activityServiceConfig } };
  },
});
