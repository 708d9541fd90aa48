/**
 * The Standard Schema interface (standardschema.dev), version 1: the `~standard` property that zod 4,
 * valibot and arktype put on their validators, so that a library can validate with any of them without
 * depending on one (R24). Written out here, as the spec invites, so the package adds no runtime dependency.
 *
 * ```ts
 * // a validator by hand: a city name, trimmed
 * const city: StandardSchemaV1<unknown, { city: string }> = {
 *   '~standard': {
 *     version: 1,
 *     vendor: 'by-hand',
 *     validate: (value) =>
 *       typeof (value as { city?: unknown })?.city === 'string'
 *         ? { value: { city: (value as { city: string }).city.trim() } }
 *         : { issues: [{ message: 'Required', path: ['city'] }] },
 *   },
 * };
 * ```
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>;
}

export declare namespace StandardSchemaV1 {
  /** What a validator carries under `~standard`. */
  export interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    /** Synchronous or not, as the validator likes: the loop awaits a Promise (R24). */
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>;
    /** Types only, for inference (`InferInput`, `InferOutput`); never there at run time. */
    readonly types?: Types<Input, Output> | undefined;
  }

  export type Result<Output> = SuccessResult<Output> | FailureResult;

  export interface SuccessResult<Output> {
    readonly value: Output;
    readonly issues?: undefined;
  }

  export interface FailureResult {
    readonly issues: ReadonlyArray<Issue>;
  }

  /** One problem with the value: `path` leads from the root to where it is (absent or empty: the root). */
  export interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined;
  }

  export interface PathSegment {
    readonly key: PropertyKey;
  }

  export interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }

  export type InferInput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['input'];
  export type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['output'];
}

/**
 * Standard JSON Schema (standardschema.dev/json-schema): a validator that can also describe itself as
 * JSON Schema. zod 4 implements it; the registry uses `jsonSchema.input(...)` as what the model is told
 * when a `schema` tool gives no `inputSchema` of its own (R24).
 */
export interface StandardJSONSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardJSONSchemaV1.Props<Input, Output>;
}

export declare namespace StandardJSONSchemaV1 {
  export interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: StandardSchemaV1.Types<Input, Output> | undefined;
    readonly jsonSchema: Converter;
  }

  export interface Converter {
    /** The JSON Schema of what the validator accepts: what a model must send. */
    readonly input: (options: Options) => Record<string, unknown>;
    readonly output: (options: Options) => Record<string, unknown>;
  }

  // `{} & string`: future targets, without losing the completion of the known ones
  // eslint-disable-next-line @typescript-eslint/ban-types
  export type Target = 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | ({} & string);

  export interface Options {
    readonly target: Target;
    readonly libraryOptions?: Record<string, unknown> | undefined;
  }
}
