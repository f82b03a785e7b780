/** Schema pieces of the notification operations. */
import * as z from 'zod/mini';
import { jsonObject, text, userReference } from './schemas';

/** The content fields a notification can be added or updated with. */
export const notificationContent = {
  actionUser: z.optional(userReference()),
  displayHeadlineMessageTemplate: z.optional(text(5000)),
  displayHeadlineMessageTemplateData: z.optional(jsonObject()),
  displayBodyMessage: z.optional(text(20000)),
  notificationSourceData: z.optional(jsonObject()),
};

export const configLevel = () => z.enum(['ALL', 'MINE', 'NONE']);
