/**
 * One item per tenant holding a configuration object (the activity, email and AI key configurations), changed
 * by atomic updates so that concurrent requests merge instead of failing.
 *
 *   pk T#<apiKeyId>   sk CONFIG#<NAME>   config, version
 *
 * A write is planned from the stored configuration (one strongly consistent read) as either the whole item, put
 * only while none exists, or an UpdateItem that sets and removes only the paths the request changes, under
 * conditions stating what the plan assumed about the stored shape (a parent map exists, triggers are not seeded
 * yet, a secret still has the mask the request sent back, ...). Two updates of different paths therefore both
 * apply, and two of the same path apply in turn (the last writer wins). When a condition fails, DynamoDB returns
 * the item as it then was and the write is planned again from it; only a plan that keeps failing, which takes a
 * stream of changes to the same shape, ends in ABORTED. `version` counts the writes.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { AbortedError } from '../core/errors';
import { TABLE_NAME, db } from './client';
import { tenantKey } from './keys';

export interface Versioned<T> {
  config: T;
  /** Writes so far: 0 when nothing is stored. */
  version: number;
}

/** A path inside the stored configuration, one map key per segment (any string, client-chosen ones included). */
export type ConfigPath = readonly string[];

/** What a plan assumes about the stored configuration; the write applies only while every one still holds. */
export type ConfigCondition =
  | { exists: ConfigPath }
  | { absent: ConfigPath }
  /** Absent, or a map (or list) without entries. */
  | { absentOrEmpty: ConfigPath }
  /** A map with at most `entries` entries (the path must exist). */
  | { atMost: ConfigPath; entries: number }
  | { equals: ConfigPath; value: string | number | boolean };

export interface ConfigSet {
  path: ConfigPath;
  value: unknown;
  /** Only when nothing is stored at `path` (DynamoDB's if_not_exists): a default, not an override. */
  ifAbsent?: boolean;
}

/** An UpdateItem on an existing item: the paths to set and remove, and what must hold for them to apply. */
export interface ConfigUpdate {
  set: ConfigSet[];
  remove: ConfigPath[];
  conditions: ConfigCondition[];
}

/** A planned write: the whole configuration while none is stored, or an update of the stored one. */
export type ConfigWrite<T> = { create: T } | { update: ConfigUpdate };

/**
 * Plans the write of one request against the stored configuration (undefined: none). Runs again with the
 * configuration as it then was when the write's conditions failed; throws to refuse the request (e.g. a limit
 * the merged configuration would exceed).
 */
export type ConfigPlanner<T> = (stored: T | undefined) => Promise<ConfigWrite<T>> | ConfigWrite<T>;

/** Plans per request: conditions fail only while the shape a plan assumed keeps changing (a few times at most). */
const MAX_ATTEMPTS = 8;
const BACKOFF_BASE_MS = 10;
const BACKOFF_CAP_MS = 400;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Placeholders for names and values: every path segment goes through ExpressionAttributeNames, so any key is safe. */
class Expression {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private readonly nameOf = new Map<string, string>();
  private readonly valueOf = new Map<string, string>();
  private valueCount = 0;

  name(segment: string): string {
    let placeholder = this.nameOf.get(segment);
    if (placeholder === undefined) {
      // Short placeholders: an update of 100 triggers must stay under DynamoDB's 4 KB per expression.
      placeholder = `#${this.nameOf.size.toString(36)}`;
      this.nameOf.set(segment, placeholder);
      this.names[placeholder] = segment;
    }
    return placeholder;
  }

  path(path: ConfigPath): string {
    return ['config', ...path].map((segment) => this.name(segment)).join('.');
  }

  value(value: unknown): string {
    // Scalars repeat (every trigger is true or false): one placeholder each.
    const scalar = typeof value === 'object' && value !== null ? undefined : `${typeof value}:${String(value)}`;
    const known = scalar === undefined ? undefined : this.valueOf.get(scalar);
    if (known !== undefined) return known;
    const placeholder = `:${(this.valueCount++).toString(36)}`;
    this.values[placeholder] = value;
    if (scalar !== undefined) this.valueOf.set(scalar, placeholder);
    return placeholder;
  }

  condition(condition: ConfigCondition): string {
    if ('exists' in condition) return `attribute_exists(${this.path(condition.exists)})`;
    if ('absent' in condition) return `attribute_not_exists(${this.path(condition.absent)})`;
    if ('absentOrEmpty' in condition) {
      const path = this.path(condition.absentOrEmpty);
      return `(attribute_not_exists(${path}) OR size(${path}) = ${this.value(0)})`;
    }
    if ('atMost' in condition) return `size(${this.path(condition.atMost)}) <= ${this.value(condition.entries)}`;
    return `${this.path(condition.equals)} = ${this.value(condition.value)}`;
  }
}

/** The UpdateItem parameters of `update`, which also bumps `version`. Exported for the unit tests. */
export function updateExpression(update: ConfigUpdate) {
  const expression = new Expression();
  const sets = update.set.map(({ path, value, ifAbsent }) => {
    const target = expression.path(path);
    const placeholder = expression.value(value);
    return `${target} = ${ifAbsent ? `if_not_exists(${target}, ${placeholder})` : placeholder}`;
  });
  const removes = update.remove.map((path) => expression.path(path));
  const conditions = [{ exists: [] } as ConfigCondition, ...update.conditions].map((condition) =>
    expression.condition(condition),
  );
  const version = `${expression.name('version')} ${expression.value(1)}`;
  const clauses = [
    sets.length > 0 ? `SET ${sets.join(', ')}` : '',
    removes.length > 0 ? `REMOVE ${removes.join(', ')}` : '',
    `ADD ${version}`,
  ];
  return {
    UpdateExpression: clauses.filter((clause) => clause !== '').join(' '),
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: expression.names,
    ExpressionAttributeValues: expression.values,
  };
}

/** The configuration an item holds, or undefined for no item. */
function fromItem<T>(item: Record<string, unknown> | undefined): Versioned<T> | undefined {
  return item === undefined ? undefined : { config: item.config as T, version: Number(item.version ?? 0) };
}

/** The item a failed condition returned (ALL_OLD, in the low-level format), or undefined when there is none. */
function itemOf(error: ConditionalCheckFailedException): Record<string, unknown> | undefined {
  return error.Item === undefined ? undefined : unmarshall(error.Item);
}

export function versionedConfig<T>(name: string) {
  const configKey = (apiKeyId: string) => ({ pk: tenantKey(apiKeyId), sk: `CONFIG#${name}` });

  /** The configuration after the write, or the stored item that failed its conditions. */
  async function send(
    apiKeyId: string,
    write: ConfigWrite<T>,
  ): Promise<{ written: T } | { failed: Versioned<T> | undefined }> {
    try {
      if ('create' in write) {
        await db.send(
          new PutCommand({
            TableName: TABLE_NAME,
            Item: { ...configKey(apiKeyId), config: write.create, version: 1 },
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { written: write.create };
      }
      const { Attributes } = await db.send(
        new UpdateCommand({
          TableName: TABLE_NAME,
          Key: configKey(apiKeyId),
          ...updateExpression(write.update),
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { written: Attributes?.config as T };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return { failed: fromItem<T>(itemOf(error)) };
      throw error;
    }
  }

  return {
    /** The item's key, for callers that read it with other items in one BatchGetItem. */
    key: configKey,
    /** The configuration an item read that way holds. */
    fromItem: (item: Record<string, unknown> | undefined): Versioned<T> | undefined => fromItem<T>(item),

    async get(apiKeyId: string): Promise<Versioned<T> | undefined> {
      const { Item } = await db.send(
        new GetCommand({ TableName: TABLE_NAME, Key: configKey(apiKeyId), ConsistentRead: true }),
      );
      return fromItem<T>(Item);
    },

    /**
     * Applies the write `plan` makes from the stored configuration and returns the configuration as stored right
     * after it (other requests' changes included). Throws what `plan` throws, and AbortedError when the stored
     * shape kept changing under MAX_ATTEMPTS plans in a row.
     */
    async write(apiKeyId: string, plan: ConfigPlanner<T>): Promise<T> {
      let stored = (await this.get(apiKeyId))?.config;
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
        const outcome = await send(apiKeyId, await plan(stored));
        if ('written' in outcome) return outcome.written;
        stored = outcome.failed?.config;
        // The failed write returned the current item, so the next plan is based on fresh data at once; from the
        // second failure on, exponential backoff with full jitter spreads writers that keep colliding.
        if (attempt >= 2) await sleep(Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt));
      }
      throw new AbortedError(
        `The ${name.toLowerCase().replace('_', ' ')} configuration kept changing while it was updated; retry.`,
      );
    },
  };
}
