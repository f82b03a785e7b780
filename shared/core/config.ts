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

function httpUrl(name: string, fallback: string): string {
  const raw = optional(name);
  if (raw === undefined) return fallback;
  if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) {
    throw new Error(`Environment variable ${name} must be an http(s) URL, got "${raw}".`);
  }
  return raw.replace(/\/+$/, '');
}

function integerBetween(name: string, fallback: number, min: number, max: number): number {
  const value = nonNegativeInteger(name, fallback);
  if (value < min || value > max) {
    throw new Error(`Environment variable ${name} must be between ${min} and ${max}, got ${value}.`);
  }
  return value;
}

/** The providers' public endpoints, as each SDK defaults to them; the variables point Ask AI elsewhere (a proxy, a test double). */
const AI_DEFAULT_BASE_URLS = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
} as const;

/**
 * Ask AI's whole provider call, request to last byte: 25 s (docs/decisions.md §9) leaves room in the 29 s Lambda and API
 * Gateway limits for authentication, the key read and the answer. Tests lower it so a hang costs them a second.
 */
const AI_TIMEOUT_MAX_MS = 25_000;

function flag(name: string, fallback: boolean): boolean {
  const raw = optional(name);
  if (raw === undefined) return fallback;
  if (raw !== 'true' && raw !== 'false')
    throw new Error(`Environment variable ${name} must be true or false, got "${raw}".`);
  return raw === 'true';
}

/** One webhook attempt's deadline, request to last byte (docs/decisions.md §11); tests may lower it, never raise it. */
const WEBHOOK_TIMEOUT_MAX_MS = 15_000;

/**
 * One email send's deadline (SendGrid's Mail Send, SES's SendEmail), request to last byte. Both answer in well under
 * a second when healthy; a send that times out is retried on the schedule (docs/decisions.md §12), so waiting longer
 * than 10 s only holds the worker. At most 15 s, the webhook attempt's bound.
 */
const EMAIL_TIMEOUT_DEFAULT_MS = 10_000;
const EMAIL_TIMEOUT_MAX_MS = 15_000;

function sesIdentityArn(name: string): string | undefined {
  const raw = optional(name);
  if (raw !== undefined && !/^arn:aws[a-z-]*:ses:[^:]*:\d{12}:identity\/\S+$/.test(raw)) {
    throw new Error(
      `Environment variable ${name} must be an SES identity ARN (arn:aws:ses:<region>:<account>:identity/<identity>), got "${raw}".`,
    );
  }
  return raw;
}

function socketUrl(name: string): string | undefined {
  const raw = optional(name);
  if (raw !== undefined && (!URL.canParse(raw) || !/^wss?:$/.test(new URL(raw).protocol))) {
    throw new Error(`Environment variable ${name} must be a ws(s) URL, got "${raw}".`);
  }
  return raw?.replace(/\/+$/, '');
}

function optionalHttpUrl(name: string): string | undefined {
  const raw = optional(name);
  return raw === undefined ? undefined : httpUrl(name, raw);
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
  /** Where Ask AI sends each provider's requests (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GEMINI_BASE_URL). */
  aiBaseUrls: {
    openai: httpUrl('OPENAI_BASE_URL', AI_DEFAULT_BASE_URLS.openai),
    anthropic: httpUrl('ANTHROPIC_BASE_URL', AI_DEFAULT_BASE_URLS.anthropic),
    gemini: httpUrl('GEMINI_BASE_URL', AI_DEFAULT_BASE_URLS.gemini),
  },
  /** Deadline of one Ask AI provider call, in ms: 25 s unless lowered (never raised) by AI_TIMEOUT_MS. */
  aiTimeoutMs: integerBetween('AI_TIMEOUT_MS', AI_TIMEOUT_MAX_MS, 1, AI_TIMEOUT_MAX_MS),
  /**
   * Webhook destinations may be loopback, private, link-local and other non-public addresses (docs/decisions.md
   * §11): false in AWS (CDK context `webhookAllowPrivateUrls`), true on the local stack unless set.
   */
  webhookAllowPrivateUrls: flag('WEBHOOK_ALLOW_PRIVATE_URLS', false),
  /** Deadline of one webhook attempt in ms: 15 s unless lowered by WEBHOOK_TIMEOUT_MS. */
  webhookTimeoutMs: integerBetween('WEBHOOK_TIMEOUT_MS', WEBHOOK_TIMEOUT_MAX_MS, 1, WEBHOOK_TIMEOUT_MAX_MS),
  /**
   * The retry schedule's delays (and the 5 s CRDT debounce) are divided by this: 1 in production; tests compress
   * the day-long schedule (1000 makes 5 s → 5 ms and 10 h → 36 s).
   */
  webhookScheduleDivisor: integerBetween('WEBHOOK_SCHEDULE_DIVISOR', 1, 1, 1_000_000),
  /** AWS: the delivery queue (SQS). */
  deliveryQueueUrl: optional('DELIVERY_QUEUE_URL'),
  /** Local stack and tests: the folder of the file queue that stands in for SQS. */
  deliveryQueueDir: optional('DELIVERY_QUEUE_DIR'),
  /**
   * SendGrid's API address (docs/decisions.md §12). Operator configuration, never customer input: tests and a proxy
   * point it elsewhere, and it is called with private addresses allowed.
   */
  sendgridBaseUrl: httpUrl('SENDGRID_BASE_URL', 'https://api.sendgrid.com'),
  /** Deadline of one email send in ms: 10 s unless set by EMAIL_TIMEOUT_MS (at most 15 s). */
  emailTimeoutMs: integerBetween('EMAIL_TIMEOUT_MS', EMAIL_TIMEOUT_DEFAULT_MS, 1, EMAIL_TIMEOUT_MAX_MS),
  /**
   * AWS: the verified SES identity (a domain, or one address) the operator set up for the default transport (CDK
   * context `sesIdentity`); a tenant's `fromEmail` must be at it. Unset when the deployment names none: the delivery
   * worker then has no SES permission, so the default transport cannot send in AWS.
   */
  sesIdentity: optional('SES_IDENTITY'),
  /** AWS: the SES configuration set the default transport sends with (event publishing, suppression), if any. */
  sesConfigurationSet: optional('SES_CONFIGURATION_SET'),
  /** AWS: the ARN of the SES identity authorizing the From address (sending authorization), if it is not our own. */
  sesIdentityArn: sesIdentityArn('SES_IDENTITY_ARN'),
  /** Local stack and tests: the folder the default transport writes each email to as an .eml file. */
  emailMailboxDir: optional('EMAIL_MAILBOX_DIR'),
  /**
   * Live sync (decisions §13): the WebSocket URL browsers connect to, as `/v2/crdt/live/authorize` answers it as
   * `serverUrl` (AWS: the WebSocket API's stage URL, wss://; local stack: ws://127.0.0.1:<PORT>/v2/crdt/live).
   */
  liveUrl: socketUrl('LIVE_URL'),
  /**
   * Live sync: the API Gateway Management API endpoint of that WebSocket API's stage (https://<api>.execute-api.
   * <region>.amazonaws.com/<stage>); on the local stack the gateway's own address, which serves `@connections`.
   */
  liveConnectionsEndpoint: optionalHttpUrl('LIVE_CONNECTIONS_ENDPOINT'),
  /**
   * How old a live connection's last access check may be before a message of it checks again (seconds, 1–30): 30
   * keeps every open connection within the 60 s decisions §13 allows (see shared/domain/live/access.ts); tests lower it.
   */
  liveAccessCheckMs: integerBetween('LIVE_ACCESS_CHECK_SECONDS', 30, 1, 30) * 1000,
  /**
   * Automatic versions of an editor (decisions §14): one is kept once the editor has been quiet this long since its
   * last change (seconds, 1–86,400; default 300)...
   */
  crdtVersionQuietMs: integerBetween('CRDT_VERSION_QUIET_SECONDS', 300, 1, 86_400) * 1000,
  /** ...or once its oldest change not in a version is this old while edits go on (seconds, 1–604,800; default 3,600). */
  crdtVersionMaxMs: integerBetween('CRDT_VERSION_MAX_SECONDS', 3600, 1, 604_800) * 1000,
} as const;
