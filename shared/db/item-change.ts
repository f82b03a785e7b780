/**
 * A change of the table as the stream shows it: the item before and after, unmarshalled. The events worker decodes
 * each record once (`itemChange`) and hands the same change to webhooks (shared/domain/webhooks/events.ts) and to
 * email (shared/domain/email/plan.ts), so neither depends on the other for it.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { Item } from './batch';

/** A stream record, its images unmarshalled. */
export interface ItemChange {
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  newImage?: Item;
  oldImage?: Item;
}

type Image = Record<string, AttributeValue>;

export function itemChange(record: DynamoDBRecord): ItemChange {
  const image = (value: unknown) => (value === undefined ? undefined : unmarshall(value as Image));
  return {
    eventName: record.eventName ?? 'MODIFY',
    newImage: image(record.dynamodb?.NewImage),
    oldImage: image(record.dynamodb?.OldImage),
  };
}
