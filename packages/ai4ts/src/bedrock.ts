/** ai4ts/bedrock: the Amazon Bedrock preset (`bedrock({ region })`) and AWS credentials, from @ai4ts/core/bedrock. */
export * from '@ai4ts/core/bedrock';
