/**
 * A stand-in for AWS KMS on the local stack and in the tests, served in-process as the KMS client's request
 * handler. The Encryption SDK's KMS keyring then runs exactly as it does in AWS (GenerateDataKey to encrypt,
 * Decrypt to decrypt) and every KMS command a handler sends passes through the client's middleware, where the
 * grant check (local/grant-check.ts) holds it against the route's grants.
 *
 * The KMS key is the local AES-256 key (shared/crypto/local-keys.ts). A data key is wrapped with AES-256-GCM under
 * it, bound to the key id and the encryption context as KMS binds them: a wrapped key copied under another context
 * does not decrypt.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { HttpRequest, HttpResponse } from '@smithy/types';
import { canonicalJson } from '../core/canonical-json';

/** The local key's id, shaped like a KMS key ARN (the keyring reads a region out of it). */
export const LOCAL_KMS_KEY_ARN = 'arn:aws:kms:local:000000000000:key/00000000-0000-4000-8000-000000000000';

const BLOB_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface KmsRequest {
  KeyId?: string;
  NumberOfBytes?: number;
  KeySpec?: string;
  CiphertextBlob?: string;
  EncryptionContext?: Record<string, string>;
}

class KmsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** The request handler of a KMS client that answers GenerateDataKey and Decrypt for the one local key. */
export class LocalKmsHandler {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('The local KMS key must be 32 bytes.');
  }

  async handle(request: HttpRequest): Promise<{ response: HttpResponse }> {
    const operation = String(request.headers['x-amz-target'] ?? '').replace(/^TrentService\./, '');
    try {
      const input = JSON.parse(bodyText(request.body)) as KmsRequest;
      return { response: json(200, this.answer(operation, input)) };
    } catch (error) {
      const known =
        error instanceof KmsError ? error : new KmsError('InvalidCiphertextException', 'The ciphertext is invalid.');
      return { response: json(400, { __type: known.type, message: known.message }) };
    }
  }

  private answer(operation: string, input: KmsRequest): Record<string, string> {
    const context = input.EncryptionContext ?? {};
    if (operation === 'GenerateDataKey') {
      if (input.KeyId !== LOCAL_KMS_KEY_ARN)
        throw new KmsError('NotFoundException', `Key ${input.KeyId} does not exist.`);
      const plaintext = randomBytes(input.NumberOfBytes ?? 32);
      return {
        KeyId: LOCAL_KMS_KEY_ARN,
        Plaintext: plaintext.toString('base64'),
        CiphertextBlob: this.wrap(plaintext, context).toString('base64'),
      };
    }
    if (operation === 'Decrypt') {
      const plaintext = this.unwrap(Buffer.from(input.CiphertextBlob ?? '', 'base64'), context);
      return {
        KeyId: LOCAL_KMS_KEY_ARN,
        Plaintext: plaintext.toString('base64'),
        EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
      };
    }
    throw new KmsError('UnsupportedOperationException', `The local KMS does not serve ${operation}.`);
  }

  private aad(context: Record<string, string>): Buffer {
    return Buffer.from(`${LOCAL_KMS_KEY_ARN}\n${canonicalJson(context)}`, 'utf8');
  }

  private wrap(plaintext: Buffer, context: Record<string, string>): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(this.aad(context));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([BLOB_VERSION]), iv, cipher.getAuthTag(), body]);
  }

  /** Throws (InvalidCiphertextException) when the blob was altered or is bound to another context. */
  private unwrap(blob: Buffer, context: Record<string, string>): Buffer {
    if (blob.length < 1 + IV_BYTES + TAG_BYTES || blob[0] !== BLOB_VERSION)
      throw new KmsError('InvalidCiphertextException', 'The ciphertext is invalid.');
    const iv = blob.subarray(1, 1 + IV_BYTES);
    const tag = blob.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv).setAAD(this.aad(context));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(blob.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
  }
}

/** The serializer hands over the JSON as a string or as bytes, depending on the SDK's protocol implementation. */
function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  return '{}';
}

function json(statusCode: number, body: unknown): HttpResponse {
  const headers: Record<string, string> = { 'content-type': 'application/x-amz-json-1.1' };
  if (statusCode !== 200) headers['x-amzn-errortype'] = (body as { __type: string }).__type;
  return { statusCode, headers, body: Buffer.from(JSON.stringify(body), 'utf8') };
}
