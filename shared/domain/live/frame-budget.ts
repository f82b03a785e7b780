/**
 * Each live connection's budget of frames (decisions §13 "Nothing lost, nothing stale": each connection is
 * rate-limited, well above fast typing, so one client cannot use up the stage's throttle for everyone). A token bucket
 * per connection: FRAME_BURST frames at once, refilled at FRAMES_PER_SECOND. Fast typing through the stock provider is
 * about 30 frames a second (an update and a caret move per keystroke), a 1 MiB message 47 chunks at once.
 *
 * The buckets live in the process, never in the table (a write per frame would double a frame's cost): the local
 * stack's one process holds the limit exactly; in AWS each warm instance of the message function holds its own, so a
 * connection whose frames are spread over n instances gets up to n times the budget (API Gateway hands a
 * connection's frames to whichever instance is free; a flooding client keeps several busy). The stage's own throttle
 * (infra/limits.ts) stays the hard limit; this one closes the flooding connection, which the stage's cannot.
 */

/** Frames a connection may send at once. */
export const FRAME_BURST = 200;
/** Frames a second a connection may send, sustained. */
export const FRAMES_PER_SECOND = 100;
/** What the connection is told, in the auth message, when it is closed for it; the adapter reports close code 1013. */
export const TOO_MANY_MESSAGES = 'Too many messages.';

/** Buckets kept per process: the newest connections' (a closed connection's bucket ages out). */
const MAX_BUCKETS = 10_000;
const buckets = new Map<string, { tokens: number; at: number; exceeded: boolean }>();

/**
 * Takes one frame from the connection's budget: `allowed`; `exceeded` the first time it has none left (the caller
 * closes the connection); `dropped` for every frame after that (the connection is being closed: nothing more to do).
 */
export function takeFrame(connectionId: string, now = Date.now()): 'allowed' | 'exceeded' | 'dropped' {
  const bucket = buckets.get(connectionId) ?? { tokens: FRAME_BURST, at: now, exceeded: false };
  buckets.delete(connectionId);
  const tokens = Math.min(FRAME_BURST, bucket.tokens + ((now - bucket.at) / 1000) * FRAMES_PER_SECOND);
  const allowed = !bucket.exceeded && tokens >= 1;
  buckets.set(connectionId, { tokens: allowed ? tokens - 1 : tokens, at: now, exceeded: !allowed });
  if (buckets.size > MAX_BUCKETS) buckets.delete(buckets.keys().next().value as string);
  if (allowed) return 'allowed';
  return bucket.exceeded ? 'dropped' : 'exceeded';
}
