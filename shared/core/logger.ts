/**
 * The structured JSON logger (Powertools), one per process. The middleware adds the request id and path to
 * every line of a request. Never log request bodies, headers or secrets: log ids and outcomes.
 */
import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'collab-backend' });
