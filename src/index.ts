export type {
  AfterToolCall,
  AgentMessage,
  ApprovalAnswer,
  ApprovalDecision,
  Attachment,
  AssistantMessage,
  BeforeToolCall,
  Compaction,
  ConversationEvent,
  HookAnswer,
  HookContext,
  JsonSchemaObject,
  LoopEndReason,
  LoopEvent,
  LoopEventOf,
  PrepareTurn,
  PromptDroppedEvent,
  Provider,
  ProviderEvent,
  ProviderInput,
  ProviderFailure,
  StopReason,
  SystemMessage,
  TokenLedger,
  Tool,
  ToolApprovals,
  ToolCall,
  ToolContext,
  ToolDecision,
  ToolOutput,
  ToolResultMessage,
  ToolReturn,
  ToolSpec,
  Usage,
  UserMessage,
  UserMessageEvent,
} from './types.js';
export { runEventedToolLoop } from './loop/run-evented-tool-loop.js';
export { conversation } from './conversation/conversation.js';
export type { ConversationOptions, ConversationPolicy } from './conversation/conversation.js';
export { MAX_TURNS } from './loop/loop-options.js';
export type { LoopOptions } from './loop/loop-options.js';
export type { OutputOf, OutputSpec } from './loop/output-spec.js';
export { expandLast } from './loop/expand-last.js';
export { ToolRegistry } from './tools/tool-registry.js';
export { toolProgress } from './tools/tool-progress.js';
export type { ToolProgressValue } from './types.js';
export { defineTool } from './tools/define-tool.js';
export { agentTool } from './tools/agent-tool.js';
export type { ToolDefinition } from './tools/define-tool.js';
export type { StandardJSONSchemaV1, StandardSchemaV1 } from './types.js';
export { scriptedProvider } from './providers/scripted-provider.js';
export type { ScriptedProvider, ScriptedTurn } from './providers/scripted-provider.js';
export { checkProviderEvents, ProviderProtocolError } from './loop/event-order.js';
export { openAIChatProvider } from './providers/openai.js';
export type { OpenAIChatProviderOptions } from './providers/openai.js';
export { openAIResponsesProvider } from './providers/openai-responses.js';
export type { OpenAIResponsesProviderOptions, OpenAISettings } from './providers/openai-responses.js';
export { anthropicProvider } from './providers/anthropic.js';
export type { AnthropicProviderOptions } from './providers/anthropic.js';
export { geminiProvider } from './providers/gemini.js';
export type { GeminiProviderOptions } from './providers/gemini.js';
export type { FetchLike, HttpProviderOptions, ToolChoice } from './providers/http/settings.js';
export { initialViewModel, reduceViewModel, toViewModel } from './conversation/view-model.js';
export type { LoopViewModel, ToolView } from './conversation/view-model.js';
export { withFallback, failsOver } from './limits/with-fallback.js';
export type { FallbackOptions } from './limits/with-fallback.js';
export { createLimiter } from './limits/limiter.js';
export type { Limiter, LimiterOptions, LimiterState } from './limits/limiter.js';
export { limited } from './limits/limited.js';
export type { LimitedOptions } from './limits/limited.js';
export { TokenBudget } from './limits/token-budget.js';
