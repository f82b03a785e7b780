/**
 * Workspaces and their owner's email registry.
 *
 *   pk WS#<workspaceId>   sk WORKSPACE            the workspace (hash of its auth token, plan)
 *   pk EMAIL#<email>      sk REGISTRY             count of the email's workspaces, its root workspace
 *   pk EMAIL#<email>      sk NAME#<name>          one per workspace name the email owns (names are unique per email)
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { queryAll } from './query';
import { TABLE_NAME, db } from './client';
import { key, prefix, segment } from './keys';
import { NotFoundError } from '../core/errors';
import { named, type TransactItem } from './transact';

export type Plan = 'free' | 'paid';

export interface Workspace {
  id: string;
  workspaceName: string;
  ownerEmail: string;
  ownerId: string;
  ownerName: string;
  avatar: string;
  plan: Plan;
  createdAt: number;
}

export interface WorkspaceRecord extends Workspace {
  authTokenHash: string;
}

export interface EmailRegistry {
  email: string;
  workspaceCount: number;
  rootWorkspaceId: string;
}

export interface OwnedWorkspace {
  workspaceId: string;
  workspaceName: string;
}

/** Workspaces an email may own. */
export const MAX_WORKSPACES_PER_EMAIL = 5;

const workspaceKey = (id: string) => ({ pk: key('WS', segment(id)), sk: 'WORKSPACE' });
const registryKey = (email: string) => ({ pk: key('EMAIL', segment(email)), sk: 'REGISTRY' });
/** Names compare trimmed and case-insensitively: "Acme" and " acme " are the same workspace name. */
const nameKey = (email: string, name: string) => ({
  pk: key('EMAIL', segment(email)),
  sk: key('NAME', segment(name.trim().toLowerCase())),
});

export async function getWorkspace(id: string): Promise<WorkspaceRecord | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: workspaceKey(id), ConsistentRead: true }),
  );
  if (!Item) return undefined;
  const { pk: _pk, sk: _sk, ...record } = Item;
  return record as WorkspaceRecord;
}

export async function getEmailRegistry(email: string): Promise<EmailRegistry | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: registryKey(email), ConsistentRead: true }),
  );
  return Item ? { email, workspaceCount: Item.workspaceCount, rootWorkspaceId: Item.rootWorkspaceId } : undefined;
}

/** The workspaces an email owns, oldest name first (one query over the email's partition). */
export async function listWorkspacesByEmail(email: string): Promise<OwnedWorkspace[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :name)',
    ExpressionAttributeValues: { ':pk': registryKey(email).pk, ':name': prefix('NAME') },
    ConsistentRead: true,
  });
  return items
    .map((item) => ({ workspaceId: String(item.workspaceId), workspaceName: String(item.workspaceName) }))
    .sort((a, b) => (a.workspaceId < b.workspaceId ? -1 : 1));
}

/** Puts a new workspace; fails its condition when the id exists. */
export function putWorkspaceItem(workspace: WorkspaceRecord): TransactItem {
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: { ...workspaceKey(workspace.id), ...workspace },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** Claims `name` for `email`; fails its condition when the email already owns a workspace of that name. */
export function claimWorkspaceNameItem(email: string, name: string, workspaceId: string): TransactItem {
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: { ...nameKey(email, name), workspaceId, workspaceName: name },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** Registers the email's first (root) workspace; fails its condition when the email has a registry already. */
export function createEmailRegistryItem(email: string, rootWorkspaceId: string): TransactItem {
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: { ...registryKey(email), workspaceCount: 1, rootWorkspaceId },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** Counts one more workspace for the email; fails its condition at the limit. */
export function countAnotherWorkspaceItem(email: string): TransactItem {
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: registryKey(email),
      UpdateExpression: 'ADD workspaceCount :one',
      ConditionExpression: 'attribute_exists(pk) AND workspaceCount < :max',
      ExpressionAttributeValues: { ':one': 1, ':max': MAX_WORKSPACES_PER_EMAIL },
    },
  };
}

/** Checks, inside a transaction, that a workspace is on a paid plan (fails its condition otherwise). */
export function requirePaidPlanItem(workspaceId: string): TransactItem {
  return {
    ConditionCheck: {
      TableName: TABLE_NAME,
      Key: workspaceKey(workspaceId),
      ConditionExpression: '#plan = :paid',
      ExpressionAttributeNames: { '#plan': 'plan' },
      ExpressionAttributeValues: { ':paid': 'paid' },
    },
  };
}

/** Checks, inside a transaction, that a workspace exists. */
export function requireWorkspaceItem(workspaceId: string): TransactItem {
  return named(
    {
      ConditionCheck: {
        TableName: TABLE_NAME,
        Key: workspaceKey(workspaceId),
        ConditionExpression: 'attribute_exists(pk)',
      },
    },
    () => new NotFoundError('Workspace not found.'),
  );
}

/** Moves a workspace to the paid plan (the operator issued it a production key). */
export function setPaidPlanItem(workspaceId: string): TransactItem {
  return named(
    {
      Update: {
        TableName: TABLE_NAME,
        Key: workspaceKey(workspaceId),
        UpdateExpression: 'SET #plan = :paid',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#plan': 'plan' },
        ExpressionAttributeValues: { ':paid': 'paid' },
      },
    },
    () => new NotFoundError('Workspace not found.'),
  );
}
