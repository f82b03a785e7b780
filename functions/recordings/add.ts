import * as z from 'zod/mini';
import { addRecordings, noDuplicateAnnotationIds, recordingSchema } from '../../shared/domain/recordings';
import { operation } from '../../shared/http/operation';
import { clientId, listOf } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  recordings: listOf(recordingSchema()).check(z.minLength(1, 'Must have at least 1 item.'), noDuplicateAnnotationIds()),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const result = await addRecordings(caller.apiKeyId, data);
    return { message: 'Recordings added successfully.', data: result };
  },
});
