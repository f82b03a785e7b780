/**
 * Configuration, read once when a function loads. A required value that is missing fails the load with a clear
 * message instead of surfacing later as a confusing request error.
 */

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value.trim() === '') {
    throw new Error(`Missing required environment variable ${name}.`);
  }
  return value;
}

function optional(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

function nonNegativeInteger(name: string, fallback: number): number {
  const raw = optional(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`Environment variable ${name} must be a non-negative integer, got "${raw}".`);
  }
  return value;
}

export const config = {
  tableName: required('TABLE_NAME'),
  /** Set for DynamoDB Local; unset in AWS. */
  dynamodbEndpoint: optional('DYNAMODB_ENDPOINT'),
  /** KMS key for envelope encryption in AWS. */
  kmsKeyArn: optional('KMS_KEY_ARN'),
  /** Local stack and tests: JSON file with a raw AES key (see shared/crypto/local-keys.ts). */
  localKeysFile: optional('LOCAL_KEYS_FILE'),
  /** Workspace creations allowed per source IP per hour; 0 disables the limit. */
  workspaceCreateLimitPerHour: nonNegativeInteger('WORKSPACE_CREATE_LIMIT_PER_HOUR', 10),
  /** How long a successful credential check is reused; the contract allows at most 30 s. */
  authCacheMs: Math.min(nonNegativeInteger('AUTH_CACHE_SECONDS', 30), 30) * 1000,
} as const;
