/**
 * Result shapes two operations of the workspace area share (a get and its update; Create Workspace and Get API
 * Keys); handlers wrap them with the builders of results.ts. Functions, so that a bundle without those operations
 * leaves them out. Field lists: docs/api-spec.md "Resources and their fields", docs/decisions.md §10.
 */
import * as z from 'zod/mini';
import { AI_PROVIDERS } from '../db/ai-key-config';
import { API_KEY_TYPES } from '../db/api-key';
import { EMAIL_SERVICE_TYPES } from '../db/email-config';

/** Triggers by event type, each on or off (a map, not a list). */
const triggerStates = () => z.record(z.string(), z.boolean());

/** An API key entry: a value of Create Workspace's `apiKeyList`, an item of Get API Keys. */
export const apiKeyEntry = () => z.object({ id: z.string(), apiKeyName: z.string(), type: z.enum(API_KEY_TYPES) });

/** An auth token of an API key, in clear (Get Auth Tokens, Reset Auth Token). */
export const readableToken = () => z.object({ token: z.string(), name: z.string(), domains: z.array(z.string()) });

/** `{activityServiceConfig}` as stored after the call; `isEnabled` always present. */
export const activityConfigData = () =>
  z.object({
    activityServiceConfig: z.object({
      isEnabled: z.boolean(),
      enabledTime: z.optional(z.int().check(z.nonnegative())),
      immutable: z.optional(z.boolean()),
      triggers: z.optional(z.object({ comment: z.optional(triggerStates()) })),
    }),
  });

/** `{useEmailService, emailServiceConfig}` as stored after the call; the provider `apiKey` masked. */
export const emailConfigData = () =>
  z.object({
    useEmailService: z.boolean(),
    emailServiceConfig: z.object({
      type: z.optional(z.enum(EMAIL_SERVICE_TYPES)),
      apiKey: z.optional(z.string()),
      fromEmail: z.optional(z.string()),
      fromCompany: z.optional(z.string()),
      triggers: z.optional(triggerStates()),
    }),
  });

/** `{aiModelApiKey}`: one entry per provider with a key, the key masked; `[]` when none. */
export const aiKeyConfigData = () =>
  z.object({ aiModelApiKey: z.array(z.object({ provider: z.enum(AI_PROVIDERS), customerApiKey: z.string() })) });

/** The whole advanced webhook configuration (docs/decisions.md §11), defaults filled in. */
export const webhookConfigData = () =>
  z.object({
    isEnabled: z.boolean(),
    encodeData: z.boolean(),
    encryptData: z.boolean(),
    publicKey: z.string(),
    enableDataProtection: z.boolean(),
  });

/**
 * An advanced webhook endpoint (docs/api-spec.md "Advanced webhook endpoint"): optional fields null where not set,
 * `metadata` included (null when never given), timestamps ISO 8601; never its secret.
 */
export const webhookEndpointData = () =>
  z.object({
    id: z.string(),
    url: z.string(),
    description: z.nullable(z.string()),
    filterTypes: z.nullable(z.array(z.string())),
    channels: z.nullable(z.array(z.string())),
    disabled: z.boolean(),
    rateLimit: z.nullable(z.int().check(z.minimum(1))),
    uid: z.nullable(z.string()),
    metadata: z.nullable(z.record(z.string(), z.string())),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  });

/** `{endpointId, secret}`: an endpoint's signing secret in clear (`whsec_…`). */
export const webhookEndpointSecretData = () => z.object({ endpointId: z.string(), secret: z.string() });
