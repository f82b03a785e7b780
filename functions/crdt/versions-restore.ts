import * as z from 'zod/mini';
import { restoreVersion } from '../../shared/domain/crdt/versions';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  editorId: clientId(),
  versionId: clientId(),
  /** Who restores: the restore edit's author, kept on the `restore` version as `createdBy`. */
  userId: z.optional(clientId()),
});

/** The `restore` version that keeps the content before the restore, and the version restored. */
export const result = answer(z.object({ versionId: z.string(), restoredVersionId: z.string() }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Version restored.',
    // The converters load only for an xml editor, whose restore goes through y-prosemirror's diff.
    data: await restoreVersion(
      caller.apiKeyId,
      data,
      Date.now(),
      () => import('../../shared/domain/crdt/formats/index'),
    ),
  }),
});
