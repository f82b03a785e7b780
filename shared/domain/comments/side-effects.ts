/**
 * What a change of a comment thread sets off (decisions §16 "What a comment sets off"), through what exists:
 * activity records of the standard comment types (Add Activities: only when the activity service is enabled, and
 * not for a type its `triggers.comment` switches off; a comment sent with `triggerActivities: false` makes none),
 * which become webhook events on the table's stream (§11); and one notification per user newly tagged in a comment
 * and per new assignee (Add Notification, `eventType` the action's type, so email follows §12).
 *
 * Everything is derived from the thread before and after the change, with ids made from the thread, its version
 * after the change and what changed: running the same change again (a redelivery, a retry after a failure here)
 * writes the same records and notifications, never second ones.
 */
import { createHash } from 'node:crypto';
import { getActivityConfig } from '../../db/activity-config';
import type { CommentRecord, Thread, UserRef } from '../../db/comment-annotation';
import type { ActivityInput } from '../activities';
import { addActivities } from '../activities';
import { addNotification } from '../notifications';
import { presentComment } from './threads';

export interface Notice {
  notificationId: string;
  eventType: string;
  actionUser: UserRef;
  notifyUser: UserRef;
  headline: string;
  body?: string;
}

export interface Effects {
  activities: ActivityInput[];
  notices: Notice[];
}

const idOf = (...parts: Array<string | number>) =>
  createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 32);

const snapshot = (thread: Thread) => ({
  annotationId: thread.head.annotationId,
  status: thread.head.status,
  ...(thread.head.priority === undefined ? {} : { priority: thread.head.priority }),
  ...(thread.head.assignedTo === undefined ? {} : { assignedTo: thread.head.assignedTo }),
  commentCount: thread.head.commentCount,
});

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The activity records and notifications of the change from `before` to `after` (either undefined: add, delete). */
export function effectsOf(before: Thread | undefined, after: Thread | undefined, actor?: UserRef): Effects {
  const thread = (after ?? before) as Thread;
  const { annotationId } = thread.head;
  const version = after?.head.version ?? (before?.head.version ?? 0) + 1;
  const activities: ActivityInput[] = [];
  const notices: Notice[] = [];
  const record = (actionType: string, user: UserRef | undefined, extra: Partial<ActivityInput> = {}) =>
    activities.push({
      id: `ca_${idOf(annotationId, version, actionType, String(extra.targetSubEntityId ?? ''))}`,
      featureType: 'comment',
      actionType,
      ...(user === undefined ? {} : { actionUser: user }),
      targetEntityId: annotationId,
      entityTargetData: snapshot(thread),
      ...extra,
    });
  const oldComments = new Map((before?.comments ?? []).map((comment) => [comment.commentId, comment]));
  const newComments = new Map((after?.comments ?? []).map((comment) => [comment.commentId, comment]));
  const wants = (comment: CommentRecord) => comment.triggerActivities !== false;

  if (before === undefined && after !== undefined)
    record('comment_annotation.add', after.head.from, { entityData: snapshot(after) });
  for (const comment of after?.comments ?? []) {
    const previous = oldComments.get(comment.commentId);
    if (previous === comment) continue;
    const kind = previous === undefined ? 'comment.add' : 'comment.update';
    if (previous !== undefined && same(presentComment(previous), presentComment(comment))) continue;
    if (wants(comment))
      record(kind, comment.from, { targetSubEntityId: String(comment.commentId), entityData: presentComment(comment) });
    const tagged = new Set(previous?.taggedUserContacts.map((contact) => contact.userId) ?? []);
    for (const contact of comment.taggedUserContacts) {
      if (tagged.has(contact.userId) || contact.userId === comment.from.userId) continue;
      const details = contact.contact ?? {};
      notices.push({
        notificationId: `ca_${idOf(annotationId, comment.commentId, 'mention', contact.userId)}`,
        eventType: kind,
        actionUser: comment.from,
        notifyUser: {
          userId: contact.userId,
          ...(typeof details.name === 'string' ? { name: details.name } : {}),
          ...(typeof details.email === 'string' ? { email: details.email } : {}),
        },
        headline: '{{actionUser.name}} mentioned you in a comment',
        ...(comment.commentText === undefined ? {} : { body: comment.commentText }),
      });
    }
  }
  for (const comment of before?.comments ?? []) {
    if (!newComments.has(comment.commentId) && wants(comment))
      record('comment.delete', actor, {
        targetSubEntityId: String(comment.commentId),
        entityData: presentComment(comment),
      });
  }
  if (before !== undefined && after === undefined)
    record('comment_annotation.delete', actor, { entityData: snapshot(before) });
  if (before !== undefined && after !== undefined) {
    const changed = (field: 'status' | 'priority' | 'assignedTo') => !same(before.head[field], after.head[field]);
    if (changed('status'))
      record('comment_annotation.status_change', actor, {
        changes: { from: before.head.status, to: after.head.status },
      });
    if (changed('priority'))
      record('comment_annotation.priority_change', actor, {
        changes: { from: before.head.priority ?? null, to: after.head.priority ?? null },
      });
    if (changed('assignedTo'))
      record('comment_annotation.assign', actor, {
        changes: { from: before.head.assignedTo ?? null, to: after.head.assignedTo ?? null },
      });
  }
  const assignee = after?.head.assignedTo;
  if (assignee !== undefined && assignee.userId !== before?.head.assignedTo?.userId) {
    notices.push({
      notificationId: `ca_${idOf(annotationId, version, 'assign', assignee.userId)}`,
      eventType: 'comment_annotation.assign',
      actionUser: actor ?? thread.head.from,
      notifyUser: assignee,
      headline: '{{actionUser.name}} assigned you a comment',
    });
  }
  return { activities, notices };
}

/**
 * Writes the effects of changes to threads of one document: the activity records in one Add Activities (when the
 * activity service is enabled), then each notification.
 */
export async function applyEffects(
  apiKeyId: string,
  scope: { organizationId: string; documentId: string },
  effects: readonly Effects[],
): Promise<void> {
  const activities = effects.flatMap((effect) => effect.activities);
  const notices = effects.flatMap((effect) => effect.notices);
  if (activities.length > 0 && (await getActivityConfig(apiKeyId))?.config.isEnabled === true) {
    for (let start = 0; start < activities.length; start += 99)
      await addActivities(apiKeyId, { ...scope, activities: activities.slice(start, start + 99) });
  }
  for (const notice of notices) {
    await addNotification(apiKeyId, {
      ...scope,
      notificationId: notice.notificationId,
      actionUser: notice.actionUser,
      displayHeadlineMessageTemplate: notice.headline,
      ...(notice.body === undefined ? {} : { displayBodyMessage: notice.body }),
      notificationSource: 'comment',
      notifyUsers: [notice.notifyUser],
      eventType: notice.eventType,
    });
  }
}
