import type { Provider } from '../types.js';

/**
 * A real provider's name as the GenAI semantic conventions spell it (`gen_ai.provider.name`) and the model it
 * asks for, as fields of the provider function itself: what a trace needs to know of it is read from it
 * (`traceLoop({ tracer, provider })`, O2), not kept anywhere else.
 */
export interface ProviderIdentity<Name extends string = string> {
  readonly providerName: Name;
  readonly model: string;
}

/** `provider`, naming itself. */
export function named<Name extends string>(provider: Provider, providerName: Name, model: string): Provider & ProviderIdentity<Name> {
  return Object.defineProperties(provider, {
    providerName: { value: providerName, enumerable: true },
    model: { value: model, enumerable: true },
  }) as Provider & ProviderIdentity<Name>;
}

/**
 * The model `value` names as its `model` field, if a string: a named provider's (L1: who answered), an agent
 * tool's progress `details` (O2: its inner model).
 */
export function modelOf(value: unknown): string | undefined {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  const { model } = value as { model?: unknown };
  return typeof model === 'string' ? model : undefined;
}
