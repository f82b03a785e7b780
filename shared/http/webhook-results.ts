/** Result schemas of the advanced webhook message and attempt operations (docs/decisions.md §11). */
import * as z from 'zod/mini';
import { clientObject } from './results';

const deliveryStatus = () => z.enum(['pending', 'success', 'failed']);

/** A message with its deliveries (messages/get); times in ms. */
export const webhookMessage = () =>
  z.object({
    id: z.string(),
    type: z.string(),
    timestamp: z.int(),
    organizationId: z.string(),
    documentId: z.optional(z.string()),
    /** The body as sent: `{type, timestamp, data}`, or with `encodedData` / encrypted data per the configuration. */
    payload: clientObject(),
    deliveries: z.array(
      z.object({
        endpointId: z.string(),
        status: deliveryStatus(),
        attempts: z.int(),
        nextAttemptAt: z.optional(z.int()),
      }),
    ),
  });

/** One attempt of a delivery (attempts/get); times in ms. */
export const webhookAttempt = () =>
  z.object({
    id: z.string(),
    messageId: z.string(),
    endpointId: z.string(),
    attempt: z.int(),
    timestamp: z.int(),
    url: z.string(),
    status: z.enum(['success', 'failed']),
    /** 0 when no response arrived. */
    responseStatusCode: z.int(),
    /** The first 1 KB of the response body. */
    responseBody: z.string(),
    error: z.optional(z.string()),
    durationMs: z.int(),
  });
