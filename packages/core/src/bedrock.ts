/**
 * @ai4ts/core/bedrock: the Amazon Bedrock preset and AWS SigV4 credentials. A subpath of its own, so that apps which
 * never reach AWS never bundle the signer (aws4fetch).
 */
export { type AwsCredentialSource, type AwsCredentials, AwsSigner } from './transport/aws.js';
export { BEDROCK_ANTHROPIC_VERSION, type BedrockOptions, bedrock } from './transport/bedrock.js';
