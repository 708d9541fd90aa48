export type {
  AgentMessage,
  AssistantMessage,
  LoopEndReason,
  LoopEvent,
  LoopEventOf,
  LoopOptions,
  Provider,
  ProviderEvent,
  ProviderInput,
  StopReason,
  Tool,
  ToolCall,
  ToolContext,
  ToolOutput,
  ToolResultMessage,
  ToolReturn,
  ToolSpec,
  UserMessage,
} from './types.js';
export { MAX_TURNS, runEventedToolLoop } from './run-evented-tool-loop.js';
export { ToolRegistry } from './tool-registry.js';
export { scriptedProvider } from './scripted-provider.js';
export type { ScriptedProvider, ScriptedTurn } from './scripted-provider.js';
export { checkProviderEvents, ProviderProtocolError } from './check-provider-events.js';
export { openAIChatProvider } from './providers/openai.js';
export type { OpenAIChatProviderOptions } from './providers/openai.js';
export { anthropicProvider } from './providers/anthropic.js';
export type { AnthropicProviderOptions } from './providers/anthropic.js';
export type { FetchLike, HttpProviderOptions } from './providers/transport.js';
