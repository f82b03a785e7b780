/**
 * Notification settings (docs/decisions.md §6): levels ALL, MINE, NONE for `inbox` and `email`, per user at the
 * organization and per document. A document's level falls back, field by field, to the user's organization
 * level, then to ALL.
 */
import {
  CONFIG_LEVELS,
  getConfigs,
  setConfigItem,
  type NotificationConfig,
  type StoredConfig,
} from '../db/notification';
import { notWritten, reportOf } from './batch-result';
import { assertDocumentsWritable, documentsIn, writeGroupsGuarded } from './document-locks';
import { withoutUndefined } from '../core/objects';

export { CONFIG_LEVELS };

const DEFAULT: NotificationConfig = { inbox: 'ALL', email: 'ALL' };

/** A document's (or the organization's) own levels, falling back to the organization's, then to ALL. */
const resolveLevels = (own: StoredConfig, organization: StoredConfig): NotificationConfig => ({
  inbox: own.inbox ?? organization.inbox ?? DEFAULT.inbox,
  email: own.email ?? organization.email ?? DEFAULT.email,
});

export interface ConfigEntry {
  config: NotificationConfig;
  metadata: { organizationId: string; apiKey: string; documentId?: string; userId: string };
}

/** Entries for each requested document and, with `getOrganizationConfig`, for the organization. */
export async function readNotificationConfig(
  apiKeyId: string,
  input: { organizationId: string; userId: string; documentIds?: string[]; getOrganizationConfig?: boolean },
): Promise<ConfigEntry[]> {
  const documentIds = input.documentIds ?? [];
  const stored = await getConfigs(apiKeyId, input.organizationId, [input.userId], documentIds);
  const organization = stored.get(`${input.userId}\u0000`) ?? {};
  const resolve = (own: StoredConfig): NotificationConfig => resolveLevels(own, organization);
  const metadata = { organizationId: input.organizationId, apiKey: apiKeyId, userId: input.userId };
  const entries: ConfigEntry[] = documentIds.map((documentId) => ({
    config: resolve(stored.get(`${input.userId}\u0000${documentId}`) ?? {}),
    metadata: { ...metadata, documentId },
  }));
  if (input.getOrganizationConfig) entries.unshift({ config: resolve({}), metadata });
  return entries;
}

/**
 * Each user's levels for a document as they apply (its document entry, then the organization entry, then ALL,
 * field by field): what the email planner checks for each recipient. One BatchGetItem per 50 users.
 */
export async function effectiveConfigs(
  apiKeyId: string,
  organizationId: string,
  userIds: readonly string[],
  documentId: string,
): Promise<Map<string, NotificationConfig>> {
  const stored = await getConfigs(apiKeyId, organizationId, userIds, [documentId]);
  return new Map(
    userIds.map((userId) => {
      return [
        userId,
        resolveLevels(stored.get(`${userId}\u0000${documentId}`) ?? {}, stored.get(`${userId}\u0000`) ?? {}),
      ];
    }),
  );
}

/** One user's result: with `userId` when the settings were written; without it when not (notWritten). */
export interface ConfigSetResult {
  success: boolean;
  message: string;
  userId?: string;
}

/**
 * Sets the given levels for each user, at the organization or at each document; levels not given are kept.
 * Settings of a document are written with its migration-lock check: throws FailedPreconditionError (nothing
 * written) when a named document is being migrated.
 */
export async function setNotificationConfig(
  apiKeyId: string,
  input: { organizationId: string; userIds: string[]; documentIds?: string[]; config: StoredConfig },
): Promise<Record<string, ConfigSetResult>> {
  const targets = input.documentIds ?? [undefined];
  await assertDocumentsWritable(apiKeyId, documentsIn(input.organizationId, input.documentIds ?? []));
  const given: StoredConfig = withoutUndefined(input.config);
  // One group per user (at most 30 documents: 60 items with their lock checks), so each user's settings are
  // written whole or not at all.
  const writes = input.userIds.map((userId) => ({
    items: targets.map((documentId) => setConfigItem(apiKeyId, input.organizationId, userId, documentId, given)),
    documents: documentsIn(input.organizationId, input.documentIds ?? []),
  }));
  const report = await reportOf(writeGroupsGuarded(apiKeyId, writes));
  return Object.fromEntries(
    input.userIds.map((userId, u) => [
      userId,
      report.written(u) ? { success: true, userId, message: 'Notification config set.' } : notWritten(report.failure),
    ]),
  );
}
