import * as z from 'zod/mini';
import { deleteUsers } from '../../shared/domain/users';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import {
  NOT_BOTH_DOCUMENT_AND_FOLDER,
  documentedRules,
  levelFields,
  nonEmptyUniqueIds,
  notBothDocumentAndFolder,
} from '../../shared/http/schemas';

export const schema = documentedRules(
  z
    .object({
      ...levelFields,
      userIds: nonEmptyUniqueIds('a user id'),
    })
    .check(notBothDocumentAndFolder()),
  NOT_BOTH_DOCUMENT_AND_FOLDER,
);

/** Keyed by userId. */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Users deleted successfully.',
    data: await deleteUsers(caller.apiKeyId, data),
  }),
});
