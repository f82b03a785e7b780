/**
 * Which changes of the table are webhook events (shared/domain/webhooks/events.ts), decided from the stream's
 * images alone, and the ids of the messages they make.
 */
import { activityItem } from '../../shared/db/activity';
import { decodeChange, type ItemImages } from '../../shared/db/item-change';
import { changeOf as changeOfDecoded, editorEventData, endpointWants } from '../../shared/domain/webhooks/events';

/** A change as the stream decoder names it, from its images. */
const changeOf = (change: ItemImages) => changeOfDecoded(decodeChange(change));

const KEY = 'key_0123456789abcdef0123456789abcdef';
const activity = (timestamp: number, documentId = 'doc') =>
  activityItem(KEY, {
    organizationId: 'org',
    documentId,
    content: { id: 'a1', featureType: 'comment', actionType: 'comment.add', actionUser: { userId: 'ann' } },
    timestamp,
    seq: 0,
  });

const eventOf = (change: ItemImages) => {
  const result = changeOf(change);
  return result?.kind === 'event' ? result.event : undefined;
};

describe('webhook events from stream images', () => {
  it('makes an activity record written by Add Activities an event of its actionType, with the record as data', () => {
    const event = eventOf({ eventName: 'INSERT', newImage: activity(1000) });

    expect(event).toMatchObject({
      type: 'comment.add',
      organizationId: 'org',
      documentId: 'doc',
      timestamp: 1000,
      data: { id: 'a1', metadata: { apiKey: KEY, organizationId: 'org' } },
    });
    expect(event?.id).toMatch(/^msg_[0-9A-Z]{26}$/);
  });

  it('gives a record seen twice the same message id, and a rewrite with a new timestamp another', () => {
    const first = eventOf({ eventName: 'INSERT', newImage: activity(1000) });
    const again = eventOf({ eventName: 'INSERT', newImage: activity(1000) });
    const rewritten = eventOf({ eventName: 'MODIFY', oldImage: activity(1000), newImage: activity(2000) });

    expect(again?.id).toBe(first?.id);
    expect(rewritten?.id).not.toBe(first?.id);
  });

  it('reads the compressed content of an image as a Lambda stream event carries it (Binary as base64 text)', () => {
    const item = activity(1000);
    const asLambdaSees = { ...item, content: Buffer.from(item.content as Uint8Array).toString('base64') };

    const fromSdk = eventOf({ eventName: 'INSERT', newImage: item });
    const fromLambda = eventOf({ eventName: 'INSERT', newImage: asLambdaSees });

    expect(fromLambda).toEqual(fromSdk);
    expect(fromLambda?.data).toMatchObject({ id: 'a1', actionType: 'comment.add', actionUser: { userId: 'ann' } });
  });

  it('is no event for a record moved by a migration (same timestamp), a removal, or an item of no tenant', () => {
    expect(
      changeOf({ eventName: 'MODIFY', oldImage: activity(1000), newImage: activity(1000, 'new-doc') }),
    ).toBeUndefined();
    expect(changeOf({ eventName: 'REMOVE', oldImage: activity(1000) })).toBeUndefined();
    expect(changeOf({ eventName: 'INSERT', newImage: { pk: 'SYSTEM', sk: 'ACTIVITY' } })).toBeUndefined();
  });

  it('makes a notification an event when created only', () => {
    const notification = {
      pk: `T#${KEY}#ORG#org`,
      sk: 'NOTIF#n1',
      id: 'n1',
      organizationId: 'org',
      documentId: 'doc',
      timestamp: 5,
      notifyUsers: [],
    };

    expect(eventOf({ eventName: 'INSERT', newImage: notification })).toMatchObject({
      type: 'notification.add',
      data: { id: 'n1' },
    });
    expect(
      changeOf({ eventName: 'MODIFY', oldImage: notification, newImage: { ...notification, displayBodyMessage: 'x' } }),
    ).toBeUndefined();
  });

  it('makes a migration an event when it reaches completed or failed, once', () => {
    const migration = {
      pk: `T#${KEY}#ORG#org`,
      sk: 'MIGRATION#m1',
      recordType: 'documentMigration',
      apiKeyId: KEY,
      organizationId: 'org',
      migrationId: 'm1',
      documentId: 'old',
      newDocumentId: 'new',
      attempts: 0,
      createdAt: 1,
      updatedAt: 2,
    };
    const running = { ...migration, status: 'in_progress' };
    const done = { ...migration, status: 'completed' };

    expect(eventOf({ eventName: 'MODIFY', oldImage: running, newImage: done })).toMatchObject({
      type: 'document.migration_completed',
      data: { organizationId: 'org', documentId: 'old', newDocumentId: 'new', migrationId: 'm1', status: 'completed' },
    });
    expect(changeOf({ eventName: 'MODIFY', oldImage: done, newImage: done })).toBeUndefined();
    expect(changeOf({ eventName: 'MODIFY', oldImage: migration, newImage: running })).toBeUndefined();
  });

  it('turns a CRDT head or delta into an editor change (debounced later), and ignores state parts', () => {
    const head = {
      pk: `T#${KEY}#ORG#org#CRDT#doc`,
      sk: 'E#title#HEAD',
      organizationId: 'org',
      documentId: 'doc',
      editorId: 'title',
      lastUpdate: '2026-01-01T00:00:00.000Z',
      version: 2,
    };

    expect(changeOf({ eventName: 'MODIFY', newImage: head })).toEqual({
      kind: 'editor',
      apiKeyId: KEY,
      editor: { organizationId: 'org', documentId: 'doc', editorId: 'title' },
    });
    expect(
      changeOf({ eventName: 'INSERT', newImage: { pk: head.pk, sk: 'E#title#PART#0001', editorId: 'title' } }),
    ).toBeUndefined();
  });

  it('is no editor change for a head written by a compaction, which only folds deltas that were changes already', () => {
    const head = {
      pk: `T#${KEY}#ORG#org#CRDT#doc`,
      sk: 'E#title#HEAD',
      organizationId: 'org',
      documentId: 'doc',
      editorId: 'title',
      lastUpdate: '2026-01-01T00:00:00.000Z',
      version: 2,
    };
    const folded = { ...head, version: 3, compaction: true };
    const rewritten = { ...head, version: 4, lastUpdate: '2026-01-01T00:00:05.000Z' };

    expect(changeOf({ eventName: 'MODIFY', oldImage: head, newImage: folded })).toBeUndefined();
    expect(changeOf({ eventName: 'MODIFY', oldImage: folded, newImage: rewritten })).toEqual({
      kind: 'editor',
      apiKeyId: KEY,
      editor: { organizationId: 'org', documentId: 'doc', editorId: 'title' },
    });
  });

  it('lets an endpoint want a message by type and channel unless disabled', () => {
    const event = { type: 'comment.add', organizationId: 'org' };

    expect(endpointWants({ disabled: false, filterTypes: null, channels: null }, event)).toBe(true);
    expect(endpointWants({ disabled: false, filterTypes: ['comment.add'], channels: ['org'] }, event)).toBe(true);
    expect(endpointWants({ disabled: false, filterTypes: ['reaction.add'], channels: null }, event)).toBe(false);
    expect(endpointWants({ disabled: false, filterTypes: null, channels: ['other'] }, event)).toBe(false);
    expect(endpointWants({ disabled: true, filterTypes: null, channels: null }, event)).toBe(false);
  });
});

describe('the data of crdt.update_data', () => {
  const editor = { organizationId: 'org-1', documentId: 'doc-1', editorId: 'title' };
  const record = {
    data: 'Hello',
    id: 'title',
    lastUpdate: '2026-01-01T00:00:00.000Z',
    lastUpdatedBy: 'ann',
    sessionId: null,
  };

  it('is the editor as Get CRDT Data returns it, with its organizationId and documentId', () => {
    expect(editorEventData(editor, record, false)).toEqual({ ...record, organizationId: 'org-1', documentId: 'doc-1' });
  });

  it('leaves out plain data that is too large, saying so, and still names the organization and document', () => {
    const { data: _data, ...rest } = record;
    expect(editorEventData(editor, record, true)).toEqual({
      ...rest,
      organizationId: 'org-1',
      documentId: 'doc-1',
      truncated: true,
    });
  });
});
