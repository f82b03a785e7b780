import * as z from 'zod/mini';
import { getUsers } from '../../shared/domain/user-listing';
import { operation } from '../../shared/http/operation';
import {
  ALL_DOCUMENTS_ALONE,
  GROUP_BY_DOCUMENT_NEEDS_ALL_DOCUMENTS,
  NOT_BOTH_DOCUMENT_AND_FOLDER,
  clientId,
  documentedRules,
  levelFields,
  listOf,
  notBothDocumentAndFolder,
  pageSize,
  pageToken,
} from '../../shared/http/schemas';

export const schema = documentedRules(
  z
    .object({
      ...levelFields,
      userIds: z.optional(listOf(clientId(), 30)),
      organizationUserGroupIds: z.optional(listOf(clientId(), 30)),
      allDocuments: z.optional(z.boolean()),
      groupByDocumentId: z.optional(z.boolean()),
      pageSize: pageSize(),
      pageToken: z.optional(pageToken()),
    })
    .check(
      notBothDocumentAndFolder(),
      z.refine((data) => !(data.allDocuments && (data.documentId !== undefined || data.folderId !== undefined)), {
        message: 'allDocuments cannot be combined with documentId or folderId.',
        path: ['allDocuments'],
      }),
      z.refine((data) => !data.groupByDocumentId || data.allDocuments === true, {
        message: 'groupByDocumentId works only with allDocuments: true.',
        path: ['groupByDocumentId'],
      }),
    ),
  {
    allOf: [NOT_BOTH_DOCUMENT_AND_FOLDER, ALL_DOCUMENTS_ALONE, GROUP_BY_DOCUMENT_NEEDS_ALL_DOCUMENTS],
  },
);

const user = z.object({
  userId: z.string(),
  name: z.optional(z.string()),
  email: z.optional(z.string()),
  initial: z.optional(z.string()),
  accessRole: z.enum(['viewer', 'editor']),
  documentId: z.optional(z.string()),
});

/** A page of users, or with `groupByDocumentId` the page's users grouped by document id. */
export const result = z.object({
  message: z.string(),
  data: z.union([z.array(user), z.record(z.string(), z.array(user))]),
  nextPageToken: z.optional(z.string()),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const { users, nextPageToken } = await getUsers(caller.apiKeyId, data);
    return { message: 'Users retrieved successfully.', data: users, nextPageToken };
  },
});
