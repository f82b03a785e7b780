/**
 * The workers: functions that the table's stream invokes rather than a route (docs/design.md "Work after the
 * response"). The CDK stack makes one function and one filtered event source per entry; the local stack polls
 * DynamoDB Local's stream and calls the same handlers. Like the route table, this module imports nothing at
 * runtime so that `infra/` can read it.
 */

import type { AccessDeclaration } from './grants';

/** What the function may touch (table, indexes, KMS): see shared/grants.ts. */
export interface Worker extends AccessDeclaration {
  /** Construct id in the stack. */
  readonly id: string;
  /** Handler file relative to the project root; it exports `handler` (a DynamoDB stream handler). */
  readonly entry: string;
  /**
   * The stream records it is woken for: items whose `recordType` attribute has this value, with `status` one of
   * these, as written (INSERT or MODIFY). The event source filters on it in AWS; the handler checks it again.
   */
  readonly trigger: { readonly recordType: string; readonly statuses: readonly string[] };
  readonly summary: string;
}

export const documentMigrationWorker = {
  id: 'DocumentMigrationWorker',
  entry: 'functions/workers/document-migration.ts',
  trigger: { recordType: 'documentMigration', statuses: ['pending', 'in_progress'] },
  table: 'write',
  // Per document: notification settings (gsi1); grants, notifications, activities, recordings (gsi2); the
  // recipients of each notification it moves (gsi3).
  indexes: ['gsi1', 'gsi2', 'gsi3'],
  summary: 'Moves a document and everything of it to its new id (document migration).',
} as const satisfies Worker;

export const workers: readonly Worker[] = [documentMigrationWorker];
