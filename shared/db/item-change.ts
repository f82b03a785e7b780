/**
 * The one decoder of the table's stream (docs/architecture.md "The stream and the delivery pipeline"): it names
 * what each record is (an activity, a notification, a CRDT head, a migration, a profile, a membership...) and hands
 * the item before and after, unmarshalled. It is the only code outside the item modules that knows which keys and
 * attributes make each kind, and it holds the filter logic in one place: `ITEM_KINDS` gives both the patterns the
 * event source mapping (and the local poller) applies and the test that names a decoded record, so every record of
 * a kind a consumer wants passes its reader's filter and is named that kind (a filter may let through a few more,
 * named no wanted kind: a removal is filtered by its sort key only, and a kind's `named` tests stay out of its
 * pattern; `wants` hands each consumer exactly its kinds).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { ChangeInterest, ItemKind, StreamConsumer, StreamEventName, StreamFilter, StringMatch } from '../workers';
import { MIGRATION_RECORD_TYPE } from '../workers';
import type { Item } from './batch';
import { apiKeyIdOfKey, PROFILE_SORT_KEY } from './keys';

/**
 * What makes an item of a kind: its sort key and string attributes of its image (the new one; a REMOVE's, the one
 * before). `named` are attribute tests that name the kind but stay out of its filter pattern: the filter lets through
 * a few records of no kind (dropped by `wants`) so that it merges with others (Lambda allows five patterns).
 */
interface KindTest {
  readonly sortKey?: StringMatch;
  readonly newImage?: Readonly<Record<string, StringMatch>>;
  readonly named?: Readonly<Record<string, StringMatch>>;
}

/**
 * Each kind's test, in the order a record is named by (the first that matches): sort keys before attributes, so a
 * profile is a profile whatever else it carries.
 */
const ITEM_KINDS: Readonly<Record<ItemKind, KindTest>> = {
  activity: { sortKey: { equals: ['ACTIVITY'] } },
  notification: { sortKey: { prefix: 'NOTIF#' } },
  recording: { sortKey: { prefix: 'REC#' } },
  // A CRDT head or delta: written with the time of its last update.
  crdtHead: { sortKey: { prefix: 'E#' }, newImage: { lastUpdate: { exists: true } } },
  // A version's summary (shared/db/crdt-versions.ts), written with its editor's last update: the same attribute test
  // as a head's, so the two merge into one filter pattern; its parts, count and check carry none.
  crdtVersion: { sortKey: { prefix: 'V#' }, newImage: { lastUpdate: { exists: true } } },
  profile: { sortKey: { equals: [PROFILE_SORT_KEY] } },
  migration: { newImage: { recordType: { equals: [MIGRATION_RECORD_TYPE] } } },
  // An entry of a user in an organization, folder or document (its level), in the level's members partition.
  membership: { sortKey: { prefix: 'U#' }, newImage: { levelType: { exists: true } } },
  // A permission grant of a user on a resource (shared/db/permission.ts: sk O#<org>#<type>#<id>).
  grant: { sortKey: { prefix: 'O#' } },
  // A member of a user group (shared/db/user-group.ts): the other items keyed by user in a partition of members.
  groupMember: { sortKey: { prefix: 'U#' } },
  // A document (shared/db/organization.ts: sk DOC#<d>); a user's notification settings for a document share the
  // prefix (in a partition of their own) and are of no kind: they carry no accessType.
  document: { sortKey: { prefix: 'DOC#' }, named: { accessType: { exists: true } } },
};
const KIND_ORDER = Object.keys(ITEM_KINDS) as ItemKind[];

/** A stream record, named and its images unmarshalled. */
export interface ItemChange {
  eventName: StreamEventName;
  /** What the item is; `other` for an item no consumer can declare interest in. */
  kind: ItemKind | 'other';
  /** The tenant of the item, when its partition key names one. */
  apiKeyId?: string;
  newImage?: Item;
  oldImage?: Item;
  /** The record's place in its shard: what a consumer reports back when it fails. */
  sequenceNumber: string;
}

/** A string attribute of a stream image: `{S: value}`; anything else is absent to a string test. */
type RawImage = Readonly<Record<string, { readonly S?: string } | undefined>> | undefined;

function matchesString(match: StringMatch, value: string | undefined): boolean {
  if ('exists' in match) return value !== undefined;
  if (value === undefined) return false;
  return 'prefix' in match ? value.startsWith(match.prefix) : match.equals.includes(value);
}

/** Whether a stream record passes a reader's filters, as the event source mapping decides it. */
export function matchesStreamFilter(
  filters: readonly StreamFilter[],
  record: { eventName?: string; keys: RawImage; newImage: RawImage },
): boolean {
  return filters.some(
    (filter) =>
      filter.eventNames.some((name) => name === record.eventName) &&
      (filter.sortKey === undefined || filter.sortKey.some((match) => matchesString(match, record.keys?.sk?.S))) &&
      Object.entries(filter.newImage ?? {}).every(([name, match]) => matchesString(match, record.newImage?.[name]?.S)),
  );
}

/** A string attribute of an unmarshalled item; anything else is absent to a string test (as to Lambda's `S`). */
const stringOf = (item: Item | undefined, name: string) =>
  typeof item?.[name] === 'string' ? (item[name] as string) : undefined;

/** What an item is: the first kind whose test its sort key and attributes pass. */
function kindOf(item: Item | undefined): ItemKind | 'other' {
  if (item === undefined) return 'other';
  return (
    KIND_ORDER.find((kind) => {
      const test = ITEM_KINDS[kind];
      return (
        (test.sortKey === undefined || matchesString(test.sortKey, stringOf(item, 'sk'))) &&
        Object.entries({ ...test.newImage, ...test.named }).every(([name, match]) =>
          matchesString(match, stringOf(item, name)),
        )
      );
    }) ?? 'other'
  );
}

/** A change as the stream shows it, images unmarshalled: what `decodeChange` names. */
export interface ItemImages {
  eventName?: StreamEventName;
  newImage?: Item;
  oldImage?: Item;
  sequenceNumber?: string;
}

/** Names a change: its kind (from the new image; a REMOVE's from the image before it) and its tenant. */
export function decodeChange({
  eventName = 'MODIFY',
  newImage,
  oldImage,
  sequenceNumber = '',
}: ItemImages): ItemChange {
  const pk = (newImage ?? oldImage)?.pk;
  const apiKeyId = typeof pk === 'string' ? apiKeyIdOfKey(pk) : undefined;
  return {
    eventName,
    kind: kindOf(eventName === 'REMOVE' ? oldImage : newImage),
    ...(apiKeyId === undefined ? {} : { apiKeyId }),
    newImage,
    oldImage,
    sequenceNumber,
  };
}

type Image = Record<string, AttributeValue>;

/** Decodes one stream record. */
export function itemChange(record: DynamoDBRecord): ItemChange {
  const image = (value: unknown) => (value === undefined ? undefined : unmarshall(value as Image));
  return decodeChange({
    eventName: record.eventName,
    newImage: image(record.dynamodb?.NewImage),
    oldImage: image(record.dynamodb?.OldImage),
    sequenceNumber: record.dynamodb?.SequenceNumber,
  });
}

/**
 * The filter patterns of an interest: its kind's test, narrowed to its events and attribute values; for REMOVE, a
 * pattern of the kind's sort key alone (a removal has no new image; one sort-key pattern serves every kind removed,
 * and the decoder names each from the image before it). Throws for a REMOVE of a kind with no sort-key test, or
 * with a `where`: no filter could let through just those.
 */
function filtersOf(interest: ChangeInterest): StreamFilter[] {
  const test = ITEM_KINDS[interest.kind];
  const newImage = { ...test.newImage, ...interest.where };
  const events = interest.eventNames ?? ['INSERT', 'MODIFY'];
  const written = events.filter((name) => name !== 'REMOVE');
  const filters: StreamFilter[] = [];
  if (written.length > 0) {
    filters.push({
      eventNames: written,
      ...(test.sortKey === undefined ? {} : { sortKey: [test.sortKey] }),
      ...(Object.keys(newImage).length === 0 ? {} : { newImage }),
    });
  }
  if (events.includes('REMOVE')) {
    if (test.sortKey === undefined || interest.where !== undefined)
      throw new Error(`A removal of ${interest.kind} items cannot be filtered by its sort key alone.`);
    filters.push({ eventNames: ['REMOVE'], sortKey: [test.sortKey] });
  }
  return filters;
}

/** Whether a decoded change is one the interest names (what its filter pattern let through, and nothing else). */
export function wants(interests: readonly ChangeInterest[], change: ItemChange): boolean {
  return interests.some(
    (interest) =>
      interest.kind === change.kind &&
      (interest.eventNames ?? ['INSERT', 'MODIFY']).some((name) => name === change.eventName) &&
      Object.entries(interest.where ?? {}).every(([name, match]) =>
        matchesString(match, stringOf(change.eventName === 'REMOVE' ? change.oldImage : change.newImage, name)),
      ),
  );
}

/**
 * The filter of a reader: the union of its consumers' interests, patterns that differ only in their sort key
 * merged into one (Lambda allows five patterns per event source mapping by default).
 */
export function streamFiltersOf(consumers: readonly Pick<StreamConsumer, 'changes'>[]): StreamFilter[] {
  const merged = new Map<string, StreamFilter>();
  for (const filter of consumers.flatMap((consumer) => consumer.changes.flatMap(filtersOf))) {
    const shape = JSON.stringify([[...filter.eventNames].sort(), filter.sortKey === undefined, filter.newImage ?? {}]);
    const same = merged.get(shape);
    if (same === undefined || same.sortKey === undefined) {
      if (same === undefined) merged.set(shape, filter);
      continue;
    }
    const sortKey = [...same.sortKey];
    for (const match of filter.sortKey ?? [])
      if (!sortKey.some((known) => JSON.stringify(known) === JSON.stringify(match))) sortKey.push(match);
    merged.set(shape, { ...same, sortKey });
  }
  // A pattern another one lets through whole (the same tests, on more events) adds nothing but a filter to count.
  const patterns = [...merged.values()];
  return patterns.filter((filter) => !patterns.some((other) => other !== filter && covers(other, filter)));
}

/**
 * Whether `wide` passes every record `narrow` passes: its events include narrow's, its sort-key tests include
 * narrow's (a CRDT head's and a version's merged still pass every head), the same attribute tests, and it is wider
 * in one of them.
 */
function covers(wide: StreamFilter, narrow: StreamFilter): boolean {
  const keyTests = (filter: StreamFilter) => (filter.sortKey ?? []).map((match) => JSON.stringify(match));
  const wideKeys = keyTests(wide);
  const narrowKeys = keyTests(narrow);
  const keysCovered =
    (wide.sortKey === undefined) === (narrow.sortKey === undefined) &&
    narrowKeys.every((match) => wideKeys.includes(match));
  return (
    narrow.eventNames.every((name) => wide.eventNames.includes(name)) &&
    keysCovered &&
    (wide.eventNames.length > narrow.eventNames.length || wideKeys.length > narrowKeys.length) &&
    JSON.stringify(wide.newImage ?? {}) === JSON.stringify(narrow.newImage ?? {})
  );
}
