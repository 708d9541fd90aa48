import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';

/**
 * The AI SDK's language models this entry drives (P18): the specification versions 3 and 4 of
 * `@ai-sdk/provider`. They differ, for a tool loop, only in how a file's data is written and in V4's
 * `interrupted` finish reason; the rest of the entry writes one mapping with the version as a parameter.
 */
export type AnyLanguageModel = LanguageModelV3 | LanguageModelV4;

/** What `doStream` is called with, for either version. */
export type AnyCallOptions = LanguageModelV3CallOptions | LanguageModelV4CallOptions;

/** One part of `doStream`'s stream, for either version. */
export type AnyStreamPart = LanguageModelV3StreamPart | LanguageModelV4StreamPart;

/** The specification version of a model: what the prompt's file parts look like. */
export type SpecificationVersion = AnyLanguageModel['specificationVersion'];

/** The model's `doStream`, its versions' options and parts joined (the caller builds the options for `version`). */
export function streamOf(model: AnyLanguageModel): (options: AnyCallOptions) => PromiseLike<{ stream: ReadableStream<AnyStreamPart> }> {
  return (options) =>
    model.specificationVersion === 'v3'
      ? model.doStream(options as LanguageModelV3CallOptions)
      : model.doStream(options as LanguageModelV4CallOptions);
}
