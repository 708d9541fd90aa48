/**
 * `rx-tool-loop/ai-sdk` (P18): any AI SDK language model as a provider. Its types come from the optional peer
 * `@ai-sdk/provider`; at run time the entry needs nothing of it (the model is what the application made).
 */
export { languageModelProvider } from './language-model-provider.js';
export type { LanguageModelProviderOptions } from './language-model-provider.js';
export type { AnyLanguageModel } from './language-model.js';
export type { ReplyPart, ProviderRecords } from './reply-parts.js';
