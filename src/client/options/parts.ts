/**
 * The parts the client's option schemas are built from: one-line predicates over `z.custom` rather
 * than zod's number, boolean and object schemas (each schema kind is code in every browser bundle
 * of the core), a strict object, "`false` or an object", and a field with a documented default.
 *
 * @module
 */
import * as z from 'zod/mini';

// Leaf values are checked by predicates (`z.custom`), not zod's number and boolean schemas: each
// schema kind is code in every browser bundle of the core, and these checks are one line each.
export const isNumber = (v: unknown): v is number => typeof v === 'number';
export const num = (min: number, max: number, exclusiveMin = false) =>
  z.custom<number>((v) => isNumber(v) && (exclusiveMin ? v > min : v >= min) && v <= max, {
    error: `must be a number ${exclusiveMin ? 'above' : 'from'} ${min} ${exclusiveMin ? 'and up to' : 'to'} ${max}`,
  });
export const int = (min: number, max: number) =>
  z.custom<number>((v) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max, {
    error: `must be an integer from ${min} to ${max}`,
  });
export const intOrInfinity = (min: number) =>
  z.custom<number>(
    (v) => v === Number.POSITIVE_INFINITY || (Number.isInteger(v) && (v as number) >= min),
    { error: `must be an integer from ${min} up, or Infinity` },
  );
// NaN fails the comparison; Infinity passes it.
export const msOrInfinity = () =>
  z.custom<number>((v) => isNumber(v) && v > 0, {
    error: 'must be a number of milliseconds above 0, or Infinity',
  });
export const bool = (error: string) => z.custom<boolean>((v) => typeof v === 'boolean', { error });
export const fn = <T extends (...args: never[]) => unknown>(error: string) =>
  z.custom<T>((v) => typeof v === 'function', { error });
/**
 * What `simple` accepts (`false`, a boolean), or an object `schema` accepts, whose own issues come
 * out at their own paths (`retry.retries`). Not `z.union`: one schema kind less in the core.
 */
export const orObject = <T extends z.ZodMiniType, S>(
  simple: (v: unknown) => v is S,
  schema: T,
  error: string,
) =>
  z
    .custom<S | z.output<T>>((v) => simple(v) || (typeof v === 'object' && v !== null), { error })
    .check(
      z.superRefine((value, ctx) => {
        if (simple(value)) return;
        const result = schema.safeParse(value);
        if (!result.success) for (const issue of result.error.issues) ctx.addIssue({ ...issue });
      }),
    );
export const isFalse = (v: unknown): v is false => v === false;

/**
 * An object of `shape`: each field checked by its schema (its issues at `[field, ...]`), and an
 * unknown key refused, as `z.strictObject` does. A few lines over `z.custom` rather than zod's
 * object schema, which alone costs the core's browser bundle 1.2 kB gzipped (the core, every
 * dependency included, is held to 30 kB: see test/package/bundle-size.test.ts). Its type is zod's
 * own for a strict object of `shape`, so the compile-time checks against the documented types hold.
 */
export function strictObject<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  type Out = z.output<z.ZodMiniObject<Shape, z.core.$strict>>;
  const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  return z.custom<Out>(isObject, { error: 'must be an object' }).check(
    z.superRefine((value, ctx) => {
      const fields = value as Record<string, unknown>;
      const unknownKeys = Object.keys(fields).filter((key) => !Object.hasOwn(shape, key));
      if (unknownKeys.length > 0) {
        ctx.addIssue({ code: 'unrecognized_keys', keys: unknownKeys, input: value, path: [] });
      }
      for (const key of Object.keys(shape)) {
        const result = (shape[key] as z.ZodMiniType).safeParse(fields[key]);
        if (result.success) continue;
        for (const issue of result.error.issues)
          ctx.addIssue({ ...issue, path: [key, ...issue.path] });
      }
    }),
  );
}
/**
 * `schema`, or `undefined`. Typed as zod's optional (so that an object of such fields has them
 * optional), but checked by a predicate and `schema` itself: zod's optional schema kind alone costs
 * the core's browser bundle 0.4 kB gzipped.
 */
export function optional<T extends z.ZodMiniType>(schema: T): z.ZodMiniOptional<T> {
  return z
    .custom(() => true)
    .check(
      z.superRefine((value, ctx) => {
        if (value === undefined) return;
        const result = schema.safeParse(value);
        if (!result.success) for (const issue of result.error.issues) ctx.addIssue({ ...issue });
      }),
    ) as unknown as z.ZodMiniOptional<T>;
}
/** `false` (the part is off) or its options. */
export const offOr = <T extends z.ZodMiniType>(schema: T) =>
  optional(orObject(isFalse, schema, 'must be false or an object'));
/**
 * An optional field whose default is `value`. The schema does not fill it in: a field left out of
 * a `hosts` entry takes the global option, not the default, so the defaults are applied once the
 * layers are merged (`resolve.ts`), from {@link DEFAULTS}, which reads them here.
 */
export function defaulted<T extends z.ZodMiniType>(schema: T, value: z.output<T>) {
  return Object.assign(optional(schema), { defaultValue: value });
}
