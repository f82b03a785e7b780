/**
 * The signing secret of an advanced webhook endpoint (docs/decisions.md §11): made by the server, `whsec_` and the
 * base64 of 24 random bytes, the form the `standardwebhooks` and `svix` verifiers take as it is. Stored sealed
 * under an encryption context that binds it to its tenant and endpoint (shared/crypto/encryption.ts).
 */
import { randomBytes } from 'node:crypto';
import type { EncryptionContext } from './encryption';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 24;

export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export const endpointSecretContext = (apiKeyId: string, endpointId: string): EncryptionContext => ({
  purpose: 'webhook-endpoint-secret',
  apiKeyId,
  endpointId,
});
