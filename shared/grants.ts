/**
 * What a function may do in AWS, derived from its entry in the route table, the worker table or the deploy-task
 * table: the DynamoDB actions on the table, the indexes it may query, the KMS actions on the secrets key, sending to
 * the delivery queue, and sending email through SES.
 *
 * The CDK stack turns these into each function's IAM policy, and the grant check (local/grant-check.ts) holds
 * every command a handler sends against the same grants in the connected and e2e tests and on the local stack.
 * One derivation for both, so what the tests check is what is deployed. Like the route table, this module imports
 * nothing at runtime so that `infra/` can read it.
 */

/** What a function does with the table: `read` gets the read actions, `write` the read and write actions. */
export type TableAccess = 'read' | 'write';

/** Envelope encryption through KMS: `encrypt` to store secrets, `decrypt` to read them back. */
export type KmsUse = 'encrypt' | 'decrypt';

/** How an entry of the route, worker or deploy-task table declares what its function touches. */
export interface AccessDeclaration {
  readonly table?: TableAccess;
  /** Global secondary indexes the function queries (names from shared/db/table-definition.ts); none when omitted. */
  readonly indexes?: readonly string[];
  /** KMS operations the function performs (through the AWS Encryption SDK); none when omitted. */
  readonly kms?: readonly KmsUse[];
  /** Records Idempotency-Key answers (every route of the route table); see IDEMPOTENCY_KEY_PREFIX. */
  readonly idempotent?: boolean;
  /** Sends jobs to the delivery queue (shared/adapters/queue/queue.ts): `sqs:SendMessage` on that queue only. */
  readonly queue?: 'send';
  /**
   * Sends email through SES (shared/adapters/email/ses-transport.ts): SES_SEND_ACTIONS on the operator's sending identity (and
   * configuration set) only, and only when the deployment names one (CDK context `sesIdentity`, infra/ses.ts).
   */
  readonly ses?: 'send';
  /**
   * Sends to and closes live-sync connections through the API Gateway Management API (shared/adapters/live/):
   * `execute-api:ManageConnections` on the live WebSocket API's stage only (decisions §13).
   */
  readonly connections?: 'manage';
}

/**
 * Partition keys of the idempotency records (shared/http/idempotency.ts). Every route records its answers to
 * Idempotency-Key requests, read-only ones too: those may write only items whose partition key starts with this
 * (IAM condition `dynamodb:LeadingKeys`).
 */
export const IDEMPOTENCY_KEY_PREFIX = 'IDEMPOTENCY#';

/** The IAM actions a function holds, each on the one table (or the one key). */
export interface Grants {
  /** Actions on the table itself. */
  readonly tableActions: readonly string[];
  /** Actions on the table's items whose partition key starts with IDEMPOTENCY_KEY_PREFIX, beyond `tableActions`. */
  readonly idempotencyActions: readonly string[];
  /** Indexes the function may `dynamodb:Query` (the only action that reads an index). */
  readonly indexes: readonly string[];
  readonly kmsActions: readonly string[];
  /** Actions on the delivery queue. */
  readonly queueActions: readonly string[];
  /** Actions on the SES sending identity and configuration set, when the deployment has them. */
  readonly sesActions: readonly string[];
  /** Actions on the live WebSocket API's connections (`@connections/*` of its stage). */
  readonly connectionActions: readonly string[];
}

/**
 * Everything the read paths send: single reads, batched reads and queries. No Scan (no request path scans) and no
 * DescribeTable (nothing describes the table at run time). Transactions need no action of their own: IAM checks
 * each item of a TransactWriteItems as the PutItem, UpdateItem, DeleteItem or ConditionCheckItem it is.
 */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'] as const;

/** What the idempotency records need: Powertools' conditional put, read, update with the answer, delete. */
export const IDEMPOTENCY_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
] as const;

export const TABLE_WRITE_ACTIONS = [
  ...TABLE_READ_ACTIONS,
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
] as const;

/**
 * The AWS Encryption SDK with a KMS keyring whose only key is the generator calls GenerateDataKey to encrypt and
 * Decrypt to decrypt; it never calls Encrypt or ReEncrypt.
 */
const KMS_ACTIONS: Readonly<Record<KmsUse, string>> = {
  encrypt: 'kms:GenerateDataKey',
  decrypt: 'kms:Decrypt',
};

/** The grants of a route-table, worker-table or deploy-task entry. */
export function grantsFor(declaration: AccessDeclaration): Grants {
  const table = declaration.table;
  const tableActions: readonly string[] =
    table === 'write' ? TABLE_WRITE_ACTIONS : table === 'read' ? TABLE_READ_ACTIONS : [];
  return {
    tableActions: [...tableActions],
    idempotencyActions:
      declaration.idempotent === true ? IDEMPOTENCY_ACTIONS.filter((action) => !tableActions.includes(action)) : [],
    indexes: table === undefined ? [] : [...(declaration.indexes ?? [])],
    kmsActions: (declaration.kms ?? []).map((use) => KMS_ACTIONS[use]),
    queueActions: declaration.queue === 'send' ? [QUEUE_SEND_ACTION] : [],
    sesActions: declaration.ses === 'send' ? [...SES_SEND_ACTIONS] : [],
    connectionActions: declaration.connections === 'manage' ? [CONNECTIONS_MANAGE_ACTION] : [],
  };
}

/** The grants of a route: its declaration, plus the idempotency records every route keeps. */
export function routeGrants(route: AccessDeclaration): Grants {
  return grantsFor({ ...route, idempotent: true });
}

/** No access at all: functions outside the tables (the `$default` catch-all). */
export const NO_GRANTS: Grants = {
  tableActions: [],
  idempotencyActions: [],
  indexes: [],
  kmsActions: [],
  queueActions: [],
  sesActions: [],
  connectionActions: [],
};

/** PostToConnection, DeleteConnection and GetConnection are all authorized as this one action. */
export const CONNECTIONS_MANAGE_ACTION = 'execute-api:ManageConnections';

/** SendMessageBatch is authorized as SendMessage. */
export const QUEUE_SEND_ACTION = 'sqs:SendMessage';

/**
 * What one SES v2 SendEmail needs. The v2 operation is listed as `ses:SendEmail`, but with `Content.Raw` (the only
 * form the transport sends) SES authorizes it as `ses:SendRawEmail`: that is the action its AccessDenied names for a
 * raw v2 send (django-anymail issue 384, nodemailer 7's SES transport, aws-actionmailer-ses issue 10). Both, on the
 * same identity and configuration set only: neither reaches anything the other does not.
 */
export const SES_SEND_ACTIONS = ['ses:SendEmail', 'ses:SendRawEmail'] as const;
