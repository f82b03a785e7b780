/**
 * Stands in for `@aws-sdk/credential-provider-node` inside the Lambda bundles (aliased in infra/bundling.ts).
 * In Lambda the execution role's credentials are always in the environment, which is the first place the SDK's
 * default chain looks; the rest of the chain (SSO, profiles, web identity, IMDS and the STS/SSO clients they
 * bring) is never reached there, yet adds ~95 KB to every bundle. Local runs are not bundled and keep the chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { AwsCredentialIdentityProvider } from '@smithy/types';

export const defaultProvider = (_init?: unknown): AwsCredentialIdentityProvider => fromEnv();
