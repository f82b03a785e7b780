import * as z from 'zod/mini';
import { listEmails } from '../../shared/domain/email/log';
import { emailLogEntry } from '../../shared/http/email-results';
import { operation } from '../../shared/http/operation';
import { pageWithPageToken } from '../../shared/http/results';
import { clientId, pageSize, pageToken } from '../../shared/http/schemas';

export const schema = z.object({
  notificationId: z.optional(clientId()),
  userId: z.optional(clientId()),
  pageSize: pageSize(250, 50),
  pageToken: z.optional(pageToken()),
});

export const result = pageWithPageToken(emailLogEntry());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const page = await listEmails(caller.apiKeyId, data);
    return { message: 'Emails retrieved successfully.', data: page.emails, pageToken: page.pageToken };
  },
});
