/**
 * A customer secret at rest (an email provider key, an AI provider key): its Encryption SDK ciphertext, bound to
 * tenant and purpose by the encryption context, beside the masked form that responses show. Reads show the masked
 * form and never decrypt; the clear secret is never stored.
 *
 * This module does not load the Encryption SDK: update handlers pass `encryptSecret` / `maskSecret` in, so the
 * functions that only read a configuration (no KMS grant) are bundled without it.
 */
import { invalidFields } from '../core/errors';
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

/**
 * What an update does to a stored secret. `keep` with `masked`: the request sent the stored secret's masked form
 * back, which keeps the secret only while it is still the one with that mask (the write's condition).
 */
export type SecretChange =
  { action: 'keep'; masked?: string } | { action: 'clear' } | { action: 'replace'; secret: SealedSecret };

/**
 * Encrypts a secret under `context` and masks it, at most once per sealer: an update planned again after a
 * concurrent write does not encrypt again.
 */
export function sealer(
  sealing: SecretSealing,
  context: EncryptionContext,
): (plaintext: string) => Promise<SealedSecret> {
  let sealed: Promise<SealedSecret> | undefined;
  return (plaintext) =>
    (sealed ??= sealing
      .encryptSecret(plaintext, context)
      .then((ciphertext) => ({ ciphertext, masked: sealing.maskSecret(plaintext) })));
}

/**
 * Whether `sent` has the shape maskSecret gives (asterisks, at least four, then at most four visible characters):
 * what a client sends back after saving what a read returned. No provider issues keys of that shape, so it is
 * never taken for a new secret.
 */
export function isMaskedForm(sent: string): boolean {
  const hidden = Math.max(4, sent.length - 4);
  return sent.length >= 4 && /^\*+$/.test(sent.slice(0, hidden));
}

/**
 * What a sent secret does: absent keeps the stored one, `""` clears it, and the stored masked form sent back (a
 * client saving what a read returned) keeps it. Any other masked form is refused, never stored as the secret:
 * with no secret stored (e.g. cleared since the client read it) or another one stored there is nothing it can
 * keep. Anything else replaces the secret, sealed by `seal`. Throws InvalidArgumentError naming `path` (the
 * field in the request), without echoing what was sent.
 */
export async function secretChange(
  sent: string | undefined,
  stored: SealedSecret | undefined,
  seal: (plaintext: string) => Promise<SealedSecret>,
  path: string,
): Promise<SecretChange> {
  if (sent === undefined) return { action: 'keep' };
  if (sent === '') return { action: 'clear' };
  if (isMaskedForm(sent)) {
    if (stored !== undefined && sent === stored.masked) return { action: 'keep', masked: sent };
    const message =
      stored === undefined
        ? 'Is a masked key, but no key is stored to keep: send the key itself.'
        : 'Is a masked key that does not match the stored key: send the key itself, or the masked form a read returns to keep the stored key.';
    throw invalidFields([{ path, message }]);
  }
  return { action: 'replace', secret: await seal(sent) };
}
