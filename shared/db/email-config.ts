/**
 * The email service configuration of a tenant (one item).
 *
 *   pk T#<apiKeyId>   sk CONFIG#EMAIL   config, version
 *
 * The provider API key is kept apart from the settings as its ciphertext plus the masked form: reads (the get
 * route has no KMS grant) show the masked form and never decrypt; the clear key is never stored.
 */
import type { SealedSecret } from '../crypto/sealed-secret';
import { versionedConfig, type ConfigPlanner, type Versioned } from './versioned-item';

export const EMAIL_SERVICE_TYPES = ['default', 'sendgrid', 'custom'] as const;

export type EmailServiceType = (typeof EMAIL_SERVICE_TYPES)[number];

/** The settings shown as `emailServiceConfig`, except the provider key. */
export interface EmailSettings {
  type?: EmailServiceType;
  fromEmail?: string;
  fromCompany?: string;
  triggers?: Record<string, boolean>;
}

export interface EmailConfigRecord {
  useEmailService?: boolean;
  emailServiceConfig: EmailSettings;
  providerKey?: SealedSecret;
}

export type StoredEmailConfig = Versioned<EmailConfigRecord>;

const store = versionedConfig<EmailConfigRecord>('EMAIL');

export const getEmailConfig = (apiKeyId: string) => store.get(apiKeyId);
export const emailConfigKey = store.key;
export const toEmailConfig = store.fromItem;

/**
 * Applies the write `plan` makes from the stored config (see versioned-item.ts) and returns the config as stored
 * after it. Throws what `plan` throws, and AbortedError when the stored shape kept changing under the plans.
 */
export const writeEmailConfig = (apiKeyId: string, plan: ConfigPlanner<EmailConfigRecord>) =>
  store.write(apiKeyId, plan);
