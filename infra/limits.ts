/**
 * Every concurrency and request limit of the deployment, in one place, each with the reason for its number. The
 * stack reads them; nothing else sets a limit.
 *
 * Two kinds of limit, for two different risks:
 * - API Gateway throttles (429 at the gateway, before any function runs) keep a flood from reaching Lambda and the
 *   table at all. The stage default covers every route; a route listed below gets a tighter one of its own.
 * - Reserved concurrency fences a function off: it may never run more than that many copies at once (so slow calls
 *   cannot take the whole account's Lambda concurrency from the other routes), and that many are always kept for it.
 *   Lambda keeps 100 of an account's concurrency unreserved, so the reservations need a quota of their total + 100,
 *   and a new AWS account often has 10, where CloudFormation refuses any reservation. They are therefore opt-in,
 *   `-c reserveConcurrency=true` (the throttles apply either way); `npm run stack-figures` prints their total and the
 *   quota it needs.
 */
import type { RoutePath } from '../shared/routes';

/** Steady requests per second and the bucket size for bursts (API Gateway's token bucket). */
export interface Throttle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

export interface RouteLimits {
  /** Concurrent executions reserved for, and capping, the route's function. */
  readonly reservedConcurrency?: number;
  /** The route's own API Gateway throttle, tighter than the stage default. */
  readonly throttle?: Throttle;
}

/**
 * Every route, unless listed below: 100 requests/s steady, bursts of 200. Far above what one self-hosted
 * deployment's own servers send, and low enough that a runaway client cannot run up thousands of concurrent
 * functions (at ~100 ms per request this is about 10 busy functions, well inside the default quota of 1,000).
 */
export const STAGE_THROTTLE: Throttle = { rateLimit: 100, burstLimit: 200 };

/**
 * The live WebSocket API's stage throttle counts frames in (issue 30 item 5; the arithmetic in full in
 * docs/operating.md, "Live sync: the stage's throttle"). The fixed traffic, echoes gone (the adapter sends only its
 * own presence, and an edit with its caret move as one frame): 1 frame in per keystroke, and N/15 frames a second of
 * presence renewals per idle room of N. So 1,000 frames/s serves 15,000 idle connections, or about 200 people typing
 * fast (5 keystrokes/s) at once, or mixes of the two (1,000 rooms of 5: 333 frames/s of renewals, room for about 130
 * typing fast). It is not raised further because the account's API Gateway throttle (10,000 requests/s per region,
 * shared by every API and by the `@connections` posts) also counts the posts out, N − 1 per keystroke in a room of N:
 * at 1,000 keystrokes/s in rooms of 5 the live path already takes 5,000 of it. Larger rooms meet the account's
 * throttle before this one (bench/live.ts (c)). The burst, 2 s of the rate, absorbs reconnection waves (API
 * Gateway admits 500 new connections/s per account, each sending its first frame or two). `-c liveThrottleRate` and
 * `-c liveThrottleBurst` change it (infra/app.ts). The per-connection frame budget (shared/domain/live/frame-budget.ts)
 * closes one client that floods, before it uses up this throttle for everyone.
 */
export const LIVE_STAGE_THROTTLE: Throttle = { rateLimit: 1000, burstLimit: 2000 };

export const ROUTE_LIMITS = {
  /**
   * Ask AI holds its function for up to 25 s per provider call (shared/core/config.ts), 100-250 times longer than any
   * other route, so without a fence a burst of prompts could occupy most of the account's concurrency and throttle
   * every other route. 20 concurrent calls: at a typical 2-5 s answer that is 4-10 calls/s, at the 25 s worst case
   * 0.8/s. The route throttle (5/s, bursts of 20) turns the excess into quick 429s at the gateway instead of
   * queuing calls that would then fail on the concurrency cap; the burst matches the reserved 20.
   */
  '/v2/rewriter/ask-ai': { reservedConcurrency: 20, throttle: { rateLimit: 5, burstLimit: 20 } },
  /**
   * Create Workspace is public (no credentials) and writes 5-6 items plus a KMS data key per call. The function
   * limits each source IP (WORKSPACE_CREATE_LIMIT_PER_HOUR); this caps the sum over all IPs, which a distributed
   * flood would otherwise get past. Sign-ups are human-paced: 1/s steady is 86,400 a day, bursts of 5 absorb a
   * team signing up together.
   */
  '/v2/workspace/create': { throttle: { rateLimit: 1, burstLimit: 5 } },
} as const satisfies Partial<Record<RoutePath, RouteLimits>>;

/** The limits of the route at `path`; none when it is not listed. */
export function routeLimits(path: string): RouteLimits {
  const found = Object.entries(ROUTE_LIMITS).find(([limitedPath]) => limitedPath === path);
  return found === undefined ? {} : found[1];
}

/**
 * Each stream worker. The table's stream invokes a worker with one batch per shard at a time (parallelization
 * factor 1), so its concurrency is already bounded by the stream's shard count; the reservation adds the other half:
 * a request flood that uses up the account's unreserved concurrency cannot throttle the worker, whose records would
 * otherwise wait (and age towards the stream's 24-hour retention). 5 covers five shards with active migrations at
 * once; a sixth waits its turn (a migration is resumable, nothing is lost).
 */
export const WORKER_RESERVED_CONCURRENCY = 5;
