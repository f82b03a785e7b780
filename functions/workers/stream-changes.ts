/**
 * The changes reader (docs/architecture.md "The stream and the delivery pipeline"): one event source mapping on the
 * table's stream for every consumer of short work (webhook events and emails, profile copies, CRDT log compaction, version checks, live revocation). Each record is
 * decoded once and handed to the consumers that declared it (shared/domain/stream/dispatch.ts).
 */
import { streamChangesWorker } from '../../shared/workers';
import { consume as publishEvents } from '../../shared/domain/stream/webhook-events';
import { consume as bringCopiesInStep } from '../../shared/domain/stream/profile-copies';
import { consume as compactCrdtLogs } from '../../shared/domain/stream/crdt-compaction';
import { consume as checkCrdtVersions } from '../../shared/domain/stream/crdt-versions';
import { consume as revokeLiveAccess } from '../../shared/domain/stream/live-revocation';
import { streamHandler, type ConsumersOf } from '../../shared/domain/stream/dispatch';

/** Each declared consumer's code, by id: declaring a consumer in shared/workers.ts makes the type ask for it here. */
export const consumers: ConsumersOf<typeof streamChangesWorker> = {
  WebhookEvents: publishEvents,
  ProfileCopies: bringCopiesInStep,
  CrdtCompaction: compactCrdtLogs,
  CrdtVersions: checkCrdtVersions,
  LiveRevocation: revokeLiveAccess,
};

export const handler = streamHandler(streamChangesWorker, consumers);
