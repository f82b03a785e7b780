import * as z from 'zod/mini';
import { deliveryQueue } from '../../shared/adapters/queue/delivery-queue';
import { RECOVER_WINDOW_MS, recoverEndpoint } from '../../shared/domain/webhooks/messages';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { nonEmptyText, withServerRules } from '../../shared/http/schemas';

const time = () => z.int().check(z.nonnegative('Must be a time in milliseconds.'));

// The domain checks both rules (recoverEndpoint), for its messages; the document states them.
export const schema = withServerRules(
  z.object({
    endpointId: nonEmptyText(100),
    since: time(),
    until: z.optional(time()),
  }),
  [
    {
      rule: 'withinPast',
      property: 'since',
      unit: 'milliseconds',
      seconds: RECOVER_WINDOW_MS / 1000,
      description: `since must be at most ${RECOVER_WINDOW_MS / 86_400_000} days ago.`,
    },
    {
      rule: 'notBefore',
      property: 'until',
      other: 'since',
      defaultsTo: 'now',
      description: 'until (now when absent) must not be before since.',
    },
  ],
);

export const result = answer(z.object({ endpointId: z.string(), recovered: z.int() }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Failed messages of the endpoint queued for delivery again.',
    data: await recoverEndpoint(caller.apiKeyId, data, deliveryQueue()),
  }),
});
