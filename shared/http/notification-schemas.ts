/** Schema pieces of the notification operations. */
import * as z from 'zod/mini';
import { clientId } from './schemas';

const MAX_JSON_BYTES = 64 * 1024;

/** A free-form JSON object, at most 64 KB serialised (several fit in one 400 KB item). */
export const jsonObject = () =>
  z.record(z.string(), z.unknown()).check(
    z.refine((value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_JSON_BYTES, 'Must be at most 64 KB as JSON.'),
  );

export const notificationUser = () =>
  z.object({
    userId: clientId(),
    name: z.optional(z.string().check(z.maxLength(256, 'Must be at most 256 characters.'))),
    email: z.optional(z.string().check(z.maxLength(320, 'Must be at most 320 characters.'))),
  });

export const text = (max: number) => z.string().check(z.maxLength(max, `Must be at most ${max} characters.`));

/** The content fields a notification can be added or updated with. */
export const notificationContent = {
  actionUser: z.optional(notificationUser()),
  displayHeadlineMessageTemplate: z.optional(text(5000)),
  displayHeadlineMessageTemplateData: z.optional(jsonObject()),
  displayBodyMessage: z.optional(text(20000)),
  notificationSourceData: z.optional(jsonObject()),
};

export const configLevel = () => z.enum(['ALL', 'MINE', 'NONE']);
