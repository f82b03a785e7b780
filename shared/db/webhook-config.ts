/**
 * The advanced webhook configuration of a tenant (one item; docs/decisions.md §11).
 *
 *   pk T#<apiKeyId>   sk CONFIG#ADVANCED_WEBHOOK   config, version
 */
import { versionedConfig, type ConfigPlanner } from './versioned-item';

export interface AdvancedWebhookConfig {
  isEnabled?: boolean;
  encodeData?: boolean;
  encryptData?: boolean;
  /** Base64 DER (SubjectPublicKeyInfo) of an RSA key of at least 2048 bits; once set, only replaced. */
  publicKey?: string;
  enableDataProtection?: boolean;
}

const store = versionedConfig<AdvancedWebhookConfig>('ADVANCED_WEBHOOK');

export const getWebhookConfig = (apiKeyId: string) => store.get(apiKeyId);

/** Applies the write `plan` makes from the stored config (see versioned-item.ts) and returns the config as stored after it. */
export const writeWebhookConfig = (apiKeyId: string, plan: ConfigPlanner<AdvancedWebhookConfig>) =>
  store.write(apiKeyId, plan);
