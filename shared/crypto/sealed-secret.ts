/**
 * A customer secret at rest (an email provider key, an AI provider key): its Encryption SDK ciphertext, bound to
 * tenant and purpose by the encryption context, beside the masked form that responses show. Reads show the masked
 * form and never decrypt; the clear secret is never stored.
 *
 * This module does not load the Encryption SDK: update handlers pass `encryptSecret` / `maskSecret` in, so the
 * functions that only read a configuration (no KMS grant) are bundled without it.
 */
import type { EncryptionContext } from './encryption';

export interface SealedSecret {
  /** Encryption SDK message (base64). */
  ciphertext: string;
  /** The secret with all but its last four characters hidden. */
  masked: string;
}

/** The secret functions of shared/crypto/encryption.ts, passed in by the handlers that store secrets. */
export interface SecretSealing {
  encryptSecret: (plaintext: string, context: EncryptionContext) => Promise<string>;
  maskSecret: (secret: string) => string;
}

/** What an update does to a stored secret. */
export type SecretChange = { action: 'keep' } | { action: 'clear' } | { action: 'replace'; secret: SealedSecret };

/**
 * Encrypts a secret under `context` and masks it, at most once per sealer: an update retried after a concurrent
 * write merges again but does not encrypt again.
 */
export function sealer(sealing: SecretSealing, context: EncryptionContext): (plaintext: string) => Promise<SealedSecret> {
  let sealed: Promise<SealedSecret> | undefined;
  return (plaintext) =>
    (sealed ??= sealing.encryptSecret(plaintext, context).then((ciphertext) => ({ ciphertext, masked: sealing.maskSecret(plaintext) })));
}

/**
 * What a sent secret does: absent keeps the stored one, `""` clears it, and the stored masked form sent back (a
 * client saving what a read returned) keeps it too rather than storing the mask as the secret. Anything else
 * replaces it, sealed by `seal`.
 */
export async function secretChange(
  sent: string | undefined,
  stored: SealedSecret | undefined,
  seal: (plaintext: string) => Promise<SealedSecret>,
): Promise<SecretChange> {
  if (sent === undefined || (stored !== undefined && sent === stored.masked)) return { action: 'keep' };
  if (sent === '') return { action: 'clear' };
  return { action: 'replace', secret: await seal(sent) };
}
