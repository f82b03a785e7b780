import * as z from 'zod/mini';
import { FEATURE_TYPES, MAX_RECORD_BYTES, addActivities } from '../../shared/domain/activities';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import {
  clientId,
  documentedRules,
  requires,
  jsonObject,
  maybeEmptyText,
  nonEmptyText,
  uniqueListOf,
  userReference,
} from '../../shared/http/schemas';

// The document states the first refine: a custom activity names its target.
const activity = documentedRules(
  z
    .object({
      id: z.optional(clientId()),
      featureType: z.enum(FEATURE_TYPES),
      actionType: nonEmptyText(200),
      actionUser: z.optional(userReference()),
      targetEntityId: z.optional(clientId()),
      targetSubEntityId: z.optional(clientId()),
      changes: z.optional(jsonObject(MAX_RECORD_BYTES)),
      entityData: z.optional(z.unknown()),
      entityTargetData: z.optional(z.unknown()),
      displayMessageTemplate: z.optional(maybeEmptyText(5000)),
      displayMessageTemplateData: z.optional(jsonObject(MAX_RECORD_BYTES)),
      actionIcon: z.optional(maybeEmptyText(2000)),
      isActivityResolverUsed: z.optional(z.boolean()),
    })
    .check(
      z.refine((a) => a.featureType !== 'custom' || a.targetEntityId !== undefined, {
        message: 'Required when featureType is custom.',
        path: ['targetEntityId'],
      }),
      z.refine(
        (a) => Buffer.byteLength(JSON.stringify(a)) <= MAX_RECORD_BYTES,
        `Must be at most ${MAX_RECORD_BYTES / 1024} KB as JSON.`,
      ),
    ),
  {
    if: { properties: { featureType: { const: 'custom' } }, required: ['featureType'] },
    then: requires('targetEntityId'),
  },
);

export const schema = z.object({
  organizationId: clientId(),
  documentId: z.optional(clientId()),
  // Records without an id get a new one, so only the ids given can repeat.
  activities: uniqueListOf(activity, 'id', 'an id', { min: 1 }),
});

/** The batch is all or nothing: a success names how many records were added, found unchanged and skipped. */
export const result = answer(z.object({ success: z.literal(true), message: z.string() }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const message = await addActivities(caller.apiKeyId, data);
    // `satisfies` keeps `success` the literal the result names (inference alone widens it to boolean).
    return { message, data: { success: true, message } } satisfies z.input<typeof result>;
  },
});
